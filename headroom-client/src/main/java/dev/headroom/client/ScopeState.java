package dev.headroom.client;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * One scope of {@link BudgetTracker}: its budgets, its requests in flight, what its answers said.
 * Not thread-safe: the tracker's lock guards it.
 */
final class ScopeState {
  final LinkedHashMap<String, TrackedBudget> entries = new LinkedHashMap<>();
  final Map<String, String> current = new HashMap<>();
  final List<CompletableFuture<Void>> waiters = new ArrayList<>();
  long blockedUntil = Long.MIN_VALUE;
  boolean probeAfterBlock;
  /** What refusals taught of the window, for a scope that states no budget ({@link RefusalWindow}). */
  final RefusalWindow refusals = new RefusalWindow();
  /** Consecutive refusals without a usable Retry-After (see {@code BudgetTracker#report}). */
  int unpacedRefusals;
  boolean answered;
  /** The stated cost of each request in flight that has one, by admission number ({@link RequestCost}). */
  final Map<Long, RequestCost> costs = new HashMap<>();
  /** Admission numbers of the requests in flight. */
  final TreeSet<Long> inFlight = new TreeSet<>();
  long lastSeq;
  /** Answers recorded so far. */
  long answeredCount;
  /** What the answers' Date fields say of the server's clock. */
  final ServerClock clock = new ServerClock();
  /** A request admitted since the scope was last idle failed without an answer. */
  boolean batchLost;
  /** Answers recorded since the scope was last idle. */
  long batchAnswers;

  long lastAdmit = Long.MIN_VALUE;
  /**
   * The budgets (by {@link TrackedBudget#key}) whose documented leak the answers contradicted: their
   * {@code t}, computed from it, is read as no reset ({@link DocumentedAlgorithm#leakContradicted}).
   * At most {@code BudgetTracker#MAX_ENTRIES_PER_SCOPE}.
   */
  final Set<String> leakUnseen = new HashSet<>();

  int inFlight() {
    return inFlight.size();
  }

  /** The stated costs of the last answers, by answer number (ring of {@link TrackedBudget#RECENT}). */
  private final RequestCost[] answeredCosts = new RequestCost[TrackedBudget.RECENT];

  /** An answer to a request of cost {@code cost} was recorded: it is answer number {@link #answeredCount}. */
  void answered(RequestCost cost) {
    answeredCosts[(int) (answeredCount % TrackedBudget.RECENT)] = cost;
    answeredCount++;
  }

  /**
   * What the requests answered since answer number {@code from} are expected to cost in
   * {@code unit}, saturating; {@code Long.MAX_VALUE} when they are more than the ring remembers.
   */
  long answeredCost(String unit, long from) {
    if (answeredCount - from > TrackedBudget.RECENT) {
      return Long.MAX_VALUE;
    }
    long sum = 0;
    for (long n = Math.max(0, from); n < answeredCount; n++) {
      RequestCost c = answeredCosts[(int) (n % TrackedBudget.RECENT)];
      sum = Ceilings.saturatingAdd(sum, c == null ? 0 : c.amount(unit).orElse(0));
    }
    return sum;
  }

  /** What the requests in flight are expected to cost in {@code unit}, saturating. */
  long inFlightCost(String unit) {
    long sum = 0;
    for (RequestCost c : costs.values()) {
      sum = Ceilings.saturatingAdd(sum, c.amount(unit).orElse(0));
    }
    return sum;
  }

  List<CompletableFuture<Void>> drainWaiters() {
    return drain(waiters);
  }

  /** Empties a list of waiters, returning them to be completed outside the tracker's lock. */
  static List<CompletableFuture<Void>> drain(List<CompletableFuture<Void>> waiters) {
    if (waiters.isEmpty()) {
      return List.of();
    }
    List<CompletableFuture<Void>> out = new ArrayList<>(waiters);
    waiters.clear();
    return out;
  }

  /**
   * The origin was found to truncate its epoch resets ({@link ServerClock#truncates}): every reset
   * read from one so far names an instant a second early, and is read a second later.
   */
  void resetsTruncated() {
    for (TrackedBudget e : entries.values()) {
      if (e.epochReset) {
        e.readLater(ServerClock.SECOND);
      }
    }
  }

  /**
   * Every request of the scope is answered: each budget holds at least the least {@code r} reported
   * since the scope was last idle. The request the server decided last is one of them, and it said
   * what was left after every other; no algorithm takes units back later, and nobody else spends
   * them (the premise of the client's counting). The counting in {@code BudgetTracker#merge} has to
   * assume that any answer may come from a request decided before those answered earlier, so a burst of
   * concurrent requests otherwise ends with units the client believes spent: against a fixed
   * window, the last unit of a window lost, and with it a whole window at the end. Not when a
   * request of the batch was lost without an answer (the server may have counted it), when the
   * budget was created during the batch, or when the reports named resets more than
   * {@code BudgetTracker#SAME_WINDOW_NANOS} apart (a batch across a reset: measured to refuse)
   * unless the budget is recognised as refilling: a refilling budget's reset moves later with each
   * unit spent, so a burst's reports always name resets seconds apart, and a burst of ten against
   * a sliding window without a stated window ended with three units believed spent (1.08x the
   * ideal in virtual time, {@code X-RateLimit-*} at 4.2 to 4.8 s into a 5 s window); and its
   * units only come back with time, so the least {@code r} still holds.
   */
  void settle(long now) {
    for (TrackedBudget e : entries.values()) {
      // Only within one window: reports naming resets further apart than one window's reports can
      // (t rounded up, the latency) span a reset, a refill or a budget restarted locally.
      // A budget recognised as refilling moves its reset with every unit (a sliding window's time
      // until empty, a token bucket's until full): its batch is taken whatever resets it named.
      boolean oneWindow = e.batchResetHigh - e.batchResetLow <= BudgetTracker.SAME_WINDOW_NANOS
          || e.kind() == ObservedAlgorithm.Kind.REFILLING;
      if (!batchLost && !e.batchPartial && oneWindow && e.batchLeast != Long.MAX_VALUE && now < e.resetAt) {
        // Never above the quota: a batch across a smaller q (BudgetTracker#merge) left none higher.
        e.remaining = Math.min(e.quota >= 0 ? e.quota : Long.MAX_VALUE, Math.max(e.remaining, e.batchLeast));
      }
      e.batchLeast = Long.MAX_VALUE;
      e.batchResetLow = Long.MAX_VALUE;
      e.batchResetHigh = Long.MIN_VALUE;
      e.batchPartial = false;
    }
    batchLost = false;
    batchAnswers = 0;
  }
}
