package dev.headroom.benchmarks.core;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The leanest reasonable token bucket a team would write by hand, as a peer: GCRA with one
 * {@link AtomicLong} theoretical arrival time per key in a {@link ConcurrentHashMap}. No bound on
 * keys, no eviction, no service limit: only yes or no.
 */
public final class LeanGcra {

  private final ConcurrentHashMap<String, AtomicLong> tats = new ConcurrentHashMap<>();
  private final long interval;
  private final long tolerance;

  /** {@code quota} units per {@code windowNanos}, burst {@code quota}. */
  public LeanGcra(long quota, long windowNanos) {
    this.interval = (windowNanos + quota - 1) / quota;
    this.tolerance = quota * interval;
  }

  /** Takes one unit of {@code key}'s bucket at {@code now} nanoseconds, if there is one. */
  public boolean tryAcquire(String key, long now) {
    AtomicLong tat = tats.computeIfAbsent(key, k -> new AtomicLong(Long.MIN_VALUE / 2));
    for (;;) {
      long current = tat.get();
      long next = Math.max(current, now) + interval;
      if (next - now > tolerance) {
        return false;
      }
      if (tat.compareAndSet(current, next)) {
        return true;
      }
    }
  }

  /** The map, for memory measurements. */
  public ConcurrentHashMap<String, AtomicLong> map() {
    return tats;
  }
}
