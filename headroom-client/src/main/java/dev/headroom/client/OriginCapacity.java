package dev.headroom.client;

import dev.headroom.http.body.ProblemType;
import dev.headroom.http.body.Refusal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What an origin's answers say of its capacity, as opposed to a quota: a window of requests on the
 * wire that shrinks when the origin says its capacity fell and grows back as it answers, for every
 * caller of that origin (every scope, every front end of one {@link ClientBudget}).
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>draft-ietf-httpapi-ratelimit-headers-09 section 5.2 defines the problem type
 * {@code temporary-reduced-capacity} (status 503): the request cannot be served "due to a temporary
 * reduction in capacity due to service limitations", optionally with a {@code RateLimit-Policy}
 * naming the new, lower quota; Appendix B.1.3 has a server lower {@code q} and {@code r} "in case of
 * resource exhaustion". A quota refusal says "this partition spent its units, wait for the reset";
 * a capacity refusal says "the service can do less than it could": every caller of the origin sent
 * into it, and had each only waited out its own Retry-After and come back at the old pace, the
 * callers would hit the reduced service again together. So a capacity refusal lowers how much the
 * client sends to the origin as a whole, and the client earns the capacity back gradually, as TCP
 * does with its congestion window (RFC 5681 section 3.1: multiplicative decrease, additive increase).
 *
 * <p>State kept, per origin:
 * <ul>
 *   <li>{@code inFlight}: the origin's requests on the wire (admitted, not yet answered or lost).
 *   <li>{@code limit}: how many may be on the wire at once; unbounded until the first capacity
 *       signal, and again once grown past {@link #MAX_LIMIT}.
 *   <li>{@code admissions} and {@code decreasedAt}: admission numbers, so that the refusals of
 *       requests sent before the last decrease (the same overload, answered one by one) decrease
 *       the window once, not once each.
 * </ul>
 * The window is never lifted at once (lifted at the concurrency the origin first failed at, it let
 * eight callers go at once again while the origin still served two, in ReducedCapacityTest; every
 * such jump costs a burst of refusals): it grows back one place per window of answers, and stops growing
 * one place above what the callers use, since only a full window widens it. Past
 * {@link #MAX_LIMIT} it is unbounded again.
 *
 * <p>The rules:
 * <pre>
 *   admit        iff inFlight &lt; floor(limit), or nothing is on the wire (one request always goes)
 *   signal       (a capacity refusal of a request admitted after the last decrease, sent with n on the wire)
 *                  limit = max(1, floor(min(limit, n) * DECREASE))
 *   success      (an answer that is neither a refusal nor a 5xx, sent with the window full)
 *                  limit = limit + 1 / limit;  unbounded again past MAX_LIMIT
 * </pre>
 * A signal is a refusal whose problem details' {@code type} is {@code temporary-reduced-capacity}
 * (any status), or a 503 carrying RateLimit fields (the section 5.2 shape without a readable body;
 * a 503 without Retry-After is handed to its caller all the same). A request sent while the window
 * was not full says nothing about whether a wider window would be served, so only requests sent
 * with the window full widen it (RFC 7661's reason for validating a congestion window).
 *
 * <p>Worked numbers: eight callers, each sending its next request when its last is answered, so
 * eight on the wire. The origin's capacity falls; the first 503 came from a request sent with 8 on
 * the wire: {@code limit = 4}. The seven others sent at that level are refused too or served; their
 * refusals decrease nothing more. Were 4 still too many, a refusal of a request sent after the
 * decrease makes it 2. Then every answer sent with 2 on the wire adds {@code 1/2}, then
 * {@code 1/2.5}, ...: about one place per window of answers, back to 8 after 30 answers sent with
 * the window full, and to 9, one above what eight callers can fill, where it stays. At a given
 * latency the rate follows the window: 2 on the wire at 50 ms each is 40 requests a second,
 * whatever the callers ask for.
 *
 * <p>What the window does not do: it does not replace the quota books. The refusal's Retry-After
 * still holds the whole scope (section 7: Retry-After takes precedence); its {@code q}, smaller than
 * before, rescales the budget at once ({@code BudgetTracker}), and pacing spaces the requests by it;
 * {@code r} and {@code t} keep their meaning there. The window only bounds how many go at once, for
 * every caller of the origin, including those whose requests the quota would let through.
 *
 * <p>Not thread-safe: {@link BudgetTracker}'s lock guards it.
 */
final class OriginCapacity {

  /** What a capacity signal multiplies the window by (RFC 5681's halving). */
  static final double DECREASE = 0.5;

  /** The narrowest window: one request always goes. */
  static final int MIN_LIMIT = 1;

  /** A window grown back past this many requests on the wire is unbounded again. */
  static final int MAX_LIMIT = 1024;

  /** The callers waiting for a request of this origin to leave the wire. */
  final List<CompletableFuture<Void>> waiters = new ArrayList<>();

  private int inFlight;
  private long admissions;
  private double limit = Double.POSITIVE_INFINITY;
  private long decreasedAt = -1;

  /** One admitted request's place on the wire: its origin, its admission number, how many went with it (itself too). */
  record Slot(OriginCapacity origin, long seq, int onTheWire) {}

  /** Whether a request may go now: the window has room, or nothing is on the wire. */
  boolean admits() {
    return inFlight == 0 || inFlight < Math.floor(limit);
  }

  /** Takes a place on the wire for a request admitted now. */
  Slot admit() {
    inFlight = Math.min(inFlight + 1, Integer.MAX_VALUE - 1);
    return new Slot(this, ++admissions, inFlight);
  }

  /**
   * The request of {@code slot} was answered: {@code signal} whether the answer said the origin's
   * capacity fell ({@link #signals}), {@code served} whether it was served (neither a refusal nor
   * a 5xx).
   */
  void answered(Slot slot, boolean signal, boolean served) {
    leave();
    if (signal) {
      if (slot.seq() > decreasedAt) {
        limit = Math.max(MIN_LIMIT, Math.floor(Math.min(limit, slot.onTheWire()) * DECREASE));
        decreasedAt = admissions;
      }
      return;
    }
    if (served && limited() && slot.onTheWire() >= Math.floor(limit)) {
      limit += 1 / limit;
      if (limit > MAX_LIMIT) {
        limit = Double.POSITIVE_INFINITY;
      }
    }
  }

  /** The request of {@code slot} failed without an answer: it says nothing of the capacity. */
  void lost(Slot slot) {
    leave();
  }

  private void leave() {
    inFlight = Math.max(0, inFlight - 1);
  }

  /** Whether a capacity signal narrowed the window and it has not grown back yet. */
  boolean limited() {
    return limit != Double.POSITIVE_INFINITY;
  }

  /** The window: how many requests may be on the wire at once; {@code Integer.MAX_VALUE} when unbounded. */
  int limit() {
    return limited() ? (int) Math.floor(limit) : Integer.MAX_VALUE;
  }

  int inFlight() {
    return inFlight;
  }

  List<CompletableFuture<Void>> drainWaiters() {
    return ScopeState.drain(waiters);
  }

  /**
   * Whether an answer says the origin's capacity fell (draft-ietf-httpapi-ratelimit-headers-09
   * section 5.2): a refusal whose problem type is {@code temporary-reduced-capacity}, or a 503
   * carrying RateLimit fields. A response from a cache says nothing of the origin now.
   */
  static boolean signals(Exchange exchange) {
    if (exchange.fromCache()) {
      return false;
    }
    boolean typed = exchange.isRefused() && exchange.refusal().flatMap(Refusal::problemType)
        .filter(t -> t == ProblemType.TEMPORARY_REDUCED_CAPACITY).isPresent();
    return typed || (exchange.status() == 503
        && (!exchange.fields().policies().isEmpty() || !exchange.fields().limits().isEmpty()));
  }
}
