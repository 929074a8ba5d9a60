package dev.headroom;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The entry point: decides requests against quota policies, all policies of a request at once.
 *
 * <p>The shortest use, in memory with the defaults: at most 10 requests a minute per client.
 *
 * <pre>{@code
 * QuotaLimiter limiter = QuotaLimiter.inMemory();
 * boolean allowed = limiter.tryAcquire(QuotaPolicy.builder("per-client").quota(10).window(Duration.ofMinutes(1)).build(), PartitionKey.of(clientId));
 * }</pre>
 *
 * <p>With several policies, concurrency leases and the reasons of a refusal:
 *
 * <pre>{@code
 * QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().build());
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
 *
 * <p>Named for what it limits, the quota of a policy (draft-ietf-httpapi-ratelimit-headers-09
 * section 3.1), and so that it does not clash with Guava's or Resilience4j's {@code RateLimiter}
 * in a file that uses either.
 */
public final class QuotaLimiter {

  private final Store store;

  private QuotaLimiter(Store store) {
    this.store = Objects.requireNonNull(store, "store");
  }

  /** A limiter deciding through the given store. */
  public static QuotaLimiter of(Store store) {
    return new QuotaLimiter(store);
  }

  /**
   * A limiter deciding in this process's memory: an {@link InMemoryStore} with its defaults (the
   * system ticker, at most {@link InMemoryStore#DEFAULT_MAX_KEYS} partitions tracked). For a store
   * shared by several processes, or other settings, use {@link #of(Store)}.
   */
  public static QuotaLimiter inMemory() {
    return new QuotaLimiter(InMemoryStore.builder().build());
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
   * With the in-memory store it allocates nothing for a token bucket, and for a fixed window
   * only the new state when it admits.
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

  /**
   * {@link #release} without blocking the caller's thread: completes when every lease of the
   * decision has been handed back (at once for a decision without leases).
   */
  public CompletionStage<Void> releaseAsync(Decision decision) {
    List<Lease> leases = decision.leases();
    if (leases.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    if (leases.size() == 1) {
      return store.releaseAsync(leases.get(0));
    }
    CompletableFuture<?>[] all = new CompletableFuture<?>[leases.size()];
    for (int i = 0; i < all.length; i++) {
      all[i] = store.releaseAsync(leases.get(i)).toCompletableFuture();
    }
    return CompletableFuture.allOf(all);
  }

  /** {@link #charge} without blocking the caller's thread. */
  public CompletionStage<Void> chargeAsync(QuotaPolicy policy, PartitionKey key, long cost) {
    return store.chargeAsync(Acquisition.of(policy, key, cost));
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
