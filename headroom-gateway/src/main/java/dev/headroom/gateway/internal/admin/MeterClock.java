package dev.headroom.gateway.internal.admin;

import io.micrometer.core.instrument.Clock;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The meter registry's clock: wall time read from a field that a task on the gateway's boss loop
 * refreshes every {@link #TICK_MILLIS} milliseconds, monotonic time read from the system.
 *
 * <p>Micrometer reads the wall clock only to rotate the windows of each timer's maximum and
 * histogram (minutes long), yet reads it twice on every {@code Timer.record}: four readings per
 * forwarded request for the store and upstream latencies, each tens of nanoseconds on a virtual
 * machine's clock source. A reading ten milliseconds old rotates those windows just as well.
 * Durations never come from this wall time: the gateway measures them with {@code nanoTime}.
 */
public final class MeterClock implements Clock {
  static final long TICK_MILLIS = 10;

  private volatile long wallMillis = System.currentTimeMillis();
  private ScheduledFuture<?> ticking;

  /** Starts refreshing the wall time on {@code executor} until {@link #stop()}. */
  public void start(EventExecutor executor) {
    ticking = executor.scheduleAtFixedRate(() -> wallMillis = System.currentTimeMillis(),
        TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
  }

  /** Stops refreshing the wall time. */
  public void stop() {
    if (ticking != null) {
      ticking.cancel(false);
    }
  }

  @Override
  public long wallTime() {
    return wallMillis;
  }

  @Override
  public long monotonicTime() {
    return System.nanoTime();
  }
}
