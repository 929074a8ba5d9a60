package dev.headroom.client;

import dev.headroom.QuotaUnit;
import dev.headroom.Ticker;
import dev.headroom.http.RetryAfter;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.QuotaPolicyItem;
import dev.headroom.http.headers.RateLimitFields;
import dev.headroom.http.headers.ServiceLimitItem;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The client's budgets and its admission decision.
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>A budget is what the last response said about one quota, kept per scope (the origin by
 * default), policy and partition key: {@code remaining} units and the instant {@code resetAt} of
 * the reset, both counted down locally as requests are admitted, because draft-09 section 7 says a
 * client "MUST NOT assume that future responses will contain the same RateLimit header fields, or
 * any RateLimit header fields at all". Each policy has one <em>current</em> budget: the partition key
 * the server reported last for that scope (section 7.1: without the server's key algorithm, the
 * best guess for the next request is the last similar one).
 *
 * <p>A request is admitted ({@link SendTiming}) when, for every current budget of its scope:
 * {@code remaining > 0} (or the reset has passed and the quota is known, which starts a new window
 * of {@code q} units when {@code t} named the quota whole again, and otherwise lets one request go
 * alone, see {@link ResetMeaning}), and,
 * with {@link Pacing#EVEN}, at least {@link EvenSpacing#interval} has passed since the budget's last
 * admission. Otherwise it waits for the longest of these times, on the {@link Scheduler}.
 * Worked numbers: {@code "default";r=9;t=10} seen at 0 s, with no policy, spaces the next nine
 * requests 1.11 s apart under EVEN, and lets all nine go at once under BURST; the tenth waits until
 * 10 s either way. With {@code "default";q=50;w=5} and {@code r=49;t=1} (a token bucket after one
 * request), EVEN spaces the next one {@code 1 / (47 / 1 s + 10 / s)} = 17.6 ms later; as the bucket
 * empties {@code t} grows and the spacing tends to the refill's 100 ms with {@code r} near two.
 * A re-synced budget keeps its last admission, so the answer's latency is not added to the spacing.
 *
 * <p>What the fields say is weighed as draft-09 sections 7, 7.3 and 8.5.1 ask:
 * <ul>
 *   <li>Malformed fields never get here: {@link RateLimitFields} leaves them out.
 *   <li>Retry-After takes precedence over {@code t}: it holds the whole scope and becomes the reset
 *       of every limit reported with it.
 *   <li>Responses from a cache ({@code Age > 0}) are ignored ({@link Exchange#fromCache()}).
 *   <li>{@code r} above the quota is clamped to the quota; a reset beyond
 *       {@link Ceilings#maxReset()} is not waited for: the requests it would hold go one at a time,
 *       each alone, and each answer decides the next (section 8.5.1's "retries when the reset
 *       parameter exceeds ten minutes"); a Retry-After beyond {@link Ceilings#maxRetryAfter()} is
 *       waited for up to it, then one probe request goes alone and its response decides.
 *   <li>{@code receipt + t} is an upper bound of the reset (the server rounds up, the answer took
 *       time to arrive): waiting for it is never early. Reports of one fixed window bound one
 *       instant, so the least of their upper bounds is as safe ({@link ObservedAlgorithm}).
 *   <li>What the reports show of the server's algorithm decides how the units are spent with
 *       {@link Pacing#ADAPTIVE}: at once against a fixed window, at once with the refill credited
 *       against a token bucket ({@link TrackedBudget#creditRefill}), as a modelled sliding window
 *       ({@link SlidingWindowModel}) against another refilling budget, as {@link Pacing#EVEN}
 *       otherwise. Without a stated window (X-RateLimit-*), the refill and the sliding window's
 *       length are learnt from the reports ({@link WindowInference}). A window restarted locally
 *       at a reset is confirmed by one request alone.
 *   <li>Requests that may not be counted in a report's {@code r} (still in flight, or answered
 *       while it was) are subtracted, so that concurrent answers, which arrive in any order, never
 *       overstate the budget (see {@link #apply}).
 *   <li>A policy whose {@code q} changed (Appendix B.1.3, section 5.2's reduced policy, capacity
 *       restored) starts its budget again from the report, remaining at most the new {@code q}
 *       (see {@link #merge}); a {@code concurrent-requests} policy (section 3.1.2) caps the
 *       scope's requests on the wire instead of counting units per window
 *       ({@link TrackedBudget#concurrencyCap}).
 *   <li>A {@code temporary-reduced-capacity} answer (section 5.2) narrows how many requests every
 *       caller of the origin may have on the wire, and answers widen it back
 *       ({@link OriginCapacity}): a capacity to respect, not a quota to wait out.
 * </ul>
 *
 * <p>The first request of a scope goes alone: until a response arrives nothing is known, and
 * a burst sent blind is the one way a paced client can be refused.
 *
 * <p>Budgets from the vend rate-limit extension (seed 003, "Proactive Throttling"; read by
 * {@link VendReading}) are recorded as RateLimit fields are, with the same rules for concurrent
 * answers, and take precedence over the fields of the response that carried them (see
 * {@link VendClientOptions}). They carry a <em>selector</em>: they pace only the vend calls
 * ({@link VendCall#labels()}) they describe, not the other requests of the scope.
 *
 * <p>Budgets from a Graceful Boundaries discovery document are a plan: they pace requests to the
 * endpoints they describe while the scope has no budget from RateLimit fields, which are current.
 *
 * <p>Every number from the wire is clamped before it is converted ({@link Ceilings#clampedNanos}):
 * a 15-digit {@code t} is valid and longer than a {@code long} of nanoseconds. A refusal without a
 * usable Retry-After (absent, unparseable, below {@link RetryPolicy#baseDelay()}) holds the whole
 * scope for the back-off its request waits. {@link #record} never throws and always wakes the
 * scope's waiters.
 *
 * <p>Memory is bounded: at most {@link Ceilings#maxTrackedScopes()} scopes (least recently used
 * evicted) and {@value #MAX_ENTRIES_PER_SCOPE} budgets per scope.
 *
 * <p>Thread-safe: every method synchronises on the tracker; futures are completed outside the lock.
 */
final class BudgetTracker implements Budgets {

  /** Most budgets kept per scope (policies times partition keys). */
  static final int MAX_ENTRIES_PER_SCOPE = 64;

  /**
   * Units {@link Pacing#EVEN} keeps in hand while it credits a policy's refill (see
   * {@link EvenSpacing#interval}): the reported {@code r} settles here instead of at zero.
   */
  static final long EVEN_RESERVE = 2;

  private static final System.Logger LOG = System.getLogger(BudgetTracker.class.getName());

  /**
   * The reserve against a budget that refills but is not a recognised token bucket (a sliding
   * window: its units come back as the last window's weight decays, at {@code q / w} only when the
   * last window was full, and at {@code r=0} its {@code t} is the time until it is empty, up to two
   * windows): one more unit in hand keeps {@code r} off zero when the decay is slower.
   */
  static final long REFILLING_RESERVE = 3;

  /** Resets closer than this may describe one instant (t is rounded to whole seconds). */
  static final long SAME_WINDOW_NANOS = 1_500_000_000L;

  private final Ticker ticker;
  private final Scheduler scheduler;
  private final Pacing pacing;
  private final Ceilings ceilings;
  private final SendTiming timing;
  private final Function<HttpRequest, String> scopeOf;
  private final LinkedHashMap<String, ScopeState> scopes;
  private final LinkedHashMap<String, List<TrackedBudget>> planned;
  /** Each origin's capacity as its answers show it ({@link OriginCapacity}), by origin. */
  private final LinkedHashMap<String, OriginCapacity> capacities;
  private final VendClientOptions vend;
  /** Backs off a scope after a refusal without a usable wait (see {@link #report}). */
  private final RetryPolicy retry;

  BudgetTracker(Ticker ticker, Scheduler scheduler, Pacing pacing, Ceilings ceilings, Function<HttpRequest, String> scopeOf,
      VendClientOptions vend, RetryPolicy retry) {
    this.vend = vend;
    this.retry = retry;
    this.ticker = ticker;
    this.scheduler = scheduler;
    this.pacing = pacing;
    this.ceilings = ceilings;
    this.timing = new SendTiming(pacing, ceilings);
    this.scopeOf = scopeOf;
    int max = ceilings.maxTrackedScopes();
    this.scopes = new LinkedHashMap<>(16, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<String, ScopeState> eldest) {
        return size() > max;
      }
    };
    this.planned = new LinkedHashMap<>(16, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<String, List<TrackedBudget>> eldest) {
        return size() > max;
      }
    };
    // An origin evicted with requests on the wire is still reported through their permits, which
    // hold it, and wakes its waiters; they then find the origin anew.
    this.capacities = new LinkedHashMap<>(16, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<String, OriginCapacity> eldest) {
        return size() > max;
      }
    };
  }

  // ---- admission

  /** A future completed once the request may go, with the permit to report its outcome with. */
  CompletableFuture<Permit> acquire(HttpRequest request) {
    return acquire(request, Set.of(), RequestCost.none());
  }

  /**
   * {@link #acquire(HttpRequest)} for a request matching the selectors {@code labels} (a vend
   * call's) and expected to cost {@code cost} besides one request ({@link RequestCost}).
   */
  CompletableFuture<Permit> acquire(HttpRequest request, Set<String> labels, RequestCost cost) {
    String scopeId = scopeId(request);
    String origin = Origins.of(request.uri());
    String path = request.uri().getRawPath();
    return loop(scopeId, origin, request.method(), path == null || path.isEmpty() ? "/" : path, labels, cost);
  }

  private CompletableFuture<Permit> loop(String scopeId, String origin, String method, String path, Set<String> labels,
      RequestCost cost) {
    CompletableFuture<Void> waiter = null;
    long nanos;
    synchronized (this) {
      ScopeState s = scope(scopeId);
      OriginCapacity capacity = capacities.computeIfAbsent(origin, k -> new OriginCapacity());
      long now = ticker.read();
      SendTiming.Wait w = timing.decide(s, capacity, active(s, origin, method, path, labels), cost, now);
      if (w.admitted() != null) {
        return CompletableFuture.completedFuture(w.admitted());
      }
      if (w.forResponse()) {
        waiter = new CompletableFuture<>();
        s.waiters.add(waiter);
      } else if (w.forCapacity()) {
        // Woken when one of the origin's requests is answered or fails (record, release).
        waiter = new CompletableFuture<>();
        capacity.waiters.add(waiter);
      }
      nanos = w.nanos();
    }
    // Outside the lock: a scheduler may complete at once and run the continuation on this thread.
    CompletableFuture<Void> next = waiter != null ? waiter : scheduler.delay(Duration.ofNanos(nanos));
    return next.thenCompose(v -> loop(scopeId, origin, method, path, labels, cost));
  }

  private List<TrackedBudget> active(ScopeState s, String origin, String method, String path, Set<String> labels) {
    List<TrackedBudget> out = new ArrayList<>();
    for (String key : s.current.values()) {
      TrackedBudget e = s.entries.get(key);
      if (e != null && (e.selector == null || labels.contains(e.selector))) {
        out.add(e);
      }
    }
    BucketRoutes.keepRoute(out, BucketRoutes.route(method, path));
    if (out.isEmpty()) {
      List<TrackedBudget> plan = planned.get(origin);
      if (plan != null) {
        for (TrackedBudget e : plan) {
          if (e.endpoint.matches(method, path)) {
            out.add(e);
          }
        }
      }
    }
    return out;
  }

  // ---- outcomes

  /**
   * Reports the exchange a permit's request got. Total: it never throws, and the scope's waiters
   * are woken whatever happens, so that a response the client cannot make sense of neither reaches
   * its caller as an exception nor strands the callers waiting behind it (see {@link #unreadable}).
   */
  void record(Permit permit, Exchange exchange) {
    List<CompletableFuture<Void>> wake = List.of();
    List<CompletableFuture<Void>> wakeOrigin = List.of();
    synchronized (this) {
      ScopeState s = permit.scope;
      try {
        s.inFlight.remove(permit.seq);
        answeredOrigin(permit, exchange);
        s.costs.remove(permit.seq);
        long now = ticker.read();
        s.answered = true;
        for (TrackedBudget e : s.entries.values()) {
          e.received(permit.seq, permit.admittedAt, now, exchange.isRefused());
        }
        s.refusals.answered(permit.admittedAt, exchange.isRefused());
        try {
          report(s, permit, exchange, now);
        } catch (RuntimeException e) {
          unreadable(s, exchange, e);
        }
        s.answered(permit.cost);
        s.batchAnswers++;
        for (TrackedBudget e : s.entries.values()) {
          e.confirm = false;
        }
        if (s.inFlight.isEmpty()) {
          s.settle(now);
        }
        if (permit.probe) {
          s.probeAfterBlock = false;
          // A concurrent-requests budget has no reset to pass: its units come back as requests complete.
          s.entries.values().removeIf(e -> e.resetAt <= now && !e.limitsConcurrency());
          s.current.values().removeIf(k -> !s.entries.containsKey(k));
        }
      } finally {
        wake = s.drainWaiters();
        wakeOrigin = permit.slot.origin().drainWaiters();
      }
    }
    wake.forEach(f -> f.complete(null));
    wakeOrigin.forEach(f -> f.complete(null));
  }

  /**
   * Gives an answer to its origin's capacity ({@link OriginCapacity}); total, as {@link #record} is:
   * the request leaves the origin's wire whatever the answer says, so no caller waits for it forever.
   */
  private static void answeredOrigin(Permit permit, Exchange exchange) {
    boolean signal;
    boolean served;
    try {
      signal = OriginCapacity.signals(exchange);
      served = !exchange.isRefused() && exchange.status() < 500;
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, () -> "could not read the capacity " + exchange + " says", e);
      signal = false;
      served = false;
    }
    permit.slot.origin().answered(permit.slot, signal, served);
  }

  /** Applies what one answer says to its scope (see {@link #apply} and {@link #applyVend}). */
  private void report(ScopeState s, Permit permit, Exchange exchange, long now) {
    if (exchange.fromCache()) {
      return;
    }
    // Sent but possibly not counted in this answer's r: whatever is still on the wire, and
    // whatever was answered while this request was (the server may have served it later).
    long uncounted = s.inFlight.size() + (s.answeredCount - permit.answeredAtAdmit);
    boolean ordered = permit.alone && permit.seq == s.lastSeq;
    long date = ServerClock.date(exchange.response());
    long epochReset = date == Long.MIN_VALUE ? Long.MIN_VALUE : ServerClock.epochReset(exchange.response());
    if (date != Long.MIN_VALUE) {
      s.clock.observe(date, permit.admittedAt, now);
      if (s.clock.observeReset(epochReset, date, permit.admittedAt)) {
        s.resetsTruncated();
      }
    }
    Optional<VendReading> vendData = exchange.vend().filter(v -> !v.limits().isEmpty());
    if (vendData.isPresent()) {
      // The extension data takes precedence over the response's RateLimit fields and
      // Retry-After: they restate one of its scopes, and the data says which calls it paces.
      applyVend(s, vendData.get(), now, uncounted, ordered, permit);
    } else {
      apply(s, exchange.fields(), now, uncounted, ordered, permit, epochReset, exchange.isRefused());
      String path = exchange.request().uri().getRawPath();
      BucketRoutes.bind(s, exchange.fields(), BucketRoutes.route(exchange.request().method(),
          path == null || path.isEmpty() ? "/" : path));
    }
    if (vendData.isEmpty() && exchange.response().statusCode() == 429 && exchange.fields().retryAfter().isPresent()
        && exchange.fields().limits().isEmpty() && s.entries.isEmpty()) {
      // A quota's refusal from a server that states no budget: what it teaches of the window
      // (RefusalWindow). A 503 says the server is short of capacity, not where a window ends.
      s.refusals.refused(permit.admittedAt(), s.blockedUntil, Ceilings.nanos(ceilings.maxReset()));
    }
    if (vendData.isEmpty() && exchange.isRefused() && exchange.fields().retryAfter().isEmpty()
        && exchange.retryAfter().isPresent()) {
      // A wait said elsewhere (an HTML refusal's meta, an extension's refusal) holds the scope too.
      block(s, exchange.retryAfter().get(), ceilings.maxRetryAfter(), now);
    }
    if (exchange.isRefused() && exchange.retryAfter().orElse(Duration.ZERO).compareTo(retry.baseDelay()) < 0) {
      // A refusal without a usable wait (no Retry-After, an unparseable one, or 0) holds the whole
      // scope, not only the refused request, for the back-off the refused request waits:
      // RetryPolicy.backoff(n, baseDelay), n counting the scope's consecutive such refusals. Without
      // this every other caller would spend a refusal of its own to learn the same thing.
      block(s, retry.backoff(s.unpacedRefusals, retry.baseDelay()), ceilings.maxRetryAfter(), now);
      s.unpacedRefusals = Math.min(s.unpacedRefusals + 1, 64);
    } else {
      s.unpacedRefusals = 0;
    }
  }

  /**
   * A report the bookkeeping could not apply. Every number from the wire is clamped before use
   * ({@link Ceilings#clampedNanos}), so this is a defect rather than an input: it is logged, the
   * scope's budgets stay as they were, and its next request goes alone as a probe, so that the
   * client learns where it stands from one response instead of guessing.
   */
  private void unreadable(ScopeState s, Exchange exchange, RuntimeException e) {
    s.probeAfterBlock = true;
    LOG.log(System.Logger.Level.WARNING, () -> "could not apply the limits of " + exchange
        + "; the next request of its scope goes alone", e);
  }

  /** Holds a scope for {@code delay} from {@code now}, clamped by {@code max} (then probed). */
  private static void block(ScopeState s, Duration delay, Duration max, long now) {
    block(s, Ceilings.clampedNanos(delay, max), delay.compareTo(max) > 0, now);
  }

  /** Holds a scope for {@code nanos} from {@code now}; {@code clamped}: a longer wait was cut to the ceiling (then probed). */
  private static void block(ScopeState s, long nanos, boolean clamped, long now) {
    s.blockedUntil = Math.max(s.blockedUntil, Ceilings.saturatingAdd(now, nanos));
    s.probeAfterBlock |= clamped;
  }

  /** Reports that a permit's request failed without a response. */
  void release(Permit permit) {
    List<CompletableFuture<Void>> wake = List.of();
    List<CompletableFuture<Void>> wakeOrigin = List.of();
    synchronized (this) {
      try {
        permit.slot.origin().lost(permit.slot);
        permit.scope.inFlight.remove(permit.seq);
        permit.scope.costs.remove(permit.seq);
        long now = ticker.read();
        permit.scope.entries.values().forEach(e -> e.lost(permit.seq, permit.admittedAt, now));
        permit.scope.batchLost = true;
        if (permit.scope.inFlight.isEmpty()) {
          permit.scope.settle(now);
        }
      } finally {
        wake = permit.scope.drainWaiters();
        wakeOrigin = permit.slot.origin().drainWaiters();
      }
    }
    wake.forEach(f -> f.complete(null));
    wakeOrigin.forEach(f -> f.complete(null));
  }

  /**
   * Applies a report to the scope. A report is <em>ordered</em> when its request was alone on the
   * wire from admission to answer: it is then the newest word on the budget and replaces it.
   * Answers to concurrent requests arrive in any order and the server may have served them in yet
   * another, so for such a report {@code uncounted} requests (every one still on the wire or
   * answered while this one was) are taken off its {@code r}: what is left is a lower bound of the
   * quota left now, whatever the order, and replaces the budget's; its reset only ever postpones
   * the budget's (a token bucket's reset grows with every request served after the reported one),
   * and a report whose reset is well before the budget's describes an earlier window and is dropped.
   */
  private void apply(ScopeState s, RateLimitFields fields, long now, long uncounted, boolean ordered, Permit permit,
      long epochReset, boolean refused) {
    long raNanos = -1;
    boolean raClamped = false;
    Optional<RetryAfter> ra = fields.retryAfter();
    if (ra.isPresent()) {
      Duration d = ra.get().delay();
      raClamped = d.compareTo(ceilings.maxRetryAfter()) > 0;
      raNanos = Ceilings.clampedNanos(d, ceilings.maxRetryAfter());
      long named = raClamped ? Long.MIN_VALUE : ServerClock.epochNanos(ra.get().date());
      if (named != Long.MIN_VALUE && s.clock.known()) {
        // An HTTP-date names an instant on the server's clock (RFC 9110 section 10.2.3): read
        // through what the Date fields taught of that clock (ServerClock), it is known to about
        // the latency, where date - Date from the receipt is up to a second late (Date truncated).
        raNanos = Math.max(0, Math.min(raNanos, s.clock.latest(named) - now));
      }
      block(s, raNanos, raClamped, now);
    }
    for (ServiceLimitItem limit : fields.limits()) {
      if (limit.remaining().isEmpty()) {
        continue;
      }
      String policy = limit.name().orElse(limit.dialect().token());
      byte[] pk = limit.partitionKey().orElse(null);
      QuotaPolicyItem p = fields.policyOf(limit).orElse(null);
      long quota = p != null ? p.quota() : limit.limit().orElse(-1);
      String unit = RequestCost.unitOf(p);
      // Saturated, not clamped: a window longer than maxReset is never waited for whole (SendTiming
      // probes instead), but q / w still credits EVEN with the refill it implies.
      long window = p != null && p.window().isPresent() ? Ceilings.nanos(p.window().get()) : -1;
      long tNanos;
      long resetLow = Long.MIN_VALUE;
      boolean probeAtReset = false;
      ResetMeaning meaning = ResetMeaning.of(limit, p);
      String key = TrackedBudget.key(policy, pk);
      boolean assumedLeak = DocumentedAlgorithm.assumesLeak(limit) && unit.equals(RequestCost.REQUESTS);
      if (assumedLeak && !s.leakUnseen.contains(key) && s.leakUnseen.size() < MAX_ENTRIES_PER_SCOPE
          && DocumentedAlgorithm.leakContradicted(s.entries.get(key), limit.remaining().getAsLong(), quota, window,
              refused, ordered, permit.seq(), permit.admittedAt())) {
        s.leakUnseen.add(key);
      }
      if (s.leakUnseen.contains(key)) {
        // The answers contradict the leak the vendor documents: its t, computed from that leak, is
        // no reset; nothing says when quota returns (DocumentedAlgorithm).
        meaning = ResetMeaning.UNSTATED;
      }
      if (meaning == ResetMeaning.UNSTATED && raNanos < 0) {
        // No reset stated: the units stay counted until the ceiling, and the last spent, one
        // request at a time finds out (SendTiming).
        tNanos = Ceilings.nanos(ceilings.maxReset());
      } else if (raNanos >= 0) {
        tNanos = raNanos;
        probeAtReset = raClamped;
      } else if (limit.reset().isPresent()) {
        Duration t = limit.reset().get();
        probeAtReset = t.compareTo(ceilings.maxReset()) > 0;
        tNanos = Ceilings.clampedNanos(t, ceilings.maxReset());
        if (epochReset != Long.MIN_VALUE && limit.dialect() == HeaderDialect.X_RATELIMIT && !probeAtReset) {
          // An epoch reset read on the client's clock through the server's Date (ServerClock).
          // Truncated (ServerClock#truncates), the field's own reading E - Date is a second early too.
          tNanos = Math.max(0, Math.min(s.clock.truncates() ? tNanos + ServerClock.SECOND : tNanos, s.clock.latest(epochReset) - now));
          resetLow = Math.min(s.clock.earliest(epochReset), now + tNanos);
        }
      } else if (window > 0 && window <= Ceilings.nanos(ceilings.maxReset())) {
        tNanos = window;
      } else {
        tNanos = Ceilings.nanos(ceilings.maxReset());
        probeAtReset = true;
      }
      // In another unit, what may not be counted in r is what those requests are expected to cost.
      long notCounted = unit.equals(RequestCost.REQUESTS) ? uncounted
          : ordered ? 0 : Ceilings.saturatingAdd(s.inFlightCost(unit), s.answeredCost(unit, permit.answeredAtAdmit));
      merge(s, policy, pk, unit, limit.remaining().getAsLong(), quota, window, tNanos, resetLow, probeAtReset, now,
          notCounted, ordered, "headers", null, permit, meaning);
      TrackedBudget e = s.entries.get(key);
      if (e != null && e.limitsConcurrency()) {
        e.concurrencyReport(limit.remaining().getAsLong(), quota, s.inFlight(), refused);
      }
      if (e != null && DocumentedAlgorithm.fixedWindow(limit)) {
        e.seen.documentedFixedWindow();
      }
      if (e != null && meaning == ResetMeaning.UNSTATED && unit.equals(RequestCost.REQUESTS)) {
        e.unstatedReport(limit.remaining().getAsLong(), permit.probe(), refused, permit.admittedAt());
      }
      if (e != null && assumedLeak) {
        e.leakReport(ordered ? permit.seq() : -1, Math.min(limit.remaining().getAsLong(), quota < 0 ? Long.MAX_VALUE : quota), now);
      }
    }
    concurrencyPolicies(s, fields, now);
  }

  /**
   * A {@code concurrent-requests} policy advertised without a RateLimit item that states its
   * {@code r} still caps the scope's requests on the wire at its {@code q} (draft-09 section 3.1.2;
   * the policy is informative, section 7, but it is the only word on how many may go at once).
   */
  private void concurrencyPolicies(ScopeState s, RateLimitFields fields, long now) {
    for (QuotaPolicyItem p : fields.policies()) {
      if (p.name().isEmpty() || !QuotaUnit.CONCURRENT_REQUESTS.token().equals(RequestCost.unitOf(p))) {
        continue;
      }
      boolean stated = fields.limits().stream()
          .anyMatch(l -> l.remaining().isPresent() && fields.policyOf(l).filter(p::equals).isPresent());
      if (!stated) {
        TrackedBudget e = put(s, p.name().get(), p.partitionKey().orElse(null), p.quota(), now, p.quota(), -1, false, now,
            "headers");
        e.unit = QuotaUnit.CONCURRENT_REQUESTS.token();
        e.concurrencyCap = p.quota();
      }
    }
  }

  /** Records one report of a budget, as {@link #apply} explains (shared by headers and the vend extension). */
  private void merge(ScopeState s, String policy, byte[] pk, String unit, long reported, long quota, long window, long tNanos,
      long resetLow, boolean probeAtReset, long now, long uncounted, boolean ordered, String source, String selector, Permit permit,
      ResetMeaning meaning) {
    long r = reported;
    long concurrent = uncounted;
    if (quota >= 0) {
      r = Math.min(r, quota);
    }
    long said = r;
    TrackedBudget e = s.entries.get(TrackedBudget.key(policy, pk));
    boolean requests = unit.equals(RequestCost.REQUESTS);
    if (e != null && !ordered && requests && e.countsRequests()) {
      uncounted -= e.servedBefore(said, permit.answeredAtAdmit, s.answeredCount, now - permit.admittedAt);
    }
    r = Math.max(0, r - uncounted);
    long resetAt = Ceilings.saturatingAdd(now, tNanos);
    boolean rescaled = e != null && quota >= 0 && e.quota >= 0 && quota != e.quota;
    if (rescaled) {
      // The same policy with another q: the server changed the quota (draft-09 Appendix B.1.3, a
      // temporary-reduced-capacity answer's new policy, section 5.2, or capacity restored). What was
      // counted and learnt under the old q (the remaining units, a sliding window's model, the
      // algorithm recognised, a batch's least r) describes a quota that is gone: the budget starts
      // again from this report, its remaining at most the new q less what is on the wire, and its
      // pacing is recomputed from it.
      s.entries.remove(TrackedBudget.key(policy, pk));
    }
    if (e == null || rescaled || ordered || e.resetAt <= now || e.probeAtReset || !e.unit.equals(unit)) {
      e = put(s, policy, pk, r, resetAt, quota, window, probeAtReset, now, source);
      e.selector = selector;
      e.unit = unit;
      e.meaning = meaning;
    } else if (resetAt >= e.resetAt - SAME_WINDOW_NANOS) {
      e.remaining = r;
      e.resetAt = Math.max(e.resetAt, resetAt);
      e.quota = quota;
      e.window = window;
      e.probeAtReset |= probeAtReset;
      e.selector = selector;
      e.meaning = meaning;
      s.current.put(policy, TrackedBudget.key(policy, pk));
    } else {
      e.noteBatch(said, resetAt);
      if (quota == e.quota && window == e.window && requests) {
        // Too early a reset for the budget's count, but what the server said of this request all
        // the same: a sliding window's model (and what is inferred of its window) places every
        // request of a burst by its report, and one left out stands for any report at all.
        modelReport(s, e, permit, now, said, tNanos, resetLow, meaning);
      }
      return;
    }
    e.noteBatch(said, resetAt);
    if (!requests) {
      // The models of the server's algorithm count one unit per request; a unit budget's books are
      // the report itself, less what is on the wire.
      return;
    }
    modelReport(s, e, permit, now, said, tNanos, resetLow, meaning);
    e.learn(said, permit.admittedAt, now, tNanos, resetLow, permit.answeredAtAdmit, s.answeredCount,
        pacing == Pacing.ADAPTIVE, concurrent);
  }

  /** Gives a report of budget {@code e} to its models ({@link TrackedBudget#reported}). */
  private void modelReport(ScopeState s, TrackedBudget e, Permit permit, long now, long said, long tNanos, long resetLow,
      ResetMeaning meaning) {
    // The server decided every request answered before this one was sent, and none sent after it was answered.
    e.reported(permit.seq, permit.admittedAt, now, said, tNanos, resetLow, permit.answeredAtAdmit + 1, s.lastSeq,
        pacing == Pacing.ADAPTIVE && s.entries.size() == 1 && e.selector == null, meaning);
  }

  /**
   * Applies the vend extension data of a response (seed 003, "Data (Response)"): per scope,
   * {@code limit} is the quota, {@code remaining} is r, {@code resets_in} is t (clamped by
   * {@link Ceilings#maxReset()}), {@code window} the window.
   */
  private void applyVend(ScopeState s, VendReading reading, long now, long uncounted, boolean ordered, Permit permit) {
    Duration maxReset = ceilings.maxReset();
    for (VendReading.Limit l : reading.limits()) {
      Duration t = l.resetsIn();
      long window = l.window().map(Ceilings::nanos).orElse(-1L);
      merge(s, l.policy(), null, RequestCost.REQUESTS, l.remaining(), l.limit(), window, Ceilings.clampedNanos(t, maxReset), Long.MIN_VALUE,
          t.compareTo(maxReset) > 0, now, uncounted, ordered, "vend", l.selector(), permit, ResetMeaning.UNTIL_RESET);
    }
  }

  private TrackedBudget put(ScopeState s, String policy, byte[] pk, long remaining, long resetAt, long quota, long window,
      boolean probeAtReset, long now, String source) {
    String pkText = pk == null ? null : Base64.getEncoder().encodeToString(pk);
    String key = TrackedBudget.key(policy, pk);
    TrackedBudget e = s.entries.get(key);
    boolean fresh = e == null;
    if (e == null) {
      if (s.entries.size() >= MAX_ENTRIES_PER_SCOPE) {
        Iterator<String> it = s.entries.keySet().iterator();
        String eldest = it.next();
        it.remove();
        s.current.values().remove(eldest);
      }
      e = new TrackedBudget(policy, pkText, null);
      e.batchPartial = s.batchAnswers > 0;
      s.entries.put(key, e);
    }
    e.remaining = remaining;
    e.resetAt = resetAt;
    e.quota = quota;
    e.window = window;
    e.probeAtReset = probeAtReset;
    if (fresh) {
      // Every request of the scope is known to the model when this is its first budget.
      e.sliding = new SlidingWindowModel(s.lastSeq <= 1, now, window);
      // A budget heard of for the first time starts its spacing now; a re-synced one keeps its last
      // admission, so that the answer's latency is not added to every interval.
      e.lastAdmit = now;
    }
    e.source = source;
    s.current.put(policy, key);
    return e;
  }

  // ---- discovery

  /** Installs the plan of a discovery document for an origin. */
  synchronized void plan(String origin, DiscoveredLimits document) {
    long now = ticker.read();
    List<TrackedBudget> entries = new ArrayList<>();
    for (DiscoveredLimits.Endpoint ep : document.endpoints()) {
      for (int i = 0; i < ep.limits().size(); i++) {
        DiscoveredLimits.Limit l = ep.limits().get(i);
        if (!l.isWindowed()) {
          continue;
        }
        TrackedBudget e = new TrackedBudget(ep.key() + "#" + i, null, ep);
        e.remaining = l.maxRequests();
        e.quota = l.maxRequests();
        e.window = Ceilings.nanos(l.window());
        e.resetAt = Ceilings.saturatingAdd(now, Math.min(e.window, Ceilings.nanos(ceilings.maxReset())));
        e.lastAdmit = now;
        e.source = "discovery";
        entries.add(e);
      }
    }
    planned.put(origin, List.copyOf(entries));
  }

  // ---- Budgets

  @Override
  public synchronized List<Budget> snapshot(HttpRequest request) {
    ScopeState s = scopes.get(scopeId(request));
    String path = request.uri().getRawPath();
    Set<String> labels = Set.of();
    if (vend != null && vend.isVendCall(request) && s != null) {
      // The body (and so the function) of the request is not read here: every vend budget is listed,
      // each named by the scope or function it paces.
      labels = new HashSet<>();
      for (TrackedBudget e : s.entries.values()) {
        if (e.selector != null) {
          labels.add(e.selector);
        }
      }
    }
    List<TrackedBudget> active = active(s == null ? new ScopeState() : s, Origins.of(request.uri()), request.method(),
        path == null || path.isEmpty() ? "/" : path, labels);
    long now = ticker.read();
    List<Budget> out = new ArrayList<>();
    for (TrackedBudget e : active) {
      out.add(new Budget(e.policy, Optional.ofNullable(e.pk), e.remaining, Duration.ofNanos(Math.max(0, e.resetAt - now)),
          e.quota < 0 ? OptionalLong.empty() : OptionalLong.of(e.quota),
          e.window < 0 ? Optional.empty() : Optional.of(Duration.ofNanos(e.window)), e.source, e.unit));
    }
    return out;
  }

  @Override
  public void observe(HttpRequest request, String policy, long remaining, Duration reset) {
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(reset, "reset");
    if (remaining < 0) {
      throw new IllegalArgumentException("remaining: expected zero or more, got " + remaining);
    }
    if (reset.isNegative()) {
      throw new IllegalArgumentException("reset: expected zero or more, got " + reset);
    }
    List<CompletableFuture<Void>> wake = List.of();
    synchronized (this) {
      ScopeState s = scope(scopeId(request));
      try {
        long now = ticker.read();
        put(s, policy, null, remaining, Ceilings.saturatingAdd(now, Ceilings.clampedNanos(reset, ceilings.maxReset())),
            -1, -1, reset.compareTo(ceilings.maxReset()) > 0, now, "observed");
      } finally {
        wake = s.drainWaiters();
      }
    }
    wake.forEach(f -> f.complete(null));
  }

  @Override
  public void hold(HttpRequest request, Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay: expected zero or more, got " + delay);
    }
    synchronized (this) {
      block(scope(scopeId(request)), delay, ceilings.maxRetryAfter(), ticker.read());
    }
  }

  // ---- state

  private String scopeId(HttpRequest request) {
    String id = scopeOf.apply(request);
    if (id == null) {
      throw new IllegalStateException("scope: the scope function returned null for " + request.uri());
    }
    return id;
  }

  private ScopeState scope(String id) {
    return scopes.computeIfAbsent(id, k -> new ScopeState());
  }

  /**
   * The right to send one request, reported back with {@link #record} or {@link #release}.
   * {@code probe}: it goes alone, its answer deciding for the next; {@code ask}: it goes to ask a
   * budget that may be spent and states no reset ({@link SendTiming}), so a refusal is expected and
   * does not escalate the retry's back-off. {@code slot}: its place on its origin's wire
   * ({@link OriginCapacity}).
   */
  record Permit(ScopeState scope, boolean probe, boolean ask, long seq, boolean alone, long answeredAtAdmit, long admittedAt,
      RequestCost cost, OriginCapacity.Slot slot) {}
}
