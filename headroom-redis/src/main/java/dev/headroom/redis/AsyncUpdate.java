package dev.headroom.redis;

import dev.headroom.redis.internal.Deadlines;
import dev.headroom.redis.internal.WriteStamp;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One best-effort update (a charge, a refund, a lease given back) sent without blocking: the
 * asynchronous twin of {@link Updates}'s blocking update. It is settled once, by Redis's reply or
 * by the decision deadline (counted from the write, as for decisions: {@link Deadlines}), checked on
 * the store's timer wheel, whose schedule and cancel take no lock. A reply settles it as applied;
 * a failure or a passed deadline counts a failure and, with {@link FailurePolicy#FALLBACK}, applies
 * the update to the local store. The stage never fails: an update is best effort, as
 * {@link RedisStore#charge} never throws. Completes on Lettuce's I/O thread or the timer's thread:
 * whoever continues from it must not block.
 */
final class AsyncUpdate {
  private static final Logger LOG = LoggerFactory.getLogger(RedisStore.class);

  private final CompletableFuture<long[]> reply;
  private final WriteStamp stamp;
  private final Deadlines deadlines;
  private final Timer timer;
  private final LongAdder failures;
  private final Runnable locally;
  private final AtomicBoolean settled = new AtomicBoolean();
  private final CompletableFuture<Void> done = new CompletableFuture<>();
  private volatile Timeout timeout;

  private AsyncUpdate(CompletableFuture<long[]> reply, WriteStamp stamp, Deadlines deadlines, Timer timer,
      LongAdder failures, Runnable locally) {
    this.reply = reply;
    this.stamp = stamp;
    this.deadlines = deadlines;
    this.timer = timer;
    this.failures = failures;
    this.locally = locally;
  }

  /**
   * Follows {@code reply} until it arrives or its deadline passes.
   *
   * @param locally the update applied to the local store when Redis did not apply it (or nothing)
   * @param succeeded told when Redis answered
   */
  static CompletableFuture<Void> follow(CompletableFuture<long[]> reply, WriteStamp stamp, Deadlines deadlines,
      Timer timer, LongAdder failures, Runnable locally, Runnable succeeded) {
    AsyncUpdate u = new AsyncUpdate(reply, stamp, deadlines, timer, failures, locally);
    u.schedule();
    reply.whenComplete((r, e) -> {
      if (!u.settled.compareAndSet(false, true)) {
        return;
      }
      Timeout t = u.timeout;
      if (t != null) {
        t.cancel();
      }
      if (e == null) {
        succeeded.run();
        u.done.complete(null);
      } else {
        u.fail(e);
      }
    });
    return u.done;
  }

  private void schedule() {
    Timeout t = timer.newTimeout(x -> check(), deadlines.untilCheck(stamp), TimeUnit.NANOSECONDS);
    timeout = t;
    if (settled.get()) {
      t.cancel();
    }
  }

  private void check() {
    if (settled.get()) {
      return;
    }
    if (deadlines.waiting(stamp)) {
      schedule(); // written after the first check was set: the deadline counts from the write
      return;
    }
    if (settled.compareAndSet(false, true)) {
      fail(deadlines.passed());
    }
  }

  private void fail(Throwable why) {
    failures.increment();
    LOG.debug("Headroom's Redis store could not apply an update", why);
    try {
      locally.run();
    } catch (RuntimeException e) {
      LOG.debug("Headroom's local store could not apply an update either", e);
    } finally {
      done.complete(null);
    }
  }
}
