package dev.headroom.redis;

import dev.headroom.Acquisition;
import dev.headroom.Lease;
import dev.headroom.redis.internal.Deadlines;
import dev.headroom.redis.internal.DecisionCalls;
import dev.headroom.redis.internal.DecisionScript;
import dev.headroom.redis.internal.RefusalMemory;
import dev.headroom.redis.internal.WriteStamp;
import io.netty.util.Timer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link RedisStore}'s best-effort updates: charges, refunds and leases given back, each blocking
 * or not ({@link AsyncUpdate}). An update is one call, never coalesced, waited on up to the
 * decision deadline; a failure or a passed deadline counts a failure of the store and, with
 * {@link FailurePolicy#FALLBACK}, applies the update to the local store instead. Nothing throws:
 * a caller settling a request cannot do anything better with an error. A lease the fallback gave
 * (a negative id, see {@link Fallback}) goes back to the fallback. A give-back may end a refusal
 * the store remembers ({@link RefusalMemory}), so every one forgets them.
 */
final class Updates {
  private static final Logger LOG = LoggerFactory.getLogger(RedisStore.class);

  private final RedisStore store;
  private final DecisionCalls calls;
  private final RefusalMemory refusals;
  private final Deadlines deadlines;
  private final Timer timer;
  private final LongAdder failures;
  private final FailurePolicy failurePolicy;
  private final Fallback fallback;

  Updates(RedisStore store, DecisionCalls calls, RefusalMemory refusals, Deadlines deadlines, Timer timer,
      LongAdder failures, FailurePolicy failurePolicy, Fallback fallback) {
    this.store = store;
    this.calls = calls;
    this.refusals = refusals;
    this.deadlines = deadlines;
    this.timer = timer;
    this.failures = failures;
    this.failurePolicy = failurePolicy;
    this.fallback = fallback;
  }

  void charge(Acquisition acquisition) {
    update(DecisionScript.CHARGE, acquisition, null, () -> fallback.charge(acquisition));
  }

  void refund(Acquisition acquisition) {
    update(DecisionScript.GIVE_BACK, acquisition, null, () -> fallback.refund(acquisition));
  }

  void release(Lease lease) {
    if (!releasedLocally(lease)) {
      update(DecisionScript.GIVE_BACK, Acquisition.of(lease.policy(), lease.key(), lease.units()),
          new long[] {lease.id()}, () -> {});
    }
  }

  CompletionStage<Void> chargeAsync(Acquisition acquisition) {
    return updateAsync(DecisionScript.CHARGE, acquisition, null, () -> fallback.charge(acquisition));
  }

  CompletionStage<Void> refundAsync(Acquisition acquisition) {
    return updateAsync(DecisionScript.GIVE_BACK, acquisition, null, () -> fallback.refund(acquisition));
  }

  CompletionStage<Void> releaseAsync(Lease lease) {
    if (releasedLocally(lease)) {
      return CompletableFuture.completedFuture(null);
    }
    return updateAsync(DecisionScript.GIVE_BACK, Acquisition.of(lease.policy(), lease.key(), lease.units()),
        new long[] {lease.id()}, () -> {});
  }

  /** A give-back may end a refusal this store remembers ({@link RefusalMemory}): forget them. */
  void givingBack(byte[] mode) {
    if (mode == DecisionScript.GIVE_BACK) {
      refusals.forgetAll();
    }
  }

  /** A lease the fallback gave (negative id) goes back to it; whether it was one. */
  private boolean releasedLocally(Lease lease) {
    return Fallback.release(fallback, lease);
  }

  private CompletionStage<Void> updateAsync(byte[] mode, Acquisition a, long[] leaseIds, Runnable locally) {
    givingBack(mode);
    WriteStamp stamp = new WriteStamp(System.nanoTime());
    CompletableFuture<long[]> f;
    try {
      f = calls.call(store.encode(mode, store.now(), List.of(a), leaseIds), stamp);
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    return AsyncUpdate.follow(f, stamp, deadlines, timer, failures,
        failurePolicy == FailurePolicy.FALLBACK ? locally : () -> {}, store::succeeded);
  }

  private void update(byte[] mode, Acquisition a, long[] leaseIds, Runnable locally) {
    givingBack(mode);
    WriteStamp stamp = new WriteStamp(System.nanoTime());
    CompletableFuture<long[]> f = calls.call(store.encode(mode, store.now(), List.of(a), leaseIds), stamp);
    try {
      deadlines.await(f, stamp);
      store.succeeded();
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      LOG.debug("Headroom's Redis store could not update {}", a, e);
    }
    failures.increment();
    if (failurePolicy == FailurePolicy.FALLBACK) {
      locally.run();
    }
  }
}
