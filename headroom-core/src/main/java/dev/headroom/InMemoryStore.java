package dev.headroom;

import dev.headroom.internal.LocalStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@link Store} of one process: lock-free, bounded, no threads of its own.
 *
 * <p>Decisions on tracked keys are lock-free (one probe of an open-addressing table and one
 * compare-and-set per policy; see {@link QuotaLimiter#tryAcquire} for the path that allocates nothing).
 * Memory is bounded by {@link Builder#maxKeys(long)}. At a full store, a new key of a rate policy
 * (token bucket, fixed or sliding window) is first kept out: its decision is made from a
 * fixed-size sketch of the policy's forgotten use, and what it used is folded back in; it enters
 * the store when it comes back (an admission filter, as TinyLFU's doorkeeper), so a flood of
 * one-request keys stores nothing. A key that enters takes the place of keys at rest (a full
 * bucket, a past window, no live lease: indistinguishable from a new key) first; when a sample of
 * keys holds none, of the least consumed live key of the sample, whose use is folded into the
 * sketch. Keys of concurrency policies always enter (a lease must stay releasable).
 *
 * <p><b>A flood of distinct keys buys no quota.</b> A key kept out, or returning after eviction,
 * starts from what the sketch remembers of it. A caller refused at its quota stays refused until
 * its use expires, however many keys flood the store: refused at 50 of 50 in a one-hour window, it
 * stays refused until that window ends; a token bucket's TAT comes back no earlier; leases held
 * stay held until they time out. A caller that stays in the store keeps its exact count. A caller
 * below its quota that was evicted or kept out comes back with its own use, unless all four of
 * its sketch cells were taken by keys at least as heavy (about 5 in 100 million with 1,000 such
 * keys at the default bound); then it starts at rest. A collision can also make a key start with
 * more use than its own: refused early, never admitted extra. The sketch takes fixed memory per
 * policy that evicts or keeps out a key (8 MiB at most at the default bound; {@code UseSketch}
 * has the sizes and odds), and its doorkeeper 4 MiB at most.
 *
 * <p>{@link #trackedKeys()}, {@link #evictedLiveKeys()}, {@link #evictedRestingKeys()},
 * {@link #restoredKeys()} and {@link #sketchDecisions()} count what the bound did.
 *
 * <pre>{@code
 * Store store = InMemoryStore.builder().maxKeys(1_000_000).build();
 * }</pre>
 */
public final class InMemoryStore implements Store, StoreHealth.Source {

  /** The default bound on tracked keys (policy and partition pairs). */
  public static final long DEFAULT_MAX_KEYS = 1_000_000;

  private final LocalStore engine;
  private final long maxKeys;

  private InMemoryStore(Builder b) {
    this.engine = new LocalStore(b.ticker, b.maxKeys);
    this.maxKeys = b.maxKeys;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public Decision acquire(List<Acquisition> acquisitions) {
    return engine.acquire(acquisitions);
  }

  /** Allocates nothing for a token bucket: one probe and one compare-and-set. */
  @Override
  public boolean tryAcquire(QuotaPolicy policy, PartitionKey key, long cost) {
    if (cost < 0 || cost > QuotaPolicy.MAX_QUOTA) {
      throw new IllegalArgumentException("cost: expected an integer from 0 to " + QuotaPolicy.MAX_QUOTA
          + " for policy '" + policy.name() + "', got " + cost);
    }
    return engine.tryAcquire(policy, key, cost);
  }

  @Override
  public void charge(Acquisition acquisition) {
    engine.charge(acquisition);
  }

  @Override
  public void refund(Acquisition acquisition) {
    engine.refund(acquisition);
  }

  @Override
  public void release(Lease lease) {
    engine.release(lease);
  }

  /**
   * How many policy and partition pairs are in the store now, each with its exact state; never
   * above the bound. A key kept out of a full store (decided from the sketch) is not counted.
   */
  public long trackedKeys() {
    return engine.size();
  }

  /**
   * How many live keys were evicted to make room for a key entering a full store; each one's use
   * was remembered. A key kept out evicts nothing, so under a flood of one-request keys this
   * stays near zero.
   */
  public long evictedLiveKeys() {
    return engine.evictedLive();
  }

  /** How many keys at rest (equal to absent keys) were forgotten to make room or by a sweep. */
  public long evictedRestingKeys() {
    return engine.evictedResting();
  }

  /** How many keys entered the store starting from the use remembered of them, not at rest. */
  public long restoredKeys() {
    return engine.restored();
  }

  /**
   * How many decisions (and charges) were made from the sketch for keys a full store kept out:
   * one per call of a key at a full store that did not come back lately. Each folded the key's
   * use back into the sketch.
   */
  public long sketchDecisions() {
    return engine.sketchDecisions();
  }

  /** The bound on tracked keys this store was built with. */
  public long maxKeys() {
    return maxKeys;
  }

  /** Always {@link StoreHealth.Status#UP}, with the keys tracked and their bound: this store always decides. */
  @Override
  public StoreHealth health(boolean refuses) {
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("type", "in-memory");
    details.put("keys", trackedKeys());
    details.put("maxKeys", maxKeys);
    return new StoreHealth(StoreHealth.Status.UP, false, details);
  }

  /** Builds an {@link InMemoryStore}. */
  public static final class Builder {
    private Ticker ticker = Ticker.system();
    private long maxKeys = DEFAULT_MAX_KEYS;

    private Builder() {}

    /** The source of time; exists so that tests can drive time with {@link ManualTicker}. */
    public Builder ticker(Ticker ticker) {
      if (ticker == null) {
        throw new IllegalArgumentException("ticker: expected a Ticker, got null");
      }
      this.ticker = ticker;
      return this;
    }

    /** The most policy and partition pairs tracked at once; at least 1. */
    public Builder maxKeys(long maxKeys) {
      if (maxKeys < 1) {
        throw new IllegalArgumentException("maxKeys: expected at least 1, got " + maxKeys);
      }
      this.maxKeys = maxKeys;
      return this;
    }

    public InMemoryStore build() {
      return new InMemoryStore(this);
    }
  }
}
