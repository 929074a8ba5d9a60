package dev.headroom.gateway.internal;

import dev.headroom.Ticker;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The client connections' timers (timeouts.idle, timeouts.response, the lingering close), on
 * the gateway's {@link Ticker}: {@link #now()} is the ticker's reading and a deadline is a
 * ticker reading too. In production a timer is a task on the connection's event loop, due when
 * the ticker reaches the deadline; a test passes its own implementation, which runs the tasks
 * when it moves a manual ticker past their deadlines (virtual time, no sleeping).
 *
 * <p>A task runs on {@code loop}, the connection's event loop, so that it needs no locking.
 * A task that fires checks the time again ({@link #now()}) and re-arms itself if it is early.
 * Implementations are thread-safe.
 */
public interface Timers {

  /** The current time: the gateway ticker's reading (nanoseconds). */
  long now();

  /** Runs {@code task} on {@code loop} once {@link #now()} reaches {@code deadline}. */
  Timer schedule(EventExecutor loop, long deadline, Runnable task);

  /** A scheduled task. */
  interface Timer {
    /** Cancels the task if it has not run yet. */
    void cancel();
  }

  /** The production timers: a scheduled task on the loop per timer, delays measured on {@code ticker}. */
  static Timers on(Ticker ticker) {
    return new Timers() {
      @Override
      public long now() {
        return ticker.read();
      }

      @Override
      public Timer schedule(EventExecutor loop, long deadline, Runnable task) {
        ScheduledFuture<?> f = loop.schedule(task, Math.max(0, deadline - ticker.read()), TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
      }
    };
  }
}
