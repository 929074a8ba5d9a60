package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.Waiting;
import dev.headroom.gateway.internal.Timers;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;

/**
 * The policies' queues ({@code policies.NAME.queue}) on the gateway's {@link Timers}: a waiting
 * request's re-decision and its deadline count on the gateway's ticker, as the connections'
 * timeouts do, so that a test moving a manual ticker moves the waiting too. A task runs on one
 * loop once the ticker reaches its due time; one woken early is armed again for the rest
 * ({@link Timers}' contract). Thread-safe.
 */
final class QueueTimer implements Waiting.Timer {
  private final Timers timers;
  private final EventExecutor loop;

  QueueTimer(Timers timers, EventExecutor loop) {
    this.timers = timers;
    this.loop = loop;
  }

  @Override
  public Runnable schedule(Duration delay, Runnable task) {
    Due d = new Due(timers.now() + delay.toNanos(), task);
    d.arm();
    return d::cancel;
  }

  /** One task and its due time on the ticker; the timer armed for it now. */
  private final class Due implements Runnable {
    private final long due;
    private final Runnable task;
    private volatile boolean cancelled;
    private volatile Timers.Timer armed;

    Due(long due, Runnable task) {
      this.due = due;
      this.task = task;
    }

    void arm() {
      armed = timers.schedule(loop, due, this);
    }

    @Override
    public void run() {
      if (cancelled) {
        return;
      }
      if (timers.now() - due < 0) {
        arm();
        return;
      }
      task.run();
    }

    void cancel() {
      cancelled = true;
      Timers.Timer t = armed;
      if (t != null) {
        t.cancel();
      }
    }
  }
}
