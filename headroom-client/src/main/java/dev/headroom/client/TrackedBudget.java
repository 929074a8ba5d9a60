package dev.headroom.client;

import dev.headroom.QuotaUnit;
import java.util.Base64;
import java.util.LinkedHashSet;

/**
 * One budget of a scope, as {@link BudgetTracker} keeps it: what the last report said about one
 * policy (and partition key), counted down locally, with what the reports so far say about the
 * server's algorithm ({@link ObservedAlgorithm}). Not thread-safe: the tracker's lock guards it.
 */
final class TrackedBudget {

  /** Answers per budget remembered with their r, to tell which were decided before a later report. */
  static final int RECENT = 32;

  final String policy;
  final String pk;
  final DiscoveredLimits.Endpoint endpoint;
  long remaining;
  long resetAt;
  long quota = -1;
  long window = -1;
  /** The quota unit remaining and quota count, lower case ({@link RequestCost}). */
  String unit = RequestCost.REQUESTS;
  long lastAdmit;
  boolean probeAtReset;
  String source;
  /** The vend calls this budget paces ({@link VendCall#labels()}); null for every request of the scope. */
  String selector;
  /** What the reports say about the server's algorithm. */
  final ObservedAlgorithm seen = new ObservedAlgorithm();
  /** Since when a recognised token bucket's refill is credited. */
  long refillFrom;
  /** The client's model of a sliding window behind this budget; replaced when the budget is first reported. */
  SlidingWindowModel sliding = new SlidingWindowModel();
  /** What the reports say of the window when the fields state none ({@link Pacing#ADAPTIVE}); null otherwise. */
  WindowInference inferred;
  /** The least r reported since the scope was last idle ({@link ScopeState#settle}). */
  long batchLeast = Long.MAX_VALUE;
  /** The earliest and latest reset those reports named (receipt plus t). */
  long batchResetLow = Long.MAX_VALUE;
  long batchResetHigh = Long.MIN_VALUE;
  /** Created while the scope was busy: the reports before it are not in {@link #batchLeast}. */
  boolean batchPartial;
  /** The window was restarted locally: one request goes and its answer confirms it. */
  boolean confirm;
  /** The routes a named vendor bucket answered for, which it paces ({@link BucketRoutes}); null for every request. */
  LinkedHashSet<String> routes;
  /** A request was refused while this budget paced it: the client is not alone in spending it ({@link EvenSpacing}). */
  boolean refused;
  /** What the last report's {@code t} named: the quota whole again, or more quota ({@link ResetMeaning}). */
  ResetMeaning meaning = ResetMeaning.UNTIL_RESET;
  /** The last report's reset was an epoch instant read through the server's Date ({@link ServerClock}). */
  boolean epochReset;
  /**
   * The earliest instant the first window may end, and the latest, when the fields state no window
   * and the budget was first reported full less one ({@link #firstWindow}); {@code Long.MIN_VALUE}
   * otherwise.
   */
  long firstWindowLow = Long.MIN_VALUE;
  long firstWindowHigh = Long.MIN_VALUE;
  private boolean reportedOnce;
  /**
   * The last report of a budget read as a documented leak ({@link DocumentedAlgorithm}): the
   * admission number of its request when it was alone on the wire ({@code -1} otherwise), its
   * {@code r}, its receipt.
   */
  long leakSeq = -1;
  long leakSaid;
  long leakAt;
  /** Units are held back to narrow a fixed window's reset ({@link ResetBisection}). */
  boolean bisecting;
  /** The uncertainty when the last probe went, until its answer ({@link ResetBisection}); 0 when none. */
  long probedAt;
  /** The uncertainty at which bisection last stopped making progress ({@link ResetBisection}). */
  long stalledAt;
  /** The last {@value #RECENT} answers' reported r, by answer number (ring). */
  private final long[] recentAnswer = new long[RECENT];
  private final long[] recentR = new long[RECENT];
  private int recentCount;

  TrackedBudget(String policy, String pk, DiscoveredLimits.Endpoint endpoint) {
    this.policy = policy;
    this.pk = pk;
    this.endpoint = endpoint;
  }

  /**
   * Whether this budget counts requests (one unit each), which every model of the server's
   * algorithm here assumes; a budget in another unit ({@link RequestCost}) is spent by each
   * request's stated cost and waited for until its reset.
   */
  boolean countsRequests() {
    return RequestCost.REQUESTS.equals(unit);
  }

  /**
   * For a {@code concurrent-requests} budget ({@link #limitsConcurrency}): how many of the scope's
   * requests may be on the wire at once. At most the quota, and at most what the last report left
   * free: its {@code r} plus the scope's requests it may have counted (those on the wire when it
   * was answered, and its own unless it was refused). Every number saturates.
   */
  long concurrencyCap = Long.MAX_VALUE;

  /**
   * Whether this budget counts requests on the wire ({@code qu="concurrent-requests"},
   * draft-ietf-httpapi-ratelimit-headers-09 section 3.1.2): its units come back as requests
   * complete, and it bounds how many go at once ({@link #concurrencyCap}), not how many go per window.
   */
  boolean limitsConcurrency() {
    return QuotaUnit.CONCURRENT_REQUESTS.token().equals(unit);
  }

  /**
   * Notes a report of a {@code concurrent-requests} budget: {@code said} free of {@code quota}
   * (negative when unknown), answered with {@code onTheWire} other requests of the scope still on
   * the wire; {@code refused} requests hold no unit at the server.
   */
  void concurrencyReport(long said, long quota, long onTheWire, boolean refused) {
    long counted = Ceilings.saturatingAdd(Math.max(0, onTheWire), refused ? 0 : 1);
    long free = Ceilings.saturatingAdd(Math.max(0, said), counted);
    concurrencyCap = quota >= 0 ? Math.min(quota, free) : free;
  }

  /** What a request of cost {@code cost} draws from this budget: one request, or its stated amount in the unit. */
  long drawn(RequestCost cost) {
    return countsRequests() ? 1 : cost.amount(unit).orElse(0);
  }

  /** {@link #unitWait}: one request goes alone and its answer says more. */
  static final long UNIT_PROBE = -1;
  /** {@link #unitWait}: only the answers in flight can say more. */
  static final long UNIT_FOR_ANSWER = -2;

  /**
   * How long a request that draws {@code need} units waits for this budget of a unit other than
   * requests ({@link RequestCost}): 0 when the remaining units cover it (at most the quota, so that
   * a request dearer than a window goes once one is fresh), {@link #UNIT_FOR_ANSWER} while requests
   * are in flight (their answers correct the books: the server reports what each really cost),
   * else until the reset, where a window of the known quota starts (less {@code inFlightCost}, the
   * cost of the requests on the wire, which may count in it) or, without a known quota and window
   * no longer than {@code maxReset}, one request probes ({@link #UNIT_PROBE}).
   */
  long unitWait(long need, long now, int inFlight, long inFlightCost, long maxReset) {
    if (now >= resetAt) {
      if (quota < 0 || window <= 0 || window > maxReset) {
        return UNIT_PROBE;
      }
      long periods = (now - resetAt) / window + 1;
      resetAt = Ceilings.saturatingAdd(resetAt, Ceilings.saturatingMultiply(periods, window));
      remaining = Math.max(0, quota - inFlightCost);
    }
    long covers = quota >= 0 ? Math.min(need, quota) : need;
    if (remaining >= covers) {
      return 0;
    }
    return inFlight > 0 ? UNIT_FOR_ANSWER : resetAt - now;
  }

  /**
   * A budget that states no reset ({@link ResetMeaning#UNSTATED}): when its window opened, that is
   * when the request that asked after a refusal was admitted and got units back
   * ({@code Long.MIN_VALUE} before), whether it got back as many as any report of the budget ever
   * said (the whole quota, as a fixed window gives it; a refill gives less), the most any report
   * said, and whether the last request that asked was refused.
   */
  long openedAt = Long.MIN_VALUE;
  /** When the request that asks goes in the window opened at {@link #openedAt} ({@link #askAt}). */
  long plannedAsk = Long.MIN_VALUE;
  boolean openedWhole;
  long mostSaid = -1;
  boolean askRefused;

  /** Notes a report of a budget that states no reset (see {@link #openedAt}). */
  void unstatedReport(long said, boolean asked, boolean refused, long admittedAt) {
    if (refused) {
      askRefused = true;
    } else if (asked && askRefused) {
      openedAt = admittedAt;
      openedWhole = said >= mostSaid;
      askRefused = false;
    }
    mostSaid = Math.max(mostSaid, said);
  }

  /**
   * When a request asks again once this budget, stating no reset, is spent within its window: at
   * {@code now}, unless its window opened after a refusal with the whole quota back (a fixed window's
   * reset), then at the first instant a whole number of seconds after that opening. The refusal it
   * gets says when quota returns only to the second (Retry-After, rounded up), counted from the
   * instant it was decided: asked as soon as the window's units were spent, each window opened
   * later by the time they took, and the delays added up window after window (Azure Resource
   * Manager, 5 s windows on a loaded machine: the fifth window opened 0.5 s later than the
   * second, 1.06x the ideal schedule). Asked at the fraction of a second the window opened at, the
   * next one opens at the same fraction. The units are spent and the window does not refill, so
   * the request loses nothing by waiting; a budget that refills (less than the whole quota back)
   * asks at once, since its answer may bring units.
   */
  long askAt(long now) {
    if (openedAt == Long.MIN_VALUE || !openedWhole || now <= openedAt) {
      return now;
    }
    if (plannedAsk <= openedAt) {
      // Planned once a window: a timer that fires late still asks then, not a second later.
      long seconds = Math.floorDiv(now - openedAt + ObservedAlgorithm.SECOND - 1, ObservedAlgorithm.SECOND);
      plannedAsk = Ceilings.saturatingAdd(openedAt, Ceilings.saturatingMultiply(seconds, ObservedAlgorithm.SECOND));
    }
    return plannedAsk;
  }

  /** Notes a report of a budget read as a documented leak (see {@link #leakSeq}). */
  void leakReport(long seq, long said, long at) {
    leakSeq = seq;
    leakSaid = said;
    leakAt = at;
  }

  /** Notes a report's r and reset (receipt plus t) for {@link ScopeState#settle}. */
  void noteBatch(long said, long resetAt) {
    batchLeast = Math.min(batchLeast, said);
    batchResetLow = Math.min(batchResetLow, resetAt);
    batchResetHigh = Math.max(batchResetHigh, resetAt);
  }

  /**
   * Notes a report of this budget: what it says about the algorithm, and its r for later answers.
   * {@code confirmed}: a window restarted at a reset not yet known to be a fixed window's is
   * confirmed by one request alone ({@link Pacing#ADAPTIVE}), so such a reset may be narrowed too.
   * {@code concurrent}: the scope's requests on the wire with this one ({@link ObservedAlgorithm#report}).
   */
  void learn(long said, long admittedAt, long receivedAt, long tNanos, long resetLow, long answersAtAdmit,
      long answerNumber, boolean confirmed, long concurrent) {
    seen.report(said, quota, window, admittedAt, receivedAt, tNanos, resetLow, answersAtAdmit, answerNumber, concurrent);
    if (!reportedOnce) {
      reportedOnce = true;
      if (window <= 0 && quota > 0 && said == quota - 1) {
        // The reset of a budget's first unit: the end of its first window (see firstWindow).
        firstWindowLow = resetLow != Long.MIN_VALUE ? resetLow : Ceilings.saturatingAdd(admittedAt, tNanos - ObservedAlgorithm.SECOND);
        firstWindowHigh = Ceilings.saturatingAdd(receivedAt, tNanos);
      }
    }
    epochReset = resetLow != Long.MIN_VALUE;
    ObservedAlgorithm.Kind kind = kind();
    // Not an algorithm not yet recognised whose t may name its next unit (ResetMeaning): reports of
    // a sliding window's burst say t=1 from instants a few ms apart, each the next unit with no
    // traffic after it, and their least upper bound is the first one's, 35 ms before the unit the
    // burst left came back (a refusal at 4.95 s into a 5 s window, 1 to 20 ms per request).
    boolean unknownAtReset = confirmed && kind == ObservedAlgorithm.Kind.UNKNOWN && meaning == ResetMeaning.UNTIL_RESET;
    if ((kind == ObservedAlgorithm.Kind.FIXED_WINDOW || unknownAtReset) && seen.bounded() && meaning != ResetMeaning.UNSTATED) {
      // Reports of one fixed window bound one instant: the tightest upper bound is as safe. Until
      // the algorithm is recognised, a reset reached this way is confirmed by one request alone.
      resetAt = Math.min(resetAt, seen.high());
    }
    refillFrom = receivedAt;
    int i = recentCount++ % RECENT;
    recentAnswer[i] = answerNumber;
    recentR[i] = said;
  }

  /** Every reset read so far, and what was learnt from them, moved {@code nanos} later (saturating). */
  void readLater(long nanos) {
    resetAt = Ceilings.saturatingAdd(resetAt, nanos);
    if (firstWindowLow != Long.MIN_VALUE) {
      firstWindowLow = Ceilings.saturatingAdd(firstWindowLow, nanos);
      firstWindowHigh = Ceilings.saturatingAdd(firstWindowHigh, nanos);
    }
    if (batchResetLow != Long.MAX_VALUE) {
      batchResetLow = Ceilings.saturatingAdd(batchResetLow, nanos);
      batchResetHigh = Ceilings.saturatingAdd(batchResetHigh, nanos);
    }
    seen.later(nanos);
  }

  /**
   * Of the requests answered while a report's request was on the wire (answer numbers from
   * {@code from} up to {@code to}), how many the server certainly decided before it: those whose
   * own report said more than {@code said}. Without a refill, {@code r} only falls as the server
   * decides, so they came first and are counted in {@code said}. Known only without a refill:
   * for a fixed window, or a budget not yet recognised whose policy refills less than one unit
   * over the request's time on the wire; else 0.
   */
  long servedBefore(long said, long from, long to, long flight) {
    ObservedAlgorithm.Kind kind = kind();
    boolean noRefill = kind == ObservedAlgorithm.Kind.FIXED_WINDOW || (kind == ObservedAlgorithm.Kind.UNKNOWN
        && quota > 0 && window > 0 && (double) flight * quota < window);
    if (!noRefill) {
      return 0;
    }
    long n = 0;
    for (int i = 0; i < Math.min(recentCount, RECENT); i++) {
      if (recentAnswer[i] >= from && recentAnswer[i] < to && recentR[i] > said) {
        n++;
      }
    }
    return n;
  }

  /**
   * Credits a recognised token bucket's refill since {@link #refillFrom}: one unit per {@code w / q},
   * counted from the receipt of the last report (the server decided before, so the bucket holds at
   * least this), up to the quota less the requests in flight.
   */
  void creditRefill(long now, int inFlight) {
    long window = refillWindow();
    // Past a reset that restores the quota, the new window starts there (SendTiming); a draft-10
    // reset is the next token only, and the refill goes on past it.
    if (quota <= 0 || window <= 0 || (now >= resetAt && resetRestoresQuota())) {
      return;
    }
    double perUnit = (double) window / quota;
    long gained = (long) ((now - refillFrom) / perUnit);
    if (gained <= 0) {
      return;
    }
    long cap = quota - inFlight;
    remaining = Math.max(remaining, Math.min(cap, remaining + gained));
    refillFrom = remaining >= cap ? now : refillFrom + (long) Math.ceil(gained * perUnit);
  }

  /**
   * Whether the whole quota is back at {@link #resetAt} ({@link ResetMeaning}): the report said so,
   * or the budget is a fixed window (whose end both meanings name), or a token bucket whose reports
   * said its time until full ({@link ObservedAlgorithm#saidUntilFull}, see {@link #kind}). Otherwise
   * only one unit more is sure there.
   */
  boolean resetRestoresQuota() {
    if (meaning == ResetMeaning.UNTIL_RESET) {
      return true;
    }
    ObservedAlgorithm.Kind kind = kind();
    return kind == ObservedAlgorithm.Kind.FIXED_WINDOW || kind == ObservedAlgorithm.Kind.TOKEN_BUCKET;
  }

  /** When this budget, spent, has its next unit: the reset, or a token bucket's next refill. */
  long nextUnit(long now) {
    long window = refillWindow();
    if (kind() == ObservedAlgorithm.Kind.TOKEN_BUCKET && quota > 0 && window > 0) {
      return Math.min(resetAt, refillFrom + (long) Math.ceil((double) window / quota));
    }
    return resetAt;
  }

  /**
   * The last instant a unit spaced by {@link Pacing#ADAPTIVE} against a budget not yet recognised
   * (or refilling, not yet modelled) surely counts in the first window, when the fields state no
   * window: until the first report's reset has surely passed, the earliest instant that reset may
   * be; else {@code Long.MAX_VALUE}. A budget's first unit resets with its first window whatever the
   * algorithm: a fixed window's reset is its end; a sliding window's estimate after one unit is
   * that unit, which weighs nothing a nanosecond after its window ends; a token bucket's is one
   * refill, and its window never ends. Reading an epoch reset through a {@code Date} truncated to
   * the second ({@link ServerClock}), a first window ending 0.1 s after the first request leaves
   * that reset anywhere in two seconds: spacing the units up to the latest of those (the second
   * before it) sent one unit of ten in such a window, and units not spent in a window are lost for
   * good (1.33x the ideal in virtual time at 4.9 s into a 5 s sliding window). Up to the earliest
   * of those, the units go at once when the window may be that short, and are still spread, with
   * their reports, when it cannot be.
   */
  long firstWindow(long now) {
    return firstWindowLow != Long.MIN_VALUE && now < firstWindowHigh ? firstWindowLow : Long.MAX_VALUE;
  }

  /**
   * The last instant a unit is sure to count in the current window: the lower bound of a fixed
   * window's reset as learnt, else {@code t} less the second it may have been rounded up by.
   */
  long lastInWindow() {
    if (kind() == ObservedAlgorithm.Kind.FIXED_WINDOW && seen.bounded() && seen.high() == resetAt) {
      return seen.low();
    }
    return resetAt - ObservedAlgorithm.SECOND;
  }

  /**
   * What the reports say the server runs: {@link ObservedAlgorithm}'s answer, except that a
   * refilling budget without a stated window whose reports fit a token bucket and nothing else is
   * one ({@link WindowInference}).
   */
  ObservedAlgorithm.Kind kind() {
    ObservedAlgorithm.Kind kind = seen.kind();
    if (kind == ObservedAlgorithm.Kind.TOKEN_BUCKET && meaning != ResetMeaning.UNTIL_RESET && !seen.saidUntilFull()) {
      // Recognised by t as the time until full, which a t that may mean the time until more quota
      // fits only by chance near a full budget (a sliding window's next unit at r=9, 8, 7 says
      // t=1, 1, 2 as a bucket of 10 per 5 s until full would): a refilling budget (ResetMeaning).
      return ObservedAlgorithm.Kind.REFILLING;
    }
    if (kind == ObservedAlgorithm.Kind.REFILLING && window <= 0 && inferred != null && inferred.bucketOnly()) {
      return ObservedAlgorithm.Kind.TOKEN_BUCKET;
    }
    return kind;
  }

  /** The window a token bucket refills over: the stated one, else the one inferred. */
  private long refillWindow() {
    if (window > 0) {
      return window;
    }
    return inferred != null && inferred.bucketOnly() ? inferred.bucketWindow() : -1;
  }

  /**
   * When a refilling budget that is not a token bucket allows one more request: by the model of
   * its sliding window when the window is stated, else by what is inferred of it; {@code -1} when
   * nothing can be said, {@code Long.MAX_VALUE} when only answers in flight can tell.
   */
  long nextAllowed(long now, int inFlight) {
    if (window > 0) {
      return sliding.nextAllowed(now, quota, window);
    }
    return inferred == null ? -1 : inferred.nextAllowed(now, remaining, inFlight, refillFrom);
  }

  /** Request {@code seq} of the scope was admitted at {@code at}. */
  void admitted(long seq, long at) {
    sliding.admitted(seq, at);
    if (inferred != null) {
      inferred.admitted(seq, at);
    }
  }

  /** Request {@code seq} (admitted at {@code at}) was answered at {@code now}; {@code refused}: with a refusal. */
  void received(long seq, long at, long now, boolean refused) {
    sliding.received(seq, at, now);
    if (inferred != null) {
      inferred.received(seq, at, now);
    }
    if (refused) {
      this.refused = true;
      // The model of a sliding window, or what was inferred, was wrong: spent as without them.
      sliding.disable();
      if (inferred != null) {
        inferred.disable();
      }
    }
  }

  /**
   * Request {@code seq} failed without an answer at {@code now}: the server may or may not have
   * counted it, which the inference of a window cannot allow for.
   */
  void lost(long seq, long at, long now) {
    sliding.received(seq, at, now);
    if (inferred != null) {
      inferred.disable();
    }
  }

  /**
   * A report of request {@code seq} reached the models: {@code said} and {@code tNanos} as the
   * server said them ({@code resetLow}: an instant known to be before the reset, or
   * {@code Long.MIN_VALUE} when only {@code t} bounds it, see {@link ServerClock});
   * server said them; the server decided {@code grantedLow} to {@code grantedHigh} of the scope's
   * requests up to and with it. {@code infer}: learn the window when the fields state none.
   */
  void reported(long seq, long at, long now, long said, long tNanos, long resetLow, long grantedLow, long grantedHigh,
      boolean infer, ResetMeaning meaning) {
    sliding.reported(seq, at, now, said, tNanos, resetLow, meaning);
    if (!infer || window > 0 || quota <= 0 || meaning != ResetMeaning.UNTIL_RESET) {
      // WindowInference reads t as the time until full or empty (X-RateLimit-Reset's meaning).
      inferred = null;
      return;
    }
    if (inferred == null || inferred.quota != quota) {
      inferred = new WindowInference(quota);
    }
    inferred.reported(seq, at, now, said, tNanos, resetLow);
    inferred.report(said, at, now, tNanos, resetLow, grantedLow, grantedHigh, sliding);
  }

  /** The key of a budget in its scope: the policy's name and its partition key. */
  static String key(String policy, byte[] pk) {
    return policy + "|" + (pk == null ? "" : Base64.getEncoder().encodeToString(pk));
  }
}
