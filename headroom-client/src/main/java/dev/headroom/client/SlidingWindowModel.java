package dev.headroom.client;

import java.util.Arrays;

/**
 * The client's own model of a server's two-counter sliding window (Cloudflare's published
 * algorithm; headroom-core's {@code SlidingWindow}), for one budget of one scope: when the next unit
 * is sure to be allowed, from what the client itself sent.
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>The server estimates the units of the last {@code w} as
 * {@code used = floor(prev * (w - e) / w) + cur}, {@code cur} the units of the current window (the
 * windows fixed at some phase {@code phi}: boundaries at {@code phi + k * w}), {@code prev} those of
 * the one before, {@code e} the time elapsed in the current one, and allows a unit while
 * {@code used + 1 <= q}. At {@code r=0} its {@code t} is the time until {@code used} is 0 (up to two
 * windows), far later than its next unit: the previous window's weight gives one unit back every
 * {@code w / prev}. draft-ietf-httpapi-ratelimit-headers-09 section 4.1.2 gives {@code t} as the
 * time until the quota is reset, and section 7 lets a client pace itself as it sees fit within it;
 * this model computes the instant the server itself allows a unit and waits for that.
 *
 * <p>With one client behind the scope, the client knows every request it sent: request {@code j}
 * was decided in {@code [a_j, b_j]} (admission, receipt; {@code b = +inf} while on the wire). For a
 * candidate phase, counting each request in the <em>latest</em> window it may have been decided in
 * (by its interval, and by the reports, below) gives an upper bound of {@code used} (a unit in the
 * current window weighs 1, in the previous one at most 1), and {@code used} with no new request
 * only falls with time, also across a boundary
 * ({@code floor(cur * (w - e) / w) <= cur}). So a request admitted at {@code x} when the bound at
 * {@code x} is at most {@code q - 1} is allowed whenever the server decides it.
 *
 * <p>The phase is not stated; every report narrows it. The phases are tried on a grid of
 * {@value #PHASES} steps of {@code d = w / PHASES}; a grid phase stands for the phases up to
 * {@code d} later when every request's interval is widened to {@code [a - d, b]} and the bound is
 * evaluated at {@code x - d} (shifting the phase by {@code delta} is shifting every instant by
 * {@code -delta}). A phase is <em>consistent</em> when, for every report whose decision falls in one
 * window under it, the reported {@code r} is {@code q} less an estimate possible from the requests
 * surely and possibly counted before it, and the reported {@code t} (whole seconds, rounded up as
 * section 4.1.2's servers do and as {@link ObservedAlgorithm} assumes too) is the server's time
 * until empty for such counts: for {@code cur > 0},
 * {@code (w - e) + }the point at which {@code floor(cur * (w - e') / w)} reaches 0; the request was
 * allowed, so the estimate after it was {@code q - r}, which with the previous window's weight
 * bounds {@code cur} closer than the requests alone (an epoch reset read through the server's
 * {@code Date}, {@link ServerClock}, bounds that instant itself: after its lower bound and at most
 * {@code t} after the receipt, wherever in its interval the decision is placed; measured from a
 * decision placed before a boundary, a request answered two seconds after it ruled out the
 * server's own phase, and the client waited for {@code t}, 2.03x the ideal once in virtual time). A report whose request was on the wire across
 * one boundary must be possible in one of the two windows (a burst decided at one instant
 * straddles, for every report, the phases within a step of that instant: unchecked, they stood for
 * good, each counting the whole burst in the next window, and the unit waited a window for them).
 * The unit is allowed at the latest of the instants the consistent phases give, plus {@code d}.
 *
 * <p>Under a consistent phase, a request on the wire across a boundary whose report is possible
 * only in the window before it was decided before the boundary, and so was every request answered
 * before that one was admitted (the server decided it earlier still); and when such a report says
 * that at least as many of that window's requests were decided up to it as may have been ({@code
 * q - r} less the most its previous window can weigh), every one of them was: those are counted in
 * the window before, not the latest one they may be in. Without this, a first window shorter than
 * the burst's spread cost a window: a burst decided 10 ms before a boundary is on the wire across it
 * for the phases within a step or two of it, each counted the whole burst in the next window, and
 * the next unit waited until the one after (1.26x the ideal in virtual time, issue 15), although
 * the burst's first report ({@code r=9;t=1}: the rest of its window, where the next window would
 * say five seconds) shows it was decided before.
 *
 * <p>And the first window's requests are placed together ({@link #placedTogether}): nothing weighs
 * before it, so its {@code c}-th decision reports exactly {@code q - c}, and a request decided
 * after its end, where its {@code n} requests still weigh {@code n - 1} (or {@code n} at the
 * boundary's very instant, a reading allowed here) until {@code w / n} into the next window,
 * reports at most {@code q - n}. Under a phase, then, the first window held {@code n} of the
 * requests on the wire across its end only if those reporting {@code q - 1} down to {@code q - n +
 * 1} were decided in it, one each, with one reporting {@code q - n}, and every report, its request
 * so placed, is possible; at least the fewest {@code n} so allowed are counted in it, and a phase
 * under which no {@code n} fits is ruled out. Counted one at a time, each in the latest window it
 * may be in, a phase within the burst's flight kept in the first window only the requests answered
 * before its boundary, and the second window's units followed the slower decay of those few (a
 * first window of 50 ms with 1 to 20 ms per request: up to 1.13x of what the server allowed, issue
 * 15). Worked numbers: {@code q=10}, a burst of eleven reporting 9 down to 3, then 3, 2, 1, 0, four
 * of them answered before a phase's boundary. Placed together, {@code n=4} would put the reports 5,
 * 4, 3, 3, 2, 1, 0 in the second window, which starts at 6 (three units of weight and the request
 * itself), or at 5 if the first three were decided at the boundary's instant, where the second's
 * and third's {@code t} count two and three units that have not begun to decay (at least 8 s, where
 * they said 5); only {@code n=7} fits, and the second window's units come back every 0.71 s, not
 * every 1.25 s.
 *
 * <p>One reading is ruled out: a request decided at the very nanosecond a window starts, where the
 * previous window still weighs whole ({@code floor(prev * w / w) = prev}; a nanosecond later,
 * {@code prev - 1}). Allowed, it let every phase within a burst's flight stand (the burst's later
 * reports fit a boundary under each of them, each request at that nanosecond), and the phases that
 * split the burst held the next window's units back by the decay of its smaller part (1.08x to
 * 1.10x with 1 to 20 ms per request, issue 15; 1.05x still with the reading ruled out, until the
 * count above: the burst's last report, {@code r=0} with nothing in the window before, says that
 * all ten requests that may have been decided in its window were). On a server's clock the chance is one in the
 * nanoseconds of a request's flight; were it so, the model would be wrong, and the first refusal
 * turns it off ({@link #disable}). And a request on the wire across a window's start is counted in
 * one of the two windows, never in both, when bounding the estimate from above.
 *
 * <p>Worked numbers: {@code q=10, w=5 s}, phase 0. Ten requests decided at 0.3 s fill the window
 * ({@code t=10}: 4.7 s plus 4.5 s and a nanosecond, rounded up); phases that would put them at 1 s
 * into their window say {@code t=9} and are ruled out. At 5 s the ten units are the previous
 * window's and weigh {@code floor(10 * (5 - e) / 5)}: 9 just after 5 s, so the eleventh unit goes
 * then, the twelfth at 5.5 s, one every 0.5 s: the decay {@code prev / w}, not {@code t}. A phase
 * ruled out stays out (the server's phase does not change).
 *
 * <p>Two meanings of {@code t} ({@link ResetMeaning}): draft-09 section 4.1.2's time until the
 * estimate is empty, checked as above, and draft-10's and -11's (section 4.1.2) time until it falls
 * by one unit: while the previous window weighs {@code p >= 1}, the instant its weight falls to
 * {@code p - 1}, which the previous window's count (bounded by the requests possibly in it) places;
 * else a nanosecond past the next boundary, where the current window's {@code cur} weighs
 * {@code cur - 1} ({@link TwoCounterEstimate#nextUnit}). A {@code RateLimit} list field may mean
 * either, so the phases are checked under each reading apart, each reading keeps its own phases
 * ruled out, and a unit goes when every phase of both readings still standing allows it: the
 * server's own phase under its own reading is among them. A draft-09 server's burst (t = 5, 8, 10
 * for the first three units of a window) soon rules out the phases of the draft-10 reading, and a
 * draft-10 server's ({@code t=5} three times) those of draft-09's.
 *
 * <p>Never trusted blindly: no consistent phase (another client spends the same budget, or the
 * server is not this algorithm) makes the model unusable, and a refusal disables it for good
 * ({@link #disable}); the client then spends as it did without it. Memory is bounded:
 * {@value #CAPACITY} requests; a budget of more than half that is not modelled. Not thread-safe:
 * the tracker's lock guards it.
 */
final class SlidingWindowModel {

  /** Grid steps of the phase over one window. */
  static final int PHASES = 1000;

  /** Requests remembered. */
  static final int CAPACITY = 128;

  private static final long SECOND = 1_000_000_000L;

  /** Longest window modelled (a year): instants a few windows apart must not overflow. */
  static final long MAX_WINDOW = 366L * 86_400 * SECOND;

  private final long[] seq = new long[CAPACITY];
  private final long[] admit = new long[CAPACITY];
  private final long[] receipt = new long[CAPACITY];
  private final long[] reportedR = new long[CAPACITY];
  private final long[] reportedT = new long[CAPACITY];
  /** An instant known to be before the reported reset, or {@code Long.MIN_VALUE}: then {@code t} and {@link #slack} bound it. */
  private final long[] reportedLow = new long[CAPACITY];
  /** What each reported {@code t} names ({@link ResetMeaning}); null until reported. */
  private final ResetMeaning[] reportedMeaning = new ResetMeaning[CAPACITY];
  private int size;
  /** Until when requests the model never saw may still weigh (a budget created mid-stream). */
  private long blindUntil;
  /** Requests decided at or after this instant are all remembered. */
  private long knownFrom;
  /**
   * The phases consistent with the reports under each reading of {@code t} (see {@link #reading}),
   * as last computed; null when they must be again.
   */
  private boolean[][] consistent;
  /** Per reading and consistent phase, the first window's requests placed together ({@link #placedTogether}). */
  private final Placement[][] placed = new Placement[2][PHASES];
  /**
   * The reading of an {@link ResetMeaning#EITHER} report's {@code t} the phases are being checked
   * under: {@link #UNTIL_EMPTY} (draft-09) or {@link #UNTIL_NEXT} (draft-10 and -11). The server
   * means one of them for every report, so each reading keeps its own phases ruled out, and a unit
   * goes when every phase of every reading still standing allows it.
   */
  private int reading;
  private static final int UNTIL_EMPTY = 0;
  private static final int UNTIL_NEXT = 1;
  /**
   * Phases some report ruled out. The server's phase does not change, and every check is made with
   * bounds that only narrow as answers arrive, so a phase ruled out stays out, also once the
   * requests that ruled it out are forgotten.
   */
  private final boolean[][] ruledOut = new boolean[2][PHASES];
  /** The window {@link #ruledOut} was found for. */
  private long ruledFor = -1;
  private boolean disabled;
  private boolean overflowed;
  /** Since when the model has been fed: a model that did not know every request is blind for {@code 2 w} from here. */
  private final long createdAt;
  /**
   * How much later than the server's time until empty, rounded up, a reported {@code t} may be:
   * one second for a relative reset; two for an epoch one read against a {@code Date} truncated to
   * the second ({@link WindowInference#SLACK}).
   */
  private final long slack;

  /**
   * A model that knows every request of its scope ({@code complete}), or one that starts from a
   * budget created after requests it never saw, usable once those weigh nothing ({@code 2 w}).
   */
  SlidingWindowModel(boolean complete, long now, long window) {
    this(complete, now, window, SECOND);
  }

  private SlidingWindowModel(boolean complete, long now, long window, long slack) {
    blindUntil = complete ? Long.MIN_VALUE : blindFor(now, window);
    knownFrom = complete ? Long.MIN_VALUE : now;
    createdAt = now;
    this.slack = slack;
  }

  private static long blindFor(long from, long window) {
    return window <= 0 ? Long.MAX_VALUE : Ceilings.saturatingAdd(from, 2 * Math.min(window, Long.MAX_VALUE / 4));
  }

  /**
   * A model of the same requests and reports for a window this one was not told ({@link
   * WindowInference}): nothing ruled out yet, blind as this one was from its start, and reading
   * {@code t} with {@code slack}.
   */
  SlidingWindowModel copyFor(long window, long slack) {
    SlidingWindowModel m = new SlidingWindowModel(blindUntil == Long.MIN_VALUE, createdAt, window, slack);
    m.knownFrom = knownFrom;
    m.size = size;
    System.arraycopy(seq, 0, m.seq, 0, size);
    System.arraycopy(admit, 0, m.admit, 0, size);
    System.arraycopy(receipt, 0, m.receipt, 0, size);
    System.arraycopy(reportedR, 0, m.reportedR, 0, size);
    System.arraycopy(reportedT, 0, m.reportedT, 0, size);
    System.arraycopy(reportedLow, 0, m.reportedLow, 0, size);
    System.arraycopy(reportedMeaning, 0, m.reportedMeaning, 0, size);
    m.disabled = disabled;
    m.overflowed = overflowed;
    return m;
  }

  /** A model for a budget that is never modelled (a discovery plan's). */
  SlidingWindowModel() {
    this(false, 0, -1);
  }

  /** A request was admitted at {@code at}. */
  void admitted(long s, long at) {
    if (find(s) >= 0) {
      return;
    }
    if (size == CAPACITY) {
      System.arraycopy(seq, 1, seq, 0, CAPACITY - 1);
      System.arraycopy(admit, 1, admit, 0, CAPACITY - 1);
      System.arraycopy(receipt, 1, receipt, 0, CAPACITY - 1);
      System.arraycopy(reportedR, 1, reportedR, 0, CAPACITY - 1);
      System.arraycopy(reportedT, 1, reportedT, 0, CAPACITY - 1);
      System.arraycopy(reportedLow, 1, reportedLow, 0, CAPACITY - 1);
      System.arraycopy(reportedMeaning, 1, reportedMeaning, 0, CAPACITY - 1);
      size--;
      overflowed = true;
    }
    consistent = null;
    seq[size] = s;
    admit[size] = at;
    receipt[size] = Long.MAX_VALUE;
    reportedR[size] = -1;
    reportedT[size] = -1;
    reportedLow[size] = Long.MIN_VALUE;
    reportedMeaning[size] = null;
    size++;
  }

  /** Request {@code s} (admitted at {@code at}) was answered, or failed, at {@code now}. */
  void received(long s, long at, long now) {
    int i = find(s);
    if (i < 0) {
      admitted(s, at);
      i = size - 1;
    }
    receipt[i] = Math.min(receipt[i], now);
    consistent = null;
  }

  /**
   * Request {@code s} was answered at {@code now} with {@code r} and {@code t} (nanoseconds) for this
   * budget; {@code resetLow} is an instant known to be before the reset ({@link ServerClock}), or
   * {@code Long.MIN_VALUE} when only {@code t} and the slack bound it.
   */
  void reported(long s, long at, long now, long r, long tNanos, long resetLow, ResetMeaning meaning) {
    received(s, at, now);
    int i = find(s);
    reportedR[i] = r;
    reportedT[i] = tNanos;
    reportedLow[i] = resetLow;
    reportedMeaning[i] = meaning;
    consistent = null;
  }

  /** A refusal: the model was wrong somewhere, and is not used again. */
  void disable() {
    disabled = true;
  }

  /**
   * The earliest instant at or after {@code now} at which one more request is sure to be allowed,
   * or {@code -1} when the model cannot say (disabled, blind, no consistent phase, nothing
   * reported), or {@code Long.MAX_VALUE} when only answers to requests in flight can tell.
   */
  long nextAllowed(long now, long quota, long window) {
    if (disabled || overflowed || quota <= 0 || quota > CAPACITY / 2 || window < PHASES || window > MAX_WINDOW
        || now < blindUntil) {
      return -1;
    }
    prune(now, window);
    long step = window / PHASES;
    long latest = Long.MIN_VALUE;
    boolean anyReport = false;
    for (int i = 0; i < size; i++) {
      anyReport |= reportedR[i] >= 0;
    }
    if (!anyReport) {
      return -1;
    }
    if (ruledFor != window) {
      Arrays.fill(ruledOut[UNTIL_EMPTY], false);
      Arrays.fill(ruledOut[UNTIL_NEXT], false);
      ruledFor = window;
      consistent = null;
    }
    int readings = readings();
    if (consistent == null || consistent.length != readings) {
      consistent = new boolean[readings][PHASES];
      for (reading = 0; reading < readings; reading++) {
        boolean[] out = ruledOut[reading];
        Placement[] together = placed[reading];
        for (int p = 0; p < PHASES; p++) {
          // A phase ruled out stays out: it is not checked again.
          out[p] = out[p] || !consistent(p * step, step, quota, window);
          together[p] = out[p] ? null : placedTogether(p * step, step, quota, window);
          if (together[p] == Placement.NONE) {
            // No count of the first window's requests fits every report: not this phase.
            out[p] = true;
            together[p] = null;
          }
          consistent[reading][p] = !out[p];
        }
      }
    }
    for (reading = 0; reading < readings; reading++) {
      for (int p = 0; p < PHASES; p++) {
        long phi = p * step;
        if (!consistent[reading][p]) {
          continue;
        }
        long at = earliest(phi, step, Ceilings.saturatingAdd(now, -step), quota, window);
        if (at == Long.MAX_VALUE) {
          return Long.MAX_VALUE;
        }
        latest = Math.max(latest, at);
      }
    }
    if (latest == Long.MIN_VALUE) {
      return -1;
    }
    return Math.max(now, Ceilings.saturatingAdd(latest, step));
  }

  /**
   * Whether the reports rule out every phase of {@code window}: no two-counter sliding window of
   * that length, spent by this client alone, says what the server said. False while the model
   * cannot tell (see {@link #nextAllowed}).
   */
  boolean refuted(long now, long quota, long window) {
    if (nextAllowed(now, quota, window) != -1 || ruledFor != window) {
      return false;
    }
    for (int h = 0; h < readings(); h++) {
      for (boolean out : ruledOut[h]) {
        if (!out) {
          return false;
        }
      }
    }
    return true;
  }

  /** How many readings of {@code t} stand to be checked: two when a report may mean either, else one. */
  private int readings() {
    for (int i = 0; i < size; i++) {
      if (reportedMeaning[i] == ResetMeaning.EITHER) {
        return 2;
      }
    }
    return 1;
  }

  /** Forgets requests that weigh nothing any more: answered more than two windows ago. */
  void prune(long now, long window) {
    long horizon = now - 3 * window;
    int k = 0;
    for (int i = 0; i < size; i++) {
      if (receipt[i] != Long.MAX_VALUE && receipt[i] < horizon) {
        knownFrom = Math.max(knownFrom, horizon);
        consistent = null;
        continue;
      }
      seq[k] = seq[i];
      admit[k] = admit[i];
      receipt[k] = receipt[i];
      reportedR[k] = reportedR[i];
      reportedT[k] = reportedT[i];
      reportedLow[k] = reportedLow[i];
      reportedMeaning[k] = reportedMeaning[i];
      k++;
    }
    size = k;
  }

  /** The start of the window (under phase {@code phi}) holding instant {@code x}. */
  private static long start(long phi, long x, long window) {
    return phi + Math.floorDiv(x - phi, window) * window;
  }

  /**
   * The earliest instant at or after {@code x} at which the bound of {@code used} under phase
   * {@code phi} is at most {@code q - 1}, each request counted in the latest window it may be in.
   */
  private long earliest(long phi, long step, long x, long quota, long window) {
    long start = start(phi, x, window);
    long[] decided = decidedBy(phi, step, quota, window);
    for (int k = 0; k < 3; k++) {
      long from = start + k * window;
      long cur = 0;
      long prev = 0;
      for (int i = 0; i < size; i++) {
        if (decided[i] >= from) {
          cur++;
        } else if (decided[i] >= from - window) {
          prev++;
        }
      }
      if (cur <= quota - 1) {
        long e = TwoCounterEstimate.decayPoint(prev, quota - 1 - cur, window);
        return Math.max(x, from + e);
      }
    }
    return Long.MAX_VALUE;
  }

  /**
   * The latest instant each request may have been decided at under phase {@code phi}: its receipt,
   * or the last instant before a boundary it was on the wire across when its report is not possible
   * in the window after it, or when it was answered before the admission of a request so pinned, or
   * when such a request's report counts every request that may have been decided before it in its
   * window (see the class comment).
   */
  private long[] decidedBy(long phi, long step, long quota, long window) {
    long[] decided = new long[size];
    // The latest boundary a report pinned its request before, and the latest admission among the
    // requests so pinned: a request answered before that admission was decided before it too.
    long pinnedBoundary = Long.MIN_VALUE;
    long pinnedAdmit = Long.MIN_VALUE;
    for (int i = 0; i < size; i++) {
      decided[i] = receipt[i];
      // On the wire across one boundary, the window before it all remembered, and reported.
      long boundary = start(phi, receipt[i], window);
      boolean across = receipt[i] != Long.MAX_VALUE && boundary - start(phi, admit[i] - step, window) == window
          && boundary - window >= knownFrom && reportedR[i] >= 0;
      if (across && !fits(i, boundary, Math.max(admit[i] - step, boundary), Math.min(receipt[i], boundary + window - 1),
          step, quota, window)) {
        decided[i] = boundary - 1;
        if (boundary > pinnedBoundary) {
          pinnedBoundary = boundary;
          pinnedAdmit = Long.MIN_VALUE;
        }
        if (boundary == pinnedBoundary) {
          pinnedAdmit = Math.max(pinnedAdmit, admit[i]);
        }
      }
    }
    for (int i = 0; i < size; i++) {
      long b = receipt[i];
      if (b != Long.MAX_VALUE && b <= pinnedAdmit && b >= pinnedBoundary && admit[i] - step < pinnedBoundary) {
        decided[i] = pinnedBoundary - 1;
      }
    }
    for (int k = 0; k < size; k++) {
      if (decided[k] != pinnedBoundary - 1 || reportedR[k] < 0 || receipt[k] == Long.MAX_VALUE) {
        continue;
      }
      // Decided before the boundary, its report says at least this many of that window's requests
      // were decided up to it: when that is every request that may have been, all of them were.
      long before = pinnedBoundary - window;
      long least = counted(k, before, Math.max(admit[k] - step, before), pinnedBoundary - 1, step, quota, window);
      long may = 0;
      for (int j = 0; j < size; j++) {
        may += admit[j] - step < pinnedBoundary && receipt[j] >= before && admit[j] - step <= receipt[k] ? 1 : 0;
      }
      if (least > 0 && least >= may) {
        for (int j = 0; j < size; j++) {
          if (admit[j] - step < pinnedBoundary && admit[j] - step <= receipt[k] && decided[j] >= pinnedBoundary) {
            decided[j] = pinnedBoundary - 1;
          }
        }
      }
    }
    Placement together = placed[reading][(int) (phi / step)];
    if (together != null) {
      // The first window's requests placed together: those that report more than q - count, and
      // the one tie, were decided before its end.
      long first = Long.MAX_VALUE;
      for (int i = 0; i < size; i++) {
        first = Math.min(first, admit[i] - step);
      }
      long boundary = start(phi, first, window) + window;
      for (int i = 0; i < size; i++) {
        if (admit[i] - step < boundary && decided[i] >= boundary
            && (reportedR[i] > quota - together.count() || i == together.tie())) {
          decided[i] = boundary - 1;
        }
      }
    }
    return decided;
  }

  /**
   * The first window's requests, placed together: {@code count} of those admitted before its end
   * were decided in it, the ones reporting more than {@code q - count} and request {@code tie}
   * (an index; -1 when one of the others reports {@code q - count}).
   */
  private record Placement(int count, int tie) {
    /** No count fits the reports: the phase is not the server's. */
    static final Placement NONE = new Placement(-1, -1);
  }

  /**
   * The first window's requests on the wire across its end, placed together under phase {@code
   * phi}: the fewest of the requests admitted before the first boundary that the reports allow to
   * have been decided before it, and which ones; {@link Placement#NONE} when no count fits, null
   * when the reports do not say (see the class comment).
   */
  private Placement placedTogether(long phi, long step, long quota, long window) {
    if (blindUntil != Long.MIN_VALUE || knownFrom != Long.MIN_VALUE || overflowed || size == 0) {
      return null;
    }
    long first = Long.MAX_VALUE;
    for (int i = 0; i < size; i++) {
      first = Math.min(first, admit[i] - step);
    }
    long boundary = start(phi, first, window) + window;
    int members = 0;
    int sure = 0;
    for (int i = 0; i < size; i++) {
      if (admit[i] - step >= boundary) {
        continue;
      }
      if (reportedR[i] < 0 || receipt[i] == Long.MAX_VALUE) {
        // A request of the first window not yet answered: any report may be its.
        return null;
      }
      members++;
      sure += receipt[i] < boundary ? 1 : 0;
    }
    if (sure == members) {
      return null;
    }
    long[] lo = new long[size];
    long[] hi = new long[size];
    for (int count = sure; count <= Math.min(members, quota); count++) {
      // The first window weighs nothing before it: its c-th decision reports q - c, so the requests
      // decided in it report q - 1 down to q - count, one each, and the ones decided after it, where
      // the first window still weighs count - 1 or (at the boundary's very instant) count, report at
      // most q - count, unless its weight had decayed by then.
      boolean late = false;
      boolean[] taken = new boolean[(int) quota + 1];
      boolean clash = false;
      int ties = 0;
      for (int i = 0; i < size; i++) {
        if (admit[i] - step >= boundary) {
          continue;
        }
        long r = reportedR[i];
        boolean before = receipt[i] < boundary || r > quota - count;
        late |= count > 0 && receipt[i] - boundary >= window / count;
        if (before) {
          clash |= r < quota - count || r >= quota || taken[(int) r];
          if (!clash) {
            taken[(int) r] = true;
          }
        } else if (r == quota - count) {
          ties++;
        }
      }
      if (late) {
        // A request that may have been decided where the first window's weight had decayed may
        // report more than q - count from the second: not placed.
        return null;
      }
      if (clash) {
        continue;
      }
      int missing = 0;
      for (long r = quota - count; r < quota; r++) {
        missing += taken[(int) r] ? 0 : 1;
      }
      boolean lastTaken = count == 0 || taken[(int) (quota - count)];
      if (missing == 0 && placedFits(boundary, -1, count, step, quota, window, lo, hi)) {
        return new Placement(count, -1);
      }
      if (missing == 1 && !lastTaken && ties > 0) {
        for (int t = 0; t < size; t++) {
          if (admit[t] - step < boundary && receipt[t] >= boundary && reportedR[t] == quota - count
              && placedFits(boundary, t, count, step, quota, window, lo, hi)) {
            return new Placement(count, t);
          }
        }
      }
    }
    return Placement.NONE;
  }

  /**
   * Whether every report of the first two windows is possible with the requests admitted before
   * {@code boundary} decided before it when they report more than {@code q - count} (or are {@code
   * tie}, or were answered before it), and at or after it otherwise (see {@link #placedTogether}).
   */
  private boolean placedFits(long boundary, int tie, int count, long step, long quota, long window, long[] lo,
      long[] hi) {
    for (int j = 0; j < size; j++) {
      lo[j] = admit[j] - step;
      hi[j] = receipt[j];
      if (lo[j] < boundary) {
        if (receipt[j] < boundary || reportedR[j] > quota - count || j == tie) {
          hi[j] = Math.min(hi[j], boundary - 1);
        } else {
          lo[j] = boundary;
        }
      }
    }
    for (int i = 0; i < size; i++) {
      if (reportedR[i] < 0 || hi[i] == Long.MAX_VALUE || lo[i] >= boundary + window) {
        continue;
      }
      long start = hi[i] < boundary ? boundary - window : boundary;
      if (lo[i] < start || hi[i] >= start + window) {
        // On the wire across the second window's end: not checked.
        continue;
      }
      if (counted(i, start, lo[i], hi[i], step, quota, window, lo, hi, true) == 0) {
        return false;
      }
    }
    return true;
  }

  /** Whether every report is possible under phase {@code phi} (see the class comment). */
  private boolean consistent(long phi, long step, long quota, long window) {
    for (int i = 0; i < size; i++) {
      if (reportedR[i] < 0 || receipt[i] == Long.MAX_VALUE) {
        continue;
      }
      long a = admit[i] - step;
      long b = receipt[i];
      long first = start(phi, a, window);
      long last = start(phi, b, window);
      if (last - first > window) {
        // On the wire across more than one boundary: not checked.
        continue;
      }
      // Decided in the window holding its admission, or (on the wire across a boundary) in the
      // next one: the report must be possible in one of them. A burst decided at one instant
      // straddles, for every report, the phases within a step of that instant; unchecked, they
      // would stand for good, each counting the whole burst in the next window.
      boolean fits = false;
      for (long start = first; start <= last && !fits; start += window) {
        fits = start - window < knownFrom
            || fits(i, start, Math.max(a, start), Math.min(b, start + window - 1), step, quota, window);
      }
      if (!fits) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether report {@code i} is possible for a decision in {@code [a, b]}, within the window
   * starting at {@code start} (with the previous window's requests all remembered).
   */
  private boolean fits(int i, long start, long a, long b, long step, long quota, long window) {
    return counted(i, start, a, b, step, quota, window) > 0;
  }

  /**
   * The fewest of the window's requests decided up to and with report {@code i} (itself among
   * them), when its report is possible for a decision in {@code [a, b]} within the window starting
   * at {@code start}; else 0.
   */
  private long counted(int i, long start, long a, long b, long step, long quota, long window) {
    return counted(i, start, a, b, step, quota, window, null, null, false);
  }

  /**
   * {@link #counted(int, long, long, long, long, long, long)} with each request {@code j} decided in
   * {@code [lo[j], hi[j]]} (null: its admission less {@code step}, its receipt), and with {@code
   * boundary}, a decision at the window's very start allowed (see {@link #placedTogether}).
   */
  private long counted(int i, long start, long a, long b, long step, long quota, long window, long[] lo, long[] hi,
      boolean boundary) {
    long sureCur = 1;
    long possCur = 1;
    long surePrev = 0;
    long possPrev = 0;
    // Of those possibly in the previous window, the ones answered before this window started: a
    // request on the wire across its start is in one window or the other, never in both.
    long possPrevOnly = 0;
    for (int j = 0; j < size; j++) {
      if (j == i) {
        continue;
      }
      long aj = lo == null ? admit[j] - step : lo[j];
      long bj = hi == null ? receipt[j] : hi[j];
      if (aj > b) {
        continue;
      }
      if (aj >= start && bj <= a) {
        sureCur++;
      }
      if (bj >= start) {
        possCur++;
      }
      if (aj >= start - window && bj < start) {
        surePrev++;
      }
      if (bj >= start - window && aj < start) {
        possPrev++;
        if (bj < start) {
          possPrevOnly++;
        }
      }
    }
    // Never decided at the boundary's own nanosecond (see the class comment), unless placed
    // together: there the previous window still weighs whole, a nanosecond later one unit less.
    long eLo = Math.max(boundary ? 0 : 1, a - start);
    long eHi = b - start;
    long usedLo = TwoCounterEstimate.weighted(surePrev, window, eHi) + sureCur;
    // Counted in the current window, a request on the wire across its start weighs 1; in the
    // previous one, at most 1: the most the estimate can be counts it in the current one.
    long usedHi = TwoCounterEstimate.weighted(possPrevOnly, window, eLo) + possCur;
    long r = reportedR[i];
    if (r < Math.max(0, quota - usedHi) || r > Math.max(0, quota - usedLo)) {
      return 0;
    }
    // The request was allowed, so the estimate after it was q - r: with the previous window's
    // weight bounded, that bounds the current window's count closer than the requests do.
    long curLo = Math.max(sureCur, quota - r - TwoCounterEstimate.weighted(possPrev, window, eLo));
    long curHi = Math.min(possCur, quota - r - TwoCounterEstimate.weighted(surePrev, window, eHi));
    if (curLo > curHi) {
      return 0;
    }
    // The instant the estimate is empty, at the earliest and the latest, must be within what the
    // report says of its reset: at most b + t, and after a + t - slack (for whole-second t, as
    // t >= ceil(empty - b) and t - slack < ceil(empty - a) say) or the instant known before it.
    long emptyEarliest = start + window + TwoCounterEstimate.decayPoint(curLo, 0, window);
    long emptyLatest = start + window + TwoCounterEstimate.decayPoint(curHi, 0, window);
    if (reportedMeaning[i] == ResetMeaning.UNTIL_MORE || (reportedMeaning[i] == ResetMeaning.EITHER && reading == UNTIL_NEXT)) {
      // Read as draft-10's t, the instant the estimate falls by one unit instead.
      long[] next = TwoCounterEstimate.nextUnit(start, curLo, curHi, quota - r, surePrev, possPrev, window);
      if (next == null) {
        return 0;
      }
      emptyEarliest = next[0];
      emptyLatest = next[1];
    }
    long t = reportedT[i];
    long low = reportedLow[i] != Long.MIN_VALUE ? reportedLow[i] : Math.max(admit[i], a + step) + t - slack;
    // A relative t counts from the decision, at most b here; an epoch reset read through the
    // server's clock (reportedLow known) is at most t after the receipt, whatever window the
    // decision is placed in (a request on the wire across a boundary, placed before it).
    long high = reportedLow[i] != Long.MIN_VALUE ? Ceilings.saturatingAdd(receipt[i], t) : b + t;
    return emptyEarliest <= high && emptyLatest > low - step ? curLo : 0;
  }

  private int find(long s) {
    for (int i = size - 1; i >= 0; i--) {
      if (seq[i] == s) {
        return i;
      }
    }
    return -1;
  }
}
