package dev.headroom.internal;

/** Long arithmetic that saturates at the bounds instead of overflowing (time and debt never wrap). */
public final class Saturating {
  private Saturating() {}

  /** {@code a + b}, clamped to the range of {@code long}. */
  public static long add(long a, long b) {
    long r = a + b;
    if (((a ^ r) & (b ^ r)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return r;
  }

  /** {@code a * b} for non-negative operands, clamped to {@link Long#MAX_VALUE}. */
  public static long multiply(long a, long b) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    if ((hi == 0 && lo >= 0) || (hi == -1 && lo < 0)) {
      return lo;
    }
    return (a < 0) == (b < 0) ? Long.MAX_VALUE : Long.MIN_VALUE;
  }
}
