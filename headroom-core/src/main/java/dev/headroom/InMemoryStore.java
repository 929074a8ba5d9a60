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
 * <p><b>Memory once the keys are gone.</b> Keys at rest are swept as new keys enter, but the tables
 * keep the size their busiest time gave them. A store that stands in for another while it is away
 * (the Redis store's fallback) stops seeing new keys when the other returns: {@link #forgetAll()}
 * then gives back everything it holds.
 *
 * <pre>{@code
 * Store store = InMemoryStore.builder().maxKeys(1_000_000).build();
 * }</pre>
 */
public final class InMemoryStore implements Store, StoreHealth.Source {

  /** The default bound on tracked keys (policy and partition pairs). */
  public static final long DEFAULT_MAX_KEYS = 1_000_000;

  /**
   * The tables now, and what the tables {@link #forgetAll()} replaced had counted (so that no
   * counter goes back): one volatile value, replaced whole, never changed.
   */
  private volatile Engine current;
  private final long maxKeys;

  private InMemoryStore(Builder b) {
    this.current = new Engine(new LocalStore(b.ticker, b.maxKeys), 0, 0, 0, 0);
    this.maxKeys = b.maxKeys;
  }

  /**
   * Forgets every key and gives back the memory of the tables, the sketches and the doorkeeper:
   * the store starts again as if built now, except that its counters go on from where they were
   * and its lease ids never repeat one it handed out (a lease from before is released as one it
   * no longer holds: nothing happens).
   *
   * <p>For a store whose decisions stopped mattering: a fallback whose primary store decides again,
   * past the longest window it decided. A decision in flight on another thread while this runs may
   * be made on the tables forgotten, and is lost with them.
   */
  public synchronized void forgetAll() {
    Engine was = current;
    LocalStore old = was.tables;
    current = new Engine(old.successor(), was.evictedLive + old.evictedLive(),
        was.evictedResting + old.evictedResting(), was.restored + old.restored(),
        was.sketchDecisions + old.sketchDecisions());
  }

  /** The tables, and the counts of the tables they replaced. */
  private record Engine(LocalStore tables, long evictedLive, long evictedResting, long restored,
      long sketchDecisions) {}

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public Decision acquire(List<Acquisition> acquisitions) {
    return current.tables.acquire(acquisitions);
  }

  /** Allocates nothing for a token bucket: one probe and one compare-and-set. */
  @Override
  public boolean tryAcquire(QuotaPolicy policy, PartitionKey key, long cost) {
    if (cost < 0 || cost > QuotaPolicy.MAX_QUOTA) {
      throw new IllegalArgumentException("cost: expected an integer from 0 to " + QuotaPolicy.MAX_QUOTA
          + " for policy '" + policy.name() + "', got " + cost);
    }
    return current.tables.tryAcquire(policy, key, cost);
  }

  @Override
  public void charge(Acquisition acquisition) {
    current.tables.charge(acquisition);
  }

  @Override
  public void refund(Acquisition acquisition) {
    current.tables.refund(acquisition);
  }

  @Override
  public void release(Lease lease) {
    current.tables.release(lease);
  }

  /**
   * How many policy and partition pairs are in the store now, each with its exact state; never
   * above the bound. A key kept out of a full store (decided from the sketch) is not counted.
   */
  public long trackedKeys() {
    return current.tables.size();
  }

  /**
   * How many live keys were evicted to make room for a key entering a full store; each one's use
   * was remembered. A key kept out evicts nothing, so under a flood of one-request keys this
   * stays near zero.
   */
  public long evictedLiveKeys() {
    Engine e = current;
    return e.evictedLive + e.tables.evictedLive();
  }

  /** How many keys at rest (equal to absent keys) were forgotten to make room or by a sweep. */
  public long evictedRestingKeys() {
    Engine e = current;
    return e.evictedResting + e.tables.evictedResting();
  }

  /** How many keys entered the store starting from the use remembered of them, not at rest. */
  public long restoredKeys() {
    Engine e = current;
    return e.restored + e.tables.restored();
  }

  /**
   * How many decisions (and charges) were made from the sketch for keys a full store kept out:
   * one per call of a key at a full store that did not come back lately. Each folded the key's
   * use back into the sketch.
   */
  public long sketchDecisions() {
    Engine e = current;
    return e.sketchDecisions + e.tables.sketchDecisions();
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
