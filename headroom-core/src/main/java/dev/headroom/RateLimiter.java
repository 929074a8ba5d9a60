package dev.headroom;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * The entry point: decides requests against quota policies, all policies of a request at once.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.of(InMemoryStore.builder().build());
 * Decision d = limiter.acquire(List.of(
 *     Acquisition.of(burst, PartitionKey.of(clientIp)),
 *     Acquisition.of(daily, PartitionKey.of(apiKeyHash))));
 * if (d.allowed()) {
 *   try { serve(); } finally { limiter.release(d); }
 * } else {
 *   refuse(d.retryAfterSeconds(), d.mostConstraining());
 * }
 * }</pre>
 *
 * <p>All or nothing: a request refused by one policy consumes nothing from the others. Thread-safe.
 */
public final class RateLimiter {

  private final Store store;

  private RateLimiter(Store store) {
    this.store = Objects.requireNonNull(store, "store");
  }

  /** A limiter deciding through the given store. */
  public static RateLimiter of(Store store) {
    return new RateLimiter(store);
  }

  /** The store behind this limiter. */
  public Store store() {
    return store;
  }

  /**
   * Decides every acquisition at once.
   *
   * @throws IllegalArgumentException if the list is empty or names one policy and partition twice
   * @throws StoreException if the store cannot decide
   */
  public Decision acquire(List<Acquisition> acquisitions) {
    return store.acquire(validate(acquisitions));
  }

  /** One unit of one policy in one partition. */
  public Decision acquire(QuotaPolicy policy, PartitionKey key) {
    return store.acquire(List.of(Acquisition.of(policy, key)));
  }

  /**
   * One unit of one policy in one partition, answering only whether it was allowed: the same
   * decision, with the same effect on the quota, as {@code acquire(policy, key).allowed()}, for
   * callers that do not report the service limit (no {@code RateLimit} headers, no Retry-After).
   * With the in-memory store and a token bucket it allocates nothing.
   *
   * @throws IllegalArgumentException for a {@link Algorithm#CONCURRENCY} policy: its lease must be
   *     released, so use {@link #acquire(QuotaPolicy, PartitionKey)} and {@link #release(Decision)}
   * @throws StoreException if the store cannot decide
   */
  public boolean tryAcquire(QuotaPolicy policy, PartitionKey key) {
    return store.tryAcquire(Objects.requireNonNull(policy, "policy"), Objects.requireNonNull(key, "key"), 1);
  }

  /** Decides without blocking the caller's thread (a remote store answers later). */
  public CompletionStage<Decision> acquireAsync(List<Acquisition> acquisitions) {
    return store.acquireAsync(validate(acquisitions));
  }

  /** Releases the concurrency leases of a decision; safe to call for any decision, and twice. */
  public void release(Decision decision) {
    for (Lease lease : decision.leases()) {
      store.release(lease);
    }
  }

  /**
   * Charges units known only after the fact (content bytes actually sent). The balance may go into
   * debt; later requests in the partition wait it out.
   */
  public void charge(QuotaPolicy policy, PartitionKey key, long cost) {
    store.charge(Acquisition.of(policy, key, cost));
  }

  private static List<Acquisition> validate(List<Acquisition> acquisitions) {
    if (acquisitions == null || acquisitions.isEmpty()) {
      throw new IllegalArgumentException("acquisitions: expected at least one policy to decide, got none");
    }
    if (acquisitions.size() > 1) {
      Set<String> seen = new HashSet<>();
      for (Acquisition a : acquisitions) {
        if (!seen.add(a.policy().name() + '\u0000' + a.key().value())) {
          throw new IllegalArgumentException("acquisitions: policy '" + a.policy().name()
              + "' appears twice for partition '" + a.key() + "'; expected each policy once per partition");
        }
      }
    }
    return acquisitions;
  }
}
