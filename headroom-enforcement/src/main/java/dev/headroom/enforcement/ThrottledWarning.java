package dev.headroom.enforcement;

import dev.headroom.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * A warning written at most once per interval, each line saying how many like it were suppressed
 * since the last one. A store that cannot decide fails every request in the same way, and a line
 * per refused request would turn an outage (or an overload) into a flood of identical log lines
 * that costs the overloaded process more work exactly when it has least to spare.
 *
 * <p>The first warning is written at once; later ones only when the interval since the last
 * written line has passed by the given {@link Ticker}. Lock-free: one compare-and-set on the time
 * the next line may be written, so concurrent callers write at most one line per interval between
 * them. Thread-safe.
 */
public final class ThrottledWarning {
  private final Consumer<String> sink;
  private final long intervalNanos;
  private final String intervalText;
  /** When the next line may be written, by the ticker; {@link #NEVER} until the first line. */
  private final AtomicLong nextAt = new AtomicLong(NEVER);
  /** No line written yet (a time no ticker plus an interval reaches in practice). */
  private static final long NEVER = Long.MIN_VALUE;
  private final LongAdder suppressed = new LongAdder();

  public ThrottledWarning(Duration interval, Consumer<String> sink) {
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("interval: expected a positive duration, got " + interval);
    }
    this.sink = sink;
    this.intervalNanos = interval.toNanos();
    this.intervalText = interval.getSeconds() + " s";
  }

  /** Writes {@code message} now, or counts it as suppressed when a line was written less than an interval ago. */
  public void warn(Ticker ticker, String message) {
    long now = ticker.read();
    long next = nextAt.get();
    // one compare-and-set decides which caller writes: a loser saw the line's time, or lost the race
    if (next != NEVER && now - next < 0 || !nextAt.compareAndSet(next, now + intervalNanos)) {
      suppressed.increment();
      return;
    }
    long n = suppressed.sumThenReset();
    sink.accept(n == 0 ? message : message + " (and " + n + " more like it in the last " + intervalText + ")");
  }
}
