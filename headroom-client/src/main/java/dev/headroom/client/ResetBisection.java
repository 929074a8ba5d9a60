package dev.headroom.client;

/**
 * Where a recognised fixed window's last units go so that their answers halve what is known of its
 * reset, instead of learning it by chance ({@link Pacing#ADAPTIVE}).
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>Every report bounds a fixed window's reset {@code R} to {@code (a + t - 1 s, b + t]}
 * ({@link ObservedAlgorithm}), and the client waits for the least upper bound before the next
 * window's units go: when every report of a window was decided at one fraction of a second (a
 * burst right after the last reset), that bound stays up to a second late, window after window,
 * which is 1.06x of the ideal schedule of five windows when the first window is short. Within a
 * window, <em>when</em> its units are spent does not change what the client gets done, as long as
 * each is decided before the reset: so the last {@link #reserve} units of a window are held back
 * and each goes alone at an instant chosen to split what is known. With {@code (lo, hi]} known and
 * {@code m} its middle, a request decided at {@code m - k s} (whole {@code k >= 1}) says
 * {@code t = k + 1} when {@code R > m} (the bound's lower end becomes {@code m}) and {@code t = k}
 * otherwise (its upper end becomes {@code m} plus the latency): draft-ietf-httpapi-ratelimit-headers-09
 * section 4.1.2's whole seconds, read at a chosen fraction.
 *
 * <p>An epoch reset ({@code X-RateLimit-Reset}, read through {@code Date}: {@link ServerClock})
 * does not depend on when its request was decided; there the probe halves what is known of the
 * server's clock instead, decided where the middle of the known offset puts the server's second
 * boundary ({@link ServerClock#bisection}): an epoch-aligned window's reset is then known to that
 * precision.
 *
 * <p>Bisection starts when the reset may be more than {@link #TRIGGER} late and goes on down to
 * {@link #TARGET}, so that the latency the next windows' first requests add does not start it again
 * in every window (in the last window of a caller's work a held unit delays it); a probe that does
not take a quarter off (the latency is most of what is left) stops it until the uncertainty is
twice what it stalled at. The uncertainty of
 * a window is carried to the next ({@link ObservedAlgorithm#lowest()}): the next reset is at least a
 * window after the last one's lower bound, so one bisected window keeps the next ones precise.
 * Probes are decided at least {@link #MARGIN} before the reset's lower bound, so each counts in the
 * window it was meant for: a unit is never sent where it could be lost, and never one more than
 * {@code r}. Worked numbers: {@code (9.20, 10.20]} at 5.20 s: the probe goes at 5.70 s ({@code m =
 * 9.70}, {@code k = 4}); {@code t=5} says {@code (9.70, 10.20]}, the next goes at 5.95 s, and so on
 * until the reset is known to 60 ms. Not thread-safe: the tracker's lock guards it.
 */
final class ResetBisection {

  /**
   * The reset may be this much late (nanoseconds) before units are held back to narrow it: below
   * it the wait is late by at most 2% of the five windows here, while a unit held in the last
   * window of a caller's work can cost up to a second.
   */
  static final long TRIGGER = 250_000_000L;

  /** What bisection narrows the reset down to. */
  static final long TARGET = 60_000_000L;

  /**
   * A probe is decided at least this long before the reset's lower bound: a late timer or a slow
   * answer (a loaded machine) must not push it, or the units held behind it, into the next window.
   */
  static final long MARGIN = 1_000_000_000L;

  /** A probe admitted up to this long after its instant (a late timer) still goes. */
  static final long LATE = 50_000_000L;

  /** Most units held back in a window. */
  static final long MAX_RESERVE = 6;

  /** {@link #hold}: only an answer in flight can say more. */
  static final long FOR_ANSWER = -1;

  private static final long SECOND = ObservedAlgorithm.SECOND;

  private ResetBisection() {}

  /**
   * How long a request against a recognised fixed window waits so that it goes as a probe: 0 when
   * it goes now (no bisection, a unit above the reserve, no probe fits, or its instant is now),
   * {@link #FOR_ANSWER} while another request is in flight, else nanoseconds.
   */
  static long hold(TrackedBudget e, ServerClock clock, long now, int inFlight) {
    long u = uncertainty(e, clock);
    if (e.probedAt > 0 && inFlight == 0) {
      // The last probe is answered: without a quarter off (the latency is most of what is left), stop.
      if (u > e.probedAt - e.probedAt / 4) {
        e.bisecting = false;
        e.stalledAt = u;
      }
      e.probedAt = 0;
    }
    if (u > Math.max(TRIGGER, 2 * e.stalledAt)) {
      e.bisecting = true;
    } else if (u <= TARGET) {
      e.bisecting = false;
    }
    if (!e.bisecting || e.remaining > reserve(u)) {
      return 0;
    }
    long p = next(e, clock, now);
    if (p == Long.MIN_VALUE) {
      return 0;
    }
    if (inFlight > 0) {
      return FOR_ANSWER;
    }
    if (p > now) {
      return p - now;
    }
    e.probedAt = u;
    return 0;
  }

  /** How much later than the reset the budget's reset may be known, in nanoseconds. */
  static long uncertainty(TrackedBudget e, ServerClock clock) {
    return e.epochReset ? clock.width() : e.seen.uncertainty();
  }

  /** The units held back for {@code u} of uncertainty: one per halving down to {@link #TARGET}. */
  static long reserve(long u) {
    if (u <= TARGET) {
      return 0;
    }
    double halvings = Math.ceil(Math.log((double) u / TARGET) / Math.log(2));
    return (long) Math.min(MAX_RESERVE, halvings);
  }

  /**
   * The next probe's instant, at or after {@code now - LATE}; {@code Long.MIN_VALUE} when none is
   * decided {@link #MARGIN} before the reset's lower bound.
   */
  static long next(TrackedBudget e, ServerClock clock, long now) {
    long lo = e.seen.lowest();
    long from = now - LATE;
    long p;
    if (e.epochReset) {
      p = clock.bisection(from);
    } else {
      long hi = e.seen.high();
      if (lo == Long.MIN_VALUE || hi == Long.MAX_VALUE) {
        return Long.MIN_VALUE;
      }
      long m = lo + (hi - lo) / 2;
      long k = Math.floorDiv(m - from, SECOND);
      if (k < 1) {
        return Long.MIN_VALUE;
      }
      p = m - k * SECOND;
    }
    return p != Long.MIN_VALUE && Ceilings.saturatingAdd(p, MARGIN) <= lo ? p : Long.MIN_VALUE;
  }
}
