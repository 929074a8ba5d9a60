package dev.headroom.internal;

import dev.headroom.QuotaPolicy;

/**
 * The fixed window counter: {@link dev.headroom.Algorithm#FIXED_WINDOW}.
 *
 * <h2>How is this designed, and why?</h2>
 * Time is cut into windows of {@code w} seconds aligned to the Unix epoch (window index
 * {@code k = floor(now / w)}), so that every store, in memory or in Redis, agrees where a window
 * starts without sharing anything. Each key keeps the index of its window and an exact counter
 * ({@link WindowState}). A request of cost {@code n} is allowed iff {@code count + n <= q}; the
 * counter starts from zero in each new window. It is the simplest exact limit: never more than
 * {@code q} units in one window, though up to {@code 2q} can pass around a window boundary.
 *
 * <p>Worked numbers: {@code q = 100, w = 60 s}. At 12:00:50, 100 requests fill window 12:00; the
 * 101st is refused with Retry-After 10 s, the time left in the window.
 *
 * <p>Debt: a charge after the fact may push the counter above {@code q}. When windows roll over,
 * each elapsed window pays back {@code q} units: {@code count := max(0, count - q * elapsed)}. A
 * key that was charged {@code 3q} is thus refused for about three windows, as a long upload should.
 *
 * <h2>What the service limit says</h2>
 * <ul>
 *   <li>{@code r} = {@code max(0, q - count)}.
 *   <li>{@code t}, as draft-ietf-httpapi-ratelimit-headers-09 section 4.1.2 means it ("until the
 *       quota resets", {@link dev.headroom.PolicyOutcome#reset()}) = time until the window in which
 *       the debt is paid ends: {@code (k + j) * w - now} with {@code j = max(1, ceil(count / q))};
 *       without debt, the end of the current window.
 *   <li>{@code t}, as draft-10 and -11 section 4.1.2 mean it ("until additional quota is made
 *       available", {@link dev.headroom.PolicyOutcome#nextQuota()}) = {@code (k + j) * w - now} with
 *       {@code j = max(1, floor(count / q))}: the first window that starts with less than {@code q}
 *       of debt. Without debt the two meanings agree (an untouched window says its end in both,
 *       as draft-09 did): in the worked
 *       numbers both say 10 s. They part only in debt: charged {@code 2.5q}, draft-09 waits for the
 *       third window to end, draft-10 for the second, which starts with {@code q/2} available.
 *   <li>Retry-After when refused = {@code (k + j) * w - now}, {@code j = ceil((count + n - q) / q)}:
 *       the start of the first window in which {@code n} units fit.
 * </ul>
 */
public final class FixedWindow {

  private FixedWindow() {}

  /** The state as seen at window {@code index}: rolled over, debt paid back by elapsed windows. */
  public static WindowState roll(WindowState s, long index, long quota) {
    if (s.index == index) {
      return s;
    }
    if (s.index == Long.MIN_VALUE || s.index > index || s.count <= 0) {
      return new WindowState(index, 0, 0);
    }
    long elapsed = index - s.index;
    long carry = s.count - Saturating.multiply(quota, elapsed);
    return new WindowState(index, Math.max(0, carry), 0);
  }

  /** Evaluates a request of {@code cost} units; {@code state} is the stored state. */
  public static Evaluation evaluate(QuotaPolicy policy, WindowState state, long now, long cost) {
    long w = policy.window().toNanos();
    long q = policy.quota();
    long index = Math.floorDiv(now, w);
    WindowState s = roll(state, index, q);
    long after = Saturating.add(s.count, cost);
    if (admits(s.count, cost, q)) {
      WindowState next = new WindowState(index, after, 0);
      return new Evaluation(true, next, q - after, resetNanos(next, now, w, q), nextQuotaNanos(next, now, w, q), 0);
    }
    long retry = cost > q ? w : windowStart(Saturating.add(index, ceilDiv(after - q, q)), w) - now;
    return new Evaluation(false, s, Math.max(0, q - s.count), resetNanos(s, now, w, q), nextQuotaNanos(s, now, w, q),
        retry);
  }

  /**
   * The decision of {@link #evaluate} alone, without the service-limit figures: the state to store
   * when {@code cost} units are admitted at {@code now}, or {@code null} when they are refused.
   * Allocates nothing when refused within the stored window.
   */
  public static WindowState tryAcquire(WindowState state, long now, long cost, long windowNanos, long quota) {
    long index = Math.floorDiv(now, windowNanos);
    WindowState s = roll(state, index, quota);
    return admits(s.count, cost, quota) ? new WindowState(index, s.count + cost, 0) : null;
  }

  /** Whether {@code cost} more units fit a window that has counted {@code count}: the one rule. */
  static boolean admits(long count, long cost, long quota) {
    return cost <= quota && Saturating.add(count, cost) <= quota;
  }

  /** The state after charging {@code cost} units with no check. */
  public static WindowState charge(QuotaPolicy policy, WindowState state, long now, long cost) {
    long index = Math.floorDiv(now, policy.window().toNanos());
    WindowState s = roll(state, index, policy.quota());
    return new WindowState(index, Saturating.add(s.count, cost), 0);
  }

  /** The state after giving back {@code cost} units of the current window. */
  public static WindowState refund(QuotaPolicy policy, WindowState state, long now, long cost) {
    long index = Math.floorDiv(now, policy.window().toNanos());
    WindowState s = roll(state, index, policy.quota());
    return new WindowState(index, Math.max(0, s.count - cost), 0);
  }

  /** The instant after which the state equals an absent key's. */
  public static long expiresAt(QuotaPolicy policy, WindowState s) {
    if (s.index == Long.MIN_VALUE) {
      return Long.MIN_VALUE;
    }
    long w = policy.window().toNanos();
    return windowStart(Saturating.add(s.index, Math.max(1, ceilDiv(s.count, policy.quota()))), w);
  }

  private static long resetNanos(WindowState s, long now, long w, long q) {
    return windowStart(Saturating.add(s.index, Math.max(1, ceilDiv(s.count, q))), w) - now;
  }

  private static long nextQuotaNanos(WindowState s, long now, long w, long q) {
    return windowStart(Saturating.add(s.index, Math.max(1, s.count / q)), w) - now;
  }

  static long windowStart(long index, long w) {
    return Saturating.multiply(index, w);
  }

  static long ceilDiv(long a, long b) {
    return a <= 0 ? 0 : (a - 1) / b + 1;
  }
}
