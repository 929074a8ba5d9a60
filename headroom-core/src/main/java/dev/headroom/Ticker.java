package dev.headroom;

import java.time.Instant;

/**
 * The source of time for every decision Headroom makes.
 *
 * <p>Every algorithm reads time only through a {@code Ticker}, never from the wall clock, so that
 * tests and simulations can drive time with {@link ManualTicker}. The value is nanoseconds since
 * the Unix epoch: the algorithms align fixed windows to the epoch, so that an in-memory store and
 * a Redis store (which reads Redis {@code TIME}) agree on where a window starts.
 *
 * <p>Implementations must be thread-safe and should be monotonic.
 */
@FunctionalInterface
public interface Ticker {

  /** Returns the current time in nanoseconds since 1970-01-01T00:00:00Z. */
  long read();

  /**
   * A ticker anchored to the wall clock once, at creation, and advanced by {@link System#nanoTime()}
   * from then on: epoch-aligned, yet monotonic and immune to wall-clock steps.
   */
  static Ticker system() {
    return SystemTicker.INSTANCE;
  }

  /** Returns {@link #read()} as an {@link Instant}. */
  default Instant instant() {
    long nanos = read();
    return Instant.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L));
  }
}

/** The production ticker: one wall-clock reading at class load, then {@code System.nanoTime()}. */
final class SystemTicker implements Ticker {
  static final SystemTicker INSTANCE = new SystemTicker();

  /**
   * Epoch nanoseconds at start minus {@code nanoTime} at start, computed once: a reading is then one
   * addition to {@code System.nanoTime()}. Two's complement makes {@code offset + nanoTime()} equal
   * to {@code epochAtStart + (nanoTime() - nanoTimeAtStart)} even when the intermediate wraps.
   */
  private final long offset;

  private SystemTicker() {
    Instant now = Instant.now();
    long nanoTimeAtStart = System.nanoTime();
    long epochNanosAtStart = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    this.offset = epochNanosAtStart - nanoTimeAtStart;
  }

  @Override
  public long read() {
    return offset + System.nanoTime();
  }
}
