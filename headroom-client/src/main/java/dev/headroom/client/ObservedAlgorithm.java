package dev.headroom.client;

import java.util.OptionalLong;

/**
 * What the client has learnt about the algorithm behind one budget, from the reports it has seen.
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>draft-ietf-httpapi-ratelimit-headers-09 does not say which algorithm a server runs (section 3:
 * "the service limit ... is not intended to be a representation of the quota policy"), yet how a
 * client should spend depends on it: a fixed window gives back all {@code q} units at its reset and
 * nothing before, so units not spent by then are lost and units spent early cost nothing; a token
 * bucket refills one unit every {@code w / q}, so a client waiting for its {@code t} (the time until
 * it is full) waits for a whole window; a sliding window gives units back as the previous window's
 * weight decays. Each leaves its mark on successive reports of {@code r} and {@code t}:
 *
 * <ul>
 *   <li>Every report bounds the reset instant {@code R}: its request was decided at some {@code s}
 *       between the admission {@code a} and the receipt {@code b}, and {@code t} is {@code R - s}
 *       rounded to whole seconds (section 4.1.2; servers round up), so {@code R} is in
 *       {@code (a + t - 1 s, b + t]}. The upper end is what waiting is measured against (it is never
 *       early); the lower end is the latest instant at which a unit is sure to count in this window.
 *   <li><b>Fixed window</b>: {@code R} does not move while the window lasts, so the bounds of all its
 *       reports overlap, and their intersection narrows it (reports decided at different fractions
 *       of a second cut the one-second uncertainty down to the latency). Past {@code R} a report's
 *       bounds lie after the old ones and {@code r} has gone <em>up</em>: the jump back towards
 *       {@code q}. One such jump, with no refill or moving reset seen, recognises the fixed window.
 *       A window of one request followed by the first request of the next says {@code q - 1}
 *       twice: a fixed window's reset, or a refill that moved the reset later. Both stay possible
 *       (the algorithm stays unknown) until a later report rules one out.
 *   <li><b>Refilling</b> (token bucket, sliding window): {@code r} goes up in a report of a request
 *       decided after an earlier report arrived and before that report's reset could have passed (a
 *       fixed window never does this), or the reset moves later without {@code r} going up (a token
 *       bucket's time until full grows with every unit spent; a sliding window's time until empty
 *       too). Either recognises a refilling algorithm, for good.
 *   <li><b>Token bucket</b>: a refilling budget whose last {@value #TOKEN_BUCKET_FITS} reports all
 *       state {@code t} as the time until full, {@code (q - r) * w / q} rounded up (within one
 *       unit's refill, {@code tokens} being in {@code [r, r + 1)}), and which never said a {@code t}
 *       beyond {@code w + 1 s} (a sliding window's time until empty can be nearly {@code 2 w}).
 *       Only then does the client credit the refill at {@code q / w} between reports.
 * </ul>
 *
 * <p>What {@code t} names differs by draft ({@link ResetMeaning}): above, draft-09's time until the
 * quota resets (section 4.1.2). draft-10 and -11 (section 4.1.2) send the time until more quota is
 * available, the same instant for a fixed window but a token bucket's next token ({@code t=1}
 * throughout for 10 per 5 s) and a sliding window's next unit. Their bounds then move as a fixed
 * window's reset would, a second at a time, with {@code r} back up by a unit or two: so, when the
 * policy states {@code q}, a jump is a fixed window's only when {@code r} came back to {@code q - 1}
 * less the requests that may have been decided before it in the new window; a smaller one is a
 * refill. And a token bucket whose
 * reports fit its time until full is taken for one only when some report's {@code t} was longer than
 * a refill rounded up ({@link #saidUntilFull}), which no time until the next token is; near a full
 * bucket the two meanings fit alike, and so does a sliding window's next unit.
 *
 * <p>Worked numbers: {@code q=10, w=5 s}, a fixed window resetting at 12.30 s. A request admitted
 * at 10.00 s and answered at 10.01 s says {@code t=3}: {@code R} in (12.00, 13.01]. One admitted at
 * 10.50 s says {@code t=2}: {@code R} in (11.50, 12.51], and the intersection is (12.00, 12.51]. A
 * request admitted at 12.52 s says {@code r=9;t=5} (its bounds, (16.52, 17.53], lie after): the
 * jump that recognises the fixed window.
 *
 * <p>Nothing learnt here ever lets more than the reported {@code r} go before the reset: it only
 * narrows the upper bound of a fixed window's reset (which stays an upper bound), and credits a
 * token bucket's refill from the receipt of a report (the server decided earlier, so the bucket
 * holds at least that much). Not thread-safe: the tracker's lock guards it.
 */
final class ObservedAlgorithm {

  /** What the reports so far say the server runs. */
  enum Kind {
    /** Nothing recognised yet: the client spends as it always has. */
    UNKNOWN,
    /** {@code r} jumped up past the reset and never rose before it; the reset did not move. */
    FIXED_WINDOW,
    /** A refilling budget whose {@code t} is the time until full at {@code q / w}. */
    TOKEN_BUCKET,
    /** Refills before the reset or moves the reset, but is not recognised as a token bucket. */
    REFILLING
  }

  /** Consecutive reports that must state a token bucket's time until full. */
  static final int TOKEN_BUCKET_FITS = 3;

  /** Whole seconds: the resolution of {@code t}. */
  static final long SECOND = 1_000_000_000L;

  /** How much earlier than its window's first request a fixed window's reset must be found to be aligned. */
  static final long ALIGNMENT_PROBE_MARGIN = 50_000_000L;

  /** Windows in which a unit is held back to learn whether the windows are aligned. */
  static final int MAX_ALIGNMENT_PROBES = 2;

  private boolean bounded;
  private long low;
  private long high;
  private long windowMinR = Long.MAX_VALUE;
  private boolean jumped;
  /** The vendor documents a fixed window ({@link #documentedFixedWindow}). */
  private boolean documentedFixed;
  private boolean refilled;
  private long prevR = -1;
  private long prevReceipt;
  private long prevLow;
  private int bucketFits;
  /** A report's t fit a token bucket's time until full and was longer than any time until its next token. */
  private boolean untilFull;
  private boolean beyondWindow;
  private boolean policyKnown;
  private long prevAnswer = -1;
  private long window = -1;
  private boolean seenStarting;
  private long windowFirstAdmit;
  private boolean aligned;
  private int unverifiedWindows;
  /**
   * An instant the current window's reset is known to be after, carried from the last window: a
   * fixed window of length {@code w} starts at or after the last one's reset and lasts {@code w},
   * whether aligned to the clock or anchored at its first request, so its reset is after the last
   * one's lower bound plus {@code w}. {@code Long.MIN_VALUE} when nothing is carried.
   */
  private long floor = Long.MIN_VALUE;

  /**
   * Notes one report: {@code r} as the server said it (clamped to the quota), the quota and window
   * ({@code -1} when unknown), when its request was admitted and its answer received, and
   * {@code t} in nanoseconds.
   */
  void report(long r, long quota, long window, long admittedAt, long receivedAt, long t, long resetLow,
      long answersAtAdmit, long answerNumber) {
    report(r, quota, window, admittedAt, receivedAt, t, resetLow, answersAtAdmit, answerNumber, 0);
  }

  /**
   * {@link #report}, for a request that was on the wire with {@code concurrent} others (still in
   * flight at its answer, or answered while it was on the wire): the server may have decided each
   * of them before it, in the same window.
   */
  void report(long r, long quota, long window, long admittedAt, long receivedAt, long t, long resetLow,
      long answersAtAdmit, long answerNumber, long concurrent) {
    long a = resetLow != Long.MIN_VALUE ? resetLow : saturatingAdd(admittedAt, t - SECOND);
    long b = saturatingAdd(receivedAt, t);
    if (prevR >= 0 && answersAtAdmit > prevAnswer && receivedAt <= prevLow && r > prevR) {
      // Admitted after the previous report was recorded (so decided after it), and decided before
      // that report's reset could have passed.
      refilled = true;
    }
    policyKnown = quota > 0 && window > 0;
    if (window != this.window) {
      aligned = false;
      this.window = window;
    }
    if (policyKnown) {
      beyondWindow |= t > window + SECOND;
      double perUnit = (double) window / quota;
      boolean fits = t > (quota - r - 1) * perUnit && t < (quota - r) * perUnit + SECOND;
      bucketFits = fits ? bucketFits + 1 : 0;
      // draft-10's t of a token bucket is at most one refill, rounded up to whole seconds.
      untilFull |= fits && t > Math.ceil(perUnit / SECOND) * SECOND;
    }
    if (!bounded) {
      startWindow(a, b, r);
    } else if (a < high && b > low) {
      low = Math.max(low, a);
      high = Math.min(high, b);
      windowMinR = Math.min(windowMinR, r);
      windowFirstAdmit = Math.min(windowFirstAdmit, admittedAt);
    } else if (a >= high) {
      if (r > windowMinR && policyKnown && r < quota - 1 - concurrent) {
        // Units came back, but not the whole quota: a fixed window's first report of a new window
        // says q - 1, less the requests that may have been decided before it. A sliding window's
        // or a token bucket's next unit, which draft-10's t names (r=0;t=1, then r=1;t=1 a second
        // later), moves the bounds as a fixed window's reset would.
        refilled = true;
        aligned = false;
      } else if (r > windowMinR) {
        jumped = true;
      } else if ((r == windowMinR && r == quota - 1) || (policyKnown && r >= quota - 1 - concurrent
          && b > saturatingAdd(Math.max(low, floor), window))) {
        // A window of one request, then the first of the next, each leaving q - 1: a fixed window's
        // reset and a refill that moved the reset later say the same. Neither is taken for it; the
        // next reset (a jump) or a reset moving within a window (a refill) tells them apart. So too
        // when requests on the wire with this one may have spent the new window's units before it
        // and its reset may be a whole window after the last one's (callers racing a reset: a fixed
        // window read as refilling is spent as a sliding window, whose model then lets units go
        // that the fixed window does not have). A refill within a burst moves the reset by less.
        aligned = false;
      } else {
        // The reset moved later and nothing came back: not a fixed window.
        refilled = true;
        aligned = false;
      }
      long carriedLow = low;
      long carriedHigh = high;
      long carriedFloor = policyKnown && !refilled ? saturatingAdd(Math.max(low, floor), window) : Long.MIN_VALUE;
      startWindow(a, b, r);
      // A floor at or past the new window's upper bound contradicts it: not a fixed window of w.
      floor = carriedFloor < high ? carriedFloor : Long.MIN_VALUE;
      seenStarting = true;
      windowFirstAdmit = admittedAt;
      if (aligned) {
        carry(carriedLow, carriedHigh);
      } else {
        unverifiedWindows++;
      }
    } else if (policyKnown && high <= saturatingAdd(a, window)) {
      // Bounds wholly before the current window's, as a report of a window already over would
      // have; but a fixed window of w resets at least w after the last reset, which was after
      // a, and the current reset is no later than that. Concurrent answers recorded out of
      // order (a burst against a sliding window whose reset moved later with each unit) say this.
      refilled = true;
      aligned = false;
    }
    // else: the report of a window already over, answered late: it says nothing new.
    if (!aligned && seenStarting && policyKnown && !refilled && high < saturatingAdd(windowFirstAdmit, window)) {
      // A window anchored at its first request (express-rate-limit, Redis EXPIRE at the first hit)
      // resets w after that request was decided, never before: this one resets at a fixed phase.
      aligned = true;
    }
    prevR = r;
    prevReceipt = receivedAt;
    prevLow = a;
    prevAnswer = answerNumber;
  }

  /**
   * Narrows a new window of an aligned fixed window by the last one's bounds, moved on by whole
   * windows: its reset is exactly {@code k * w} after the last. Bounds that do not meet prove the
   * windows are not aligned after all.
   */
  private void carry(long lastLow, long lastHigh) {
    long k = Math.max(1, Math.round(((double) (low - lastLow) + (high - lastHigh)) / 2 / window));
    long cl = saturatingAdd(lastLow, k * window);
    long ch = saturatingAdd(lastHigh, k * window);
    if (low < ch && high > cl) {
      low = Math.max(low, cl);
      high = Math.min(high, ch);
    } else {
      aligned = false;
    }
  }

  /** The current window's bounds moved {@code nanos} later: they were read from resets that early. */
  void later(long nanos) {
    if (bounded) {
      low = saturatingAdd(low, nanos);
      high = saturatingAdd(high, nanos);
    }
    if (floor != Long.MIN_VALUE) {
      floor = saturatingAdd(floor, nanos);
    }
  }

  private void startWindow(long a, long b, long r) {
    bounded = true;
    low = a;
    high = b;
    windowMinR = r;
  }

  /**
   * When a unit held back in a window of a recognised fixed window, not yet known to be aligned,
   * would tell whether it is: decided just before {@code windowFirstAdmit + w - 1 s}, its {@code t}
   * is 1 (and its upper bound is before {@code windowFirstAdmit + w}, which a window anchored at its
   * first request never is) exactly when the reset is earlier. Empty when there is nothing to learn:
   * aligned already, the window's start not seen, no policy, or two windows tried.
   */
  OptionalLong alignmentProbe() {
    if (aligned || !seenStarting || !policyKnown || refilled || !jumped || unverifiedWindows > MAX_ALIGNMENT_PROBES) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(windowFirstAdmit + window - SECOND - ALIGNMENT_PROBE_MARGIN);
  }

  /** Whether the windows are known to reset at a fixed phase, so that each one's bounds carry to the next. */
  boolean aligned() {
    return aligned;
  }

  /** What the reports so far say. */
  Kind kind() {
    if (refilled) {
      return policyKnown && !beyondWindow && bucketFits >= TOKEN_BUCKET_FITS ? Kind.TOKEN_BUCKET : Kind.REFILLING;
    }
    return jumped || documentedFixed ? Kind.FIXED_WINDOW : Kind.UNKNOWN;
  }

  /**
   * The vendor documents the budget as a fixed window ({@link DocumentedAlgorithm}): it is taken for
   * one from its first report, before a jump shows it, unless the reports show a refill.
   */
  void documentedFixedWindow() {
    documentedFixed = true;
  }

  /**
   * Whether a report's {@code t} fit a token bucket's time until full (draft-09 section 4.1.2) and
   * was longer than one refill rounded up to whole seconds, which draft-10's and -11's time until
   * the next token never is: then a {@link ResetMeaning#EITHER} reading of a recognised token bucket
   * is draft-09's.
   */
  boolean saidUntilFull() {
    return untilFull;
  }

  /** Whether any report bounded the reset. */
  boolean bounded() {
    return bounded;
  }

  /** The latest instant known to be before the current window's reset. */
  long low() {
    return low;
  }

  /** The earliest instant known to be at or after the current window's reset. */
  long high() {
    return high;
  }

  /**
   * The latest instant known to be before the current window's reset: {@link #low()}, or the
   * floor carried from the last window (see {@code floor}) when that is later.
   */
  long lowest() {
    return Math.max(low, floor);
  }

  /** How much later than the current window's reset {@link #high()} may be. */
  long uncertainty() {
    return bounded ? saturatingAdd(high, -lowest()) : Long.MAX_VALUE;
  }

  private static long saturatingAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? (a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE) : r;
  }
}
