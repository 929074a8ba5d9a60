package dev.headroom.client;

import java.util.Collections;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The window of a refilling budget whose fields state none, learnt from what the reports do.
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>{@code X-RateLimit-Limit}, {@code -Remaining} and {@code -Reset} (GitHub's form, listed by
 * draft-ietf-httpapi-ratelimit-headers-09 among the "RateLimit header fields currently used on the
 * web") give {@code q}, {@code r} and the reset, but no window, and how fast a refilling budget
 * gives units back depends on it: {@code q / w} for a token bucket, the last window's weight
 * decaying over {@code w} for a sliding window. {@link ObservedAlgorithm} tells a fixed window
 * (which needs no window: its reset says when all {@code q} come back) from a refilling budget
 * without one; this class keeps every hypothesis of a refilling algorithm and window that fits all
 * the reports so far, and the client spends as the most cautious of them allows:
 *
 * <ul>
 *   <li>Every report bounds the instant {@code R} it names: {@code (a + t - SLACK, b + t]}, the
 *       request decided between its admission {@code a} and receipt {@code b}. An epoch reset
 *       rounded up and read against a {@code Date} truncated to the second is up to two seconds
 *       late ({@link #SLACK}); a relative {@code t} rounded up, one.
 *   <li><b>Token bucket</b>, one unit per {@code d = w / q}: its {@code t} is the time until full,
 *       {@code (q - tokens) * d} with {@code tokens} in {@code [r, r + 1)}, so each report puts
 *       {@code d} in {@code ((t - SLACK - (b - a)) / (q - r), (t + (b - a)) / (q - r - 1))}.
 *       And the units the server has ever made available, {@code F = g + r} ({@code g} the
 *       client's requests it decided up to this one, known to within the requests on the wire),
 *       grow by one every {@code d}, or less while the bucket is full: two reports {@code i, j}
 *       bound {@code d <= (b_j - a_i) / (F_j - F_i - 1)}. The intersection of all these is the
 *       bucket's {@code d}; when it is empty, the server is no token bucket. The client credits the
 *       refill at its upper end, the slowest refill that fits: never faster than the server's.
 *   <li><b>Sliding window</b> of {@code w} whole seconds (deployed limiters state windows in
 *       seconds: Cloudflare's periods, Kong's, Redis recipes keyed by {@code now / w}): its {@code t}
 *       is the time until its estimate is empty, below {@code 2 w}, so {@code w > (t - SLACK -
 *       (b - a)) / 2}; its {@code F} grows by the last window's count per window, at most {@code q},
 *       so the same pairs bound {@code w <= q * (b_j - a_i) / (F_j - F_i - 1)}; and while nothing
 *       was given back since the budget was full ({@code F = q}), the previous window weighs
 *       nothing, so all {@code N} requests so far are in the current one and
 *       {@code t > w - w / N}: {@code w < t * N / (N - 1)}, known after the first few. When the
 *       first report said {@code q - 1}, its reset is the end of the first window (one unit, which
 *       weighs nothing a nanosecond after its window ends), so that end is after the report's lower
 *       bound {@code E1}; then every report with {@code q - r >= 2} bounds {@code w} whether or not
 *       a boundary came between, which a burst straddling the first window's end (a unit given
 *       back) leaves no other bound for: decided in the first window, its estimate is that
 *       window's count alone, {@code q - r}, so {@code w < t * (q - r) / (q - r - 1)} as above;
 *       decided in a later one, which starts at or after {@code E1}, its own unit weighs until
 *       that window ends, so {@code w <= b + t - E1}. The larger of the two holds. Once at most
 *       {@value #MAX_CANDIDATES} windows lie between, each is modelled by a {@link
 *       SlidingWindowModel} of the client's own requests, which rules out the phases (and so the
 *       windows) the reports contradict.
 * </ul>
 *
 * <p>While a token bucket and some sliding windows all fit, a request goes when every one of them
 * allows it (the latest of their instants), or at once while {@code r} (less the requests the
 * server may not have counted in it) says a unit is left, which no refilling algorithm takes back. When only the token bucket is left, the budget is a
 * token bucket of window {@code q * d} ({@link #bucketWindow}) and is spent as one with a stated
 * window is; when a window's model is all that is left, as a sliding window with that window. When
 * nothing can be said yet (no bound, too many windows), the client spends as it does without this
 * class, which also keeps the reports coming.
 *
 * <p>Worked numbers: {@code q=10}, a bucket of {@code d=0.5 s} drained to {@code r=5}, the client
 * sending one request every 0.5 s at {@code r=5}: {@code t} is 3 or 4 ({@code 2.5 s} until full,
 * rounded up, plus up to a second for the {@code Date}), so {@code d} is in {@code (0.2, 0.75)}
 * s by {@code t}; after 10 s, 20 more units were made available: {@code d <= 10 / 19 = 0.53} s.
 * The largest {@code t} (4) leaves sliding windows of 2 to 5 s ({@code w > 1} and
 * {@code w <= 10 * 0.53}); their models are ruled out within a window (a sliding window's {@code t}
 * at this {@code r} is at least {@code w - e}), and the five units in hand go at once.
 *
 * <p>Premise: one client spends the budget (as for {@link SlidingWindowModel}). A refusal or a
 * request lost on the wire ends the inference for good ({@link #disable}): the client spends as
 * without it. Memory is bounded: {@value #RECENT} reports and at most {@value #MAX_CANDIDATES}
 * models (each about 6 KB while the windows are told apart; they are dropped as they are ruled
 * out). Not thread-safe: the tracker's lock guards it.
 */
final class WindowInference {

  /** Whole seconds: the resolution of {@code t}. */
  static final long SECOND = 1_000_000_000L;

  /** How much later than the instant it names a reported reset may be (see the class comment). */
  static final long SLACK = 2 * SECOND;

  /** Most sliding windows modelled at once; with more in the range, nothing is modelled yet. */
  static final int MAX_CANDIDATES = 10;

  /** Reports remembered to pair with later ones. */
  static final int RECENT = 64;

  final long quota;
  /** A token bucket's {@code d} is above this (nanoseconds a unit). */
  private double perUnitLow;
  /** ... and at most this, by the reports' {@code t}. */
  private double perUnitHighT = Double.POSITIVE_INFINITY;
  /** ... and by the units made available between two reports; also bounds a sliding window's {@code w / q}. */
  private double perUnitHighF = Double.POSITIVE_INFINITY;
  /** A sliding window's {@code w} is above this (nanoseconds). */
  private double windowLow;
  /** ... and below this, while nothing was given back since the budget was full. */
  private double windowHigh = Double.POSITIVE_INFINITY;
  /** An instant before the end of a sliding window's first window (the first report's reset less 1 ns), when {@link #fromFull}. */
  private double firstEnd;
  /** The first report was of the scope's first request, from a full budget. */
  private boolean fromFull;
  private boolean bucketRefuted;
  private boolean disabled;
  private final long[] admit = new long[RECENT];
  private final long[] madeHigh = new long[RECENT];
  private int reports;
  /** Whole-second windows still modelled, once the range is small enough. */
  private final TreeMap<Long, SlidingWindowModel> candidates = new TreeMap<>();
  private boolean modelled;

  WindowInference(long quota) {
    this.quota = quota;
  }

  /**
   * Notes a report: {@code r} as said, the request's admission and receipt, {@code t} in
   * nanoseconds, and how many of the scope's requests the server may have decided up to and with
   * this one ({@code grantedLow} to {@code grantedHigh}); {@code base} models the client's requests
   * for no window in particular and is copied for each window modelled.
   */
  void report(long r, long admittedAt, long receivedAt, long t, long resetLow, long grantedLow, long grantedHigh,
      SlidingWindowModel base) {
    if (disabled) {
      return;
    }
    double flight = Math.max(0, (double) receivedAt - admittedAt);
    // How long after the receipt the reset surely is: by t, or by an instant known before it.
    double late = resetLow == Long.MIN_VALUE ? (double) t - SLACK - flight : (double) resetLow - receivedAt;
    long left = quota - r;
    if (left <= 0) {
      bucketRefuted |= late > 0;
    } else {
      perUnitLow = Math.max(perUnitLow, late / left);
    }
    if (left - 1 > 0) {
      perUnitHighT = Math.min(perUnitHighT, ((double) t + flight) / (left - 1));
    }
    windowLow = Math.max(windowLow, late / 2);
    if (reports == 0) {
      fromFull = grantedLow == 1 && r == quota - 1;
      // The first window of a sliding window ends a nanosecond before the first report's reset.
      firstEnd = resetLow != Long.MIN_VALUE ? (double) resetLow : (double) admittedAt + t - SLACK;
      firstEnd -= 1;
    } else if (fromFull && grantedLow >= 2 && Ceilings.saturatingAdd(grantedHigh, r) <= quota) {
      // Nothing given back yet: every request so far is in the current window of a sliding window
      // (the previous one's weight would have given one back), N = grantedLow or more of them, so
      // t > w - w / N: w < t * N / (N - 1).
      windowHigh = Math.min(windowHigh, ((double) t + flight) * grantedLow / (grantedLow - 1));
    }
    if (fromFull && left >= 2) {
      // Decided in the first window, the estimate is that window's count alone, q - r: the reset
      // is more than w - w / (q - r) away. Decided in a later one, which starts at or after the
      // first one's end, the request itself weighs until its window ends: the reset is at least w
      // after the first window's end. Either way w is bounded (see the class comment).
      double resetHigh = (double) receivedAt + t;
      double inFirst = ((double) t + flight) * left / (left - 1);
      double inLater = resetHigh - firstEnd + 1;
      windowHigh = Math.min(windowHigh, Math.max(inFirst, inLater));
    }
    long low = Ceilings.saturatingAdd(grantedLow, r);
    long high = Ceilings.saturatingAdd(grantedHigh, r);
    for (int i = 0; i < Math.min(reports, RECENT); i++) {
      double made = (double) low - madeHigh[i];
      if (made >= 2) {
        perUnitHighF = Math.min(perUnitHighF, ((double) receivedAt - admit[i]) / (made - 1));
      }
    }
    int k = reports++ % RECENT;
    admit[k] = admittedAt;
    madeHigh[k] = high;
    bucketRefuted |= perUnitLow >= perUnitHigh();
    narrow(receivedAt, base);
  }

  /** Keeps the models of the whole-second windows still in range, ruling out those the reports contradict. */
  private void narrow(long now, SlidingWindowModel base) {
    long min = Math.max(1, (long) Math.floor(windowLow / SECOND) + 1);
    long max = maxWindowSeconds();
    if (max == Long.MAX_VALUE) {
      return;
    }
    base.prune(now, Math.min(max, SlidingWindowModel.MAX_WINDOW / SECOND) * SECOND);
    if (!modelled && max - min + 1 <= MAX_CANDIDATES) {
      for (long w = min; w <= max; w++) {
        candidates.put(w, base.copyFor(w * SECOND, SLACK));
      }
      modelled = true;
    }
    for (Iterator<Map.Entry<Long, SlidingWindowModel>> it = candidates.entrySet().iterator(); it.hasNext();) {
      Map.Entry<Long, SlidingWindowModel> c = it.next();
      long w = c.getKey();
      if (w < min || w > max || c.getValue().refuted(now, quota, w * SECOND)) {
        it.remove();
      }
    }
  }

  private long maxWindowSeconds() {
    double byMade = Math.floor(quota * perUnitHighF / SECOND);
    // Strictly below windowHigh.
    double w = Math.min(byMade, Math.ceil(windowHigh / SECOND) - 1);
    return w >= Long.MAX_VALUE / SECOND ? Long.MAX_VALUE : (long) w;
  }

  private double perUnitHigh() {
    return Math.min(perUnitHighT, perUnitHighF);
  }

  /** Whether no sliding window of whole seconds fits the reports. */
  private boolean slidingRefuted() {
    long max = maxWindowSeconds();
    return max != Long.MAX_VALUE && (max < Math.max(1, (long) Math.floor(windowLow / SECOND) + 1)
        || (modelled && candidates.isEmpty()));
  }

  /** Whether a token bucket fits the reports, with a bounded refill. */
  private boolean bucketFits() {
    return !bucketRefuted && perUnitHigh() < Double.POSITIVE_INFINITY;
  }

  /** Whether the reports fit a token bucket and nothing else: then it is spent as one of {@link #bucketWindow}. */
  boolean bucketOnly() {
    return !disabled && bucketFits() && slidingRefuted();
  }

  /** The window of the slowest token bucket the reports fit ({@code q * d}); for {@link #bucketOnly} budgets. */
  long bucketWindow() {
    double w = Math.ceil(quota * perUnitHigh());
    return w >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) w;
  }

  /**
   * When one more request is allowed by every hypothesis that fits the reports (see the class
   * comment), at or after {@code now}; {@code -1} when nothing can be said yet, {@code Long.MAX_VALUE}
   * when only the answers to requests in flight can tell. {@code remaining} is the budget's units
   * left as counted locally, {@code refillFrom} the receipt its token-bucket refill counts from.
   */
  long nextAllowed(long now, long remaining, int inFlight, long refillFrom) {
    if (disabled || !(modelled || slidingRefuted())) {
      return -1;
    }
    if (remaining > 0) {
      // The server's own word, less the requests it may not have counted in it: whatever the
      // algorithm, a unit it said was left is still there (none of them takes units back).
      return now;
    }
    long latest = now;
    for (Iterator<Map.Entry<Long, SlidingWindowModel>> it = candidates.entrySet().iterator(); it.hasNext();) {
      Map.Entry<Long, SlidingWindowModel> c = it.next();
      long w = c.getKey() * SECOND;
      long at = c.getValue().nextAllowed(now, quota, w);
      if (at == -1) {
        if (c.getValue().refuted(now, quota, w)) {
          it.remove();
          continue;
        }
        return -1;
      }
      latest = Math.max(latest, at);
    }
    if (!bucketRefuted) {
      if (!bucketFits()) {
        return -1;
      }
      long bucket = inFlight > 0 ? Long.MAX_VALUE : Ceilings.saturatingAdd(refillFrom, (long) Math.ceil(perUnitHigh()));
      latest = Math.max(latest, bucket);
    } else if (candidates.isEmpty()) {
      return -1;
    }
    return latest;
  }

  /** The whole-second windows of a sliding window that still fit the reports, once modelled. */
  Set<Long> windows() {
    return Collections.unmodifiableSet(candidates.keySet());
  }

  /** A request of the scope was admitted: every window's model counts it. */
  void admitted(long seq, long at) {
    candidates.values().forEach(m -> m.admitted(seq, at));
  }

  /** A request of the scope was answered, or failed, at {@code now}. */
  void received(long seq, long at, long now) {
    candidates.values().forEach(m -> m.received(seq, at, now));
  }

  /** A report of this budget reached every window's model. */
  void reported(long seq, long at, long now, long r, long tNanos, long resetLow) {
    candidates.values().forEach(m -> m.reported(seq, at, now, r, tNanos, resetLow, ResetMeaning.UNTIL_RESET));
  }

  /** A refusal, or a request lost on the wire: the premise failed, and nothing is inferred again. */
  void disable() {
    disabled = true;
    candidates.clear();
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "d in (%.3f, %.3f|%.3f) bucket%s, w in (%.2f, %.2f), candidates %s%s",
        perUnitLow / 1e9, perUnitHighT / 1e9, perUnitHighF / 1e9, bucketRefuted ? " refuted" : "", windowLow / 1e9,
        windowHigh / 1e9,
        candidates.keySet(), disabled ? " disabled" : "");
  }
}
