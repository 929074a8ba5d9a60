package dev.headroom;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Ticker} that moves only when told to. It exists for tests and simulations: drive it with
 * {@link #advance(Duration)} and every algorithm sees exactly that time, with no sleeping.
 *
 * <p>Thread-safe.
 */
public final class ManualTicker implements Ticker {

  private final AtomicLong nanos;

  private ManualTicker(long epochNanos) {
    this.nanos = new AtomicLong(epochNanos);
  }

  /** A ticker standing at the given instant. */
  public static ManualTicker at(Instant instant) {
    return new ManualTicker(Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano()));
  }

  /** A ticker standing at 2026-01-01T00:00:00Z, a whole multiple of every common window. */
  public static ManualTicker atFixedInstant() {
    return at(Instant.parse("2026-01-01T00:00:00Z"));
  }

  @Override
  public long read() {
    return nanos.get();
  }

  /** Moves time forward; a negative duration is refused. */
  public ManualTicker advance(Duration duration) {
    if (duration.isNegative()) {
      throw new IllegalArgumentException("duration: expected zero or positive, got " + duration);
    }
    nanos.addAndGet(duration.toNanos());
    return this;
  }

  /** Moves time forward by the given number of nanoseconds. */
  public ManualTicker advanceNanos(long delta) {
    if (delta < 0) {
      throw new IllegalArgumentException("delta: expected zero or positive nanoseconds, got " + delta);
    }
    nanos.addAndGet(delta);
    return this;
  }

  /** Sets the time; it may not go backwards. */
  public ManualTicker set(Instant instant) {
    long target = at(instant).read();
    long current = nanos.get();
    if (target < current) {
      throw new IllegalArgumentException("instant: expected no earlier than " + instant() + ", got " + instant);
    }
    nanos.set(target);
    return this;
  }
}
