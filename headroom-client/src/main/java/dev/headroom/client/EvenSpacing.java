package dev.headroom.client;

/**
 * How far apart {@link Pacing#EVEN} (and {@link Pacing#ADAPTIVE} against a budget whose algorithm
 * is not recognised, or refills without being a token bucket) spaces admissions against one budget.
 */
final class EvenSpacing {

  private EvenSpacing() {}

  /**
   * The spacing {@link Pacing#EVEN} keeps after a budget's last admission, for {@code r > 0}: the
   * interval of the rate {@code max(r / H, (r - RESERVE) / H + q / w)}, where {@code H} is the time
   * from the last admission to the reset. {@code r / H} spends the remaining units by the reset;
   * when the policy ({@code q}, {@code w}) is known, the second term also credits the refill it
   * implies, so that against a token bucket the units above the reserve are spent by the reset while
   * the bucket refills at {@code q / w}. The reserve keeps the reported {@code r} off zero: a token
   * bucket that says {@code r=0} says {@code t} until it is full, which is a whole window. Neither
   * term ever lets more than {@code r} units go: that is counted in {@link SendTiming#decide}. {@code H}
   * ends at {@link TrackedBudget#lastInWindow()}, the last instant a unit surely counts in the
   * window, not at the reset: a unit aimed at the reset of a fixed window lands in the next one and
   * is lost. Against a budget recognised as refilling but not as a token bucket, the refill term
   * shrinks in proportion below {@link BudgetTracker#REFILLING_RESERVE} (see there).
   */
  static long interval(TrackedBudget e) {
    return interval(e, Long.MAX_VALUE);
  }

  /** {@link #interval(TrackedBudget)}, with {@code H} ending at {@code end} when that is earlier. */
  static long interval(TrackedBudget e, long end) {
    long last = Math.min(e.lastInWindow(), end);
    if (last <= e.lastAdmit) {
      if (!e.refused || e.window <= 0 || e.resetRestoresQuota() || end <= e.lastAdmit) {
        // Past the last instant a unit surely counts in the window: what is left goes at once.
        return 0;
      }
      // Past a draft-10 reset, which brought one unit more, not the quota (ResetMeaning), of a
      // budget that was refused (someone else spends it too, and r overstates what is left): the
      // units left are not lost there, and are spread over a window, as draft-09's time until
      // full or empty would have spread them, keeping r off zero.
      last = Ceilings.saturatingAdd(e.lastAdmit, e.window);
    }
    double horizon = last - e.lastAdmit;
    double rate = e.remaining / horizon;
    if (e.quota > 0 && e.window > 0) {
      double refill = (double) e.quota / e.window;
      if (e.seen.kind() == ObservedAlgorithm.Kind.REFILLING) {
        // How fast it refills is not known: below the reserve, the spending slows in proportion, so
        // that r settles where the refill matches it instead of reaching zero.
        long reserve = BudgetTracker.REFILLING_RESERVE;
        rate = Math.max(rate, Math.max(0, e.remaining - reserve) / horizon
            + refill * Math.min(1.0, (double) e.remaining / reserve));
      } else {
        rate = Math.max(rate, (e.remaining - BudgetTracker.EVEN_RESERVE) / horizon + refill);
      }
    }
    double interval = Math.ceil(1 / rate);
    return interval >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) interval;
  }

}
