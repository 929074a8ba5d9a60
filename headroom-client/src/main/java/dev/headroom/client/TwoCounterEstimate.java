package dev.headroom.client;

/**
 * The arithmetic of a server's two-counter sliding window estimate (Cloudflare's published
 * algorithm; headroom-core's {@code SlidingWindow}), in the server's own order, for
 * {@link SlidingWindowModel}: {@code used = floor(prev * (w - e) / w) + cur}, the previous window's
 * weight decaying over the current one, computed in doubles exactly as the server does, so that the
 * client's instants are the server's to the nanosecond.
 */
final class TwoCounterEstimate {

  private TwoCounterEstimate() {}

  /**
   * The earliest and latest instant at which an estimate of {@code used} units, decided in the
   * window starting at {@code start} with {@code cur} of them in that window ({@code curLo} to
   * {@code curHi}) and the previous window's count between {@code prevLo} and {@code prevHi}, falls
   * by one unit with no further traffic (draft-10 and -11 section 4.1.2's {@code t}, as
   * headroom-core's {@code SlidingWindow} computes it): while the previous window weighs
   * {@code p = used - cur >= 1}, as its weight falls to {@code p - 1}, later the more units it held;
   * else just past the next boundary, where {@code cur} weighs {@code cur - 1}. Null when no count fits.
   */
  static long[] nextUnit(long start, long curLo, long curHi, long used, long prevLo, long prevHi, long window) {
    long earliest = Long.MAX_VALUE;
    long latest = Long.MIN_VALUE;
    for (long cur = curLo; cur <= curHi; cur++) {
      long p = used - cur;
      long lo;
      long hi;
      if (p <= 0) {
        lo = start + window + decayPoint(cur, cur - 1, window);
        hi = lo;
      } else if (prevHi < p) {
        continue;
      } else {
        lo = start + decayPoint(Math.max(prevLo, p), p - 1, window);
        hi = start + decayPoint(prevHi, p - 1, window);
      }
      earliest = Math.min(earliest, lo);
      latest = Math.max(latest, hi);
    }
    return earliest == Long.MAX_VALUE ? null : new long[] {earliest, latest};
  }

  /** {@code floor(previous * (w - e) / w)}, in doubles, in the server's order. */
  static long weighted(long previous, long w, long elapsed) {
    if (previous == 0) {
      return 0;
    }
    return (long) Math.floor((double) previous * (double) Math.max(0, w - elapsed) / (double) w);
  }

  /** The earliest {@code e} in a window at which {@code floor(previous * (w - e) / w) <= allowance}. */
  static long decayPoint(long previous, long allowance, long w) {
    if (previous <= allowance) {
      return 0;
    }
    double point = (double) w - (double) (allowance + 1) * (double) w / (double) previous;
    long e = Math.max(0, (long) Math.floor(point) + 1);
    while (e < w && weighted(previous, w, e) > allowance) {
      e++;
    }
    return Math.min(w, e);
  }
}
