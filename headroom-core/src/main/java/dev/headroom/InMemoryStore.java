package dev.headroom;

import dev.headroom.internal.LocalStore;
import java.util.List;

/**
 * The {@link Store} of one process: lock-free, bounded, no threads of its own.
 *
 * <p>Decisions on tracked keys are lock-free (one probe of an open-addressing table and one
 * compare-and-set per policy; see {@link RateLimiter#tryAcquire} for the path that allocates nothing).
 * Memory is bounded by {@link Builder#maxKeys(long)}: keys whose state has expired are forgotten
 * (an expired key is indistinguishable from a new one), and when the store is full of live keys a
 * new key evicts the live key closest to expiry among a small sample. The evicted partition forgets
 * its count and may be admitted up to one more quota: that is the documented price of a flood of
 * distinct keys, in exchange for memory that never grows beyond the bound. Expiry is judged on the
 * sample, so a few live keys can be evicted while expired keys remain elsewhere in the store;
 * {@link #evictedLiveKeys()} counts every live eviction.
 *
 * <pre>{@code
 * Store store = InMemoryStore.builder().maxKeys(1_000_000).build();
 * }</pre>
 */
public final class InMemoryStore implements Store {

  /** The default bound on tracked keys (policy and partition pairs). */
  public static final long DEFAULT_MAX_KEYS = 1_000_000;

  private final LocalStore engine;

  private InMemoryStore(Builder b) {
    this.engine = new LocalStore(b.ticker, b.maxKeys);
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

  /** How many policy and partition pairs are tracked now; never above the bound. */
  public long trackedKeys() {
    return engine.size();
  }

  /** How many live keys were evicted because the store was full (each may over-admit once). */
  public long evictedLiveKeys() {
    return engine.evictedLive();
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
