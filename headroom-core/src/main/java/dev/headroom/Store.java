package dev.headroom;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where quota state lives: the service provider interface behind {@link QuotaLimiter}.
 *
 * <p>The unit of work is a whole request: {@link #acquire(List)} receives every policy that applies,
 * so that a remote store can decide them all in one round trip (one Lua script in Redis), and must
 * decide them all or nothing: when any policy refuses, no policy consumes anything.
 *
 * <p>A store reads time from its own source ({@link Ticker} for the in-memory store, Redis
 * {@code TIME} for Redis) and applies the algorithms exactly as documented in
 * the class comments of {@code Gcra}, {@code FixedWindow}, {@code SlidingWindow} and
 * {@code Concurrency} in {@code dev.headroom.internal}. Acquiring {@code n} units at once is how a node leases
 * a slice of quota to spend locally (ARCHITECTURE.md, scale path step 4), so leasing is a store, not a
 * rewrite.
 *
 * <p>Implementations are thread-safe.
 */
public interface Store extends AutoCloseable {

  /**
   * Decides every acquisition at once, all or nothing.
   *
   * @param acquisitions one or more; the same policy and partition should not appear twice
   * @return one outcome per acquisition, in order
   * @throws IllegalArgumentException if the list is empty
   * @throws StoreException if the store cannot decide (a remote store is unreachable)
   */
  Decision acquire(List<Acquisition> acquisitions);

  /**
   * Decides every acquisition at once without blocking the caller's thread. The default runs
   * {@link #acquire(List)} in the caller's thread, which is right for stores that never block.
   */
  default CompletionStage<Decision> acquireAsync(List<Acquisition> acquisitions) {
    try {
      return CompletableFuture.completedFuture(acquire(acquisitions));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Decides one policy for one partition and answers only whether it allowed: the same decision as
   * {@code acquire(List.of(Acquisition.of(policy, key, cost))).allowed()}, with the same effect on
   * the quota, for callers that do not report the service limit. The default does exactly that; a
   * store may answer without building a {@link Decision} (the in-memory store allocates nothing
   * for a token bucket).
   *
   * @throws IllegalArgumentException for a {@link Algorithm#CONCURRENCY} policy, whose lease must be
   *     handed back through {@link #acquire(List)}, or a cost outside 0 to {@link QuotaPolicy#MAX_QUOTA}
   * @throws StoreException if the store cannot decide
   */
  default boolean tryAcquire(QuotaPolicy policy, PartitionKey key, long cost) {
    if (policy.algorithm() == Algorithm.CONCURRENCY) {
      throw new IllegalArgumentException("policy '" + policy.name()
          + "': tryAcquire cannot hand back a concurrency lease; expected acquire(...) for "
          + Algorithm.CONCURRENCY.token() + " policies");
    }
    return acquire(List.of(Acquisition.of(policy, key, cost))).allowed();
  }

  /**
   * Charges units after the fact, whatever the balance: the cost of a request known only at its
   * end (content bytes sent). The balance may go into debt; later requests wait it out.
   */
  void charge(Acquisition acquisition);

  /**
   * Gives back units acquired earlier and not used (a refund after a partial failure, or an
   * unused slice of a lease). Never raises the balance above a whole quota.
   */
  void refund(Acquisition acquisition);

  /** Gives back a concurrency lease. Releasing a lease twice, or after it timed out, does nothing. */
  void release(Lease lease);

  /**
   * {@link #charge} without blocking the caller's thread: for front ends on an event loop, which
   * must never wait on a remote store. The stage completes when the charge is applied (or, for a
   * best-effort store, given up on); it fails only as {@link #charge} would throw. The default runs
   * {@link #charge} in the caller's thread, which is right for stores that never block.
   */
  default CompletionStage<Void> chargeAsync(Acquisition acquisition) {
    return now(() -> charge(acquisition));
  }

  /** {@link #refund} without blocking the caller's thread; the default as {@link #chargeAsync}. */
  default CompletionStage<Void> refundAsync(Acquisition acquisition) {
    return now(() -> refund(acquisition));
  }

  /** {@link #release} without blocking the caller's thread; the default as {@link #chargeAsync}. */
  default CompletionStage<Void> releaseAsync(Lease lease) {
    return now(() -> release(lease));
  }

  /** Runs {@code update} here: a completed stage, or a failed one with what it threw. */
  private static CompletionStage<Void> now(Runnable update) {
    try {
      update.run();
      return CompletableFuture.completedFuture(null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Releases what the store holds (connections, threads); the default does nothing. */
  @Override
  default void close() {}
}
