package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.Timers;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;

/**
 * How late each event loop runs what is due on it: the gateway's own delay in an upstream latency
 * it measures. A response that reaches a busy loop waits for the loop to finish what it is doing
 * before it is read, so the time from a request's sending to its response head counts that wait
 * too, and a saturated gateway would read a fast upstream as a slow one. The route's adaptive
 * concurrency limit is told this delay beside each latency (headroom-enforcement {@code
 * Admission#upstreamLatency}) and does not count it as the upstream's.
 *
 * <p>State, per loop that served an exchange of an adaptive route (started on its first; loops
 * that never do are never woken): a task due every {@link #PERIOD_NANOS} on the loop, on the
 * gateway's {@link Timers} (so on its ticker), that measures how late it ran ({@code r}: the
 * lateness of one run, the ticker's reading when it ran less the reading it was due at), and an
 * exponentially weighted average of those lateness readings ({@code t}: the loop's delay now, with
 * weight {@link #WEIGHT} per run, so it follows a change within a few tens of milliseconds). A
 * task armed on a loop that is shutting down is dropped with the loop.
 *
 * <p>Thread-safe: each loop's average is written by its own task only, and read as a volatile.
 */
final class LoopLag {
  /** How often each loop's lateness is read. */
  static final long PERIOD_NANOS = 10_000_000L;
  /** The weight of each reading in the average. */
  static final double WEIGHT = 0.25;

  private final Timers timers;
  private final ConcurrentHashMap<EventExecutor, Loop> loops = new ConcurrentHashMap<>();

  LoopLag(Timers timers) {
    this.timers = timers;
  }

  /** The delay of {@code loop} now, in nanoseconds: 0 until its first reading. Starts measuring it. */
  long of(EventExecutor loop) {
    Loop l = loops.get(loop);
    if (l == null) {
      l = loops.computeIfAbsent(loop, Loop::new);
    }
    return (long) l.lag;
  }

  private final class Loop {
    private final EventExecutor executor;
    private volatile double lag;

    Loop(EventExecutor executor) {
      this.executor = executor;
      arm(timers.now());
    }

    private void arm(long from) {
      long due = from + PERIOD_NANOS;
      try {
        timers.schedule(executor, due, () -> ran(due));
      } catch (RejectedExecutionException shuttingDown) {
        // the loop is closing: nothing more to measure
      }
    }

    private void ran(long due) {
      long now = timers.now();
      double late = Math.max(0, now - due);
      lag = lag + (late - lag) * WEIGHT;
      arm(now);
    }
  }
}
