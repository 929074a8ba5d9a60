package dev.headroom.enforcement;

import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.Partitioning;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The adaptive concurrency of one route of a {@link Gate} ({@link AdaptiveConcurrency}): the requests
 * in flight, the limit learnt from their completions ({@link AdaptiveLimit}), the
 * {@code concurrent-requests} policy that advertises it, and, with
 * {@link AdaptiveConcurrency#scaleQuotas()}, the capacity factor of the route's quota policies.
 *
 * <p>A request takes a {@link Permit} before the store is asked ({@link #tryAcquire}); beyond the
 * limit it is refused without asking the store, so nothing else is consumed (all-or-nothing, as
 * ARCHITECTURE.md's request step 3 asks). The permit is given back when the response completes,
 * with its latency and whether it failed as the limit's sample, or without a sample when the request
 * went no further (another policy refused it, the store could not decide). This is the process's
 * own limit, as the upstream's latency seen from this process is: it never goes to a shared store.
 *
 * <p>State ({@link State}, which a reloaded gate takes over when the route's name and settings are
 * unchanged, {@link #carriedOver}): a counter of requests in flight; the learnt limit; the highest
 * limit learnt; and, with shares, the requests in flight of each plan's share. Without shares the
 * counter is one atomic, compare-and-set against the limit. With shares (after Netflix
 * concurrency-limits' {@code AbstractPartitionedLimiter}) a request of plan {@code p} with share
 * {@code s} is let through when
 * <pre>
 *   inflight &lt; limit  or  inflight(p) &lt; ceil(limit * s)
 * </pre>
 * and both counters are read and raised under the state's lock, which is what makes "its share is
 * free" and "taking it" one step. Worked numbers, limit 10, shares free 0.2 and pro 0.8: free alone
 * may take all 10 (it borrows pro's idle 8); pro then arrives and is let through up to its 8 (its
 * share is free, though 10 are in flight: 18 in flight at most), while free is refused until the
 * route is back under 10, so once free's borrowed requests complete, free holds its 2 and pro its 8.
 * Plans the shares leave out share {@code 1 - sum} as one pool; with shares summing to 1 they only
 * borrow. Whatever the plan, a refusal is 503 {@code temporary-reduced-capacity}
 * (draft-ietf-httpapi-ratelimit-headers-09 section 5.2), and the advertised {@code q} is the route's
 * whole limit: the plan's {@code r} is what one more request of the plan would find, the larger of
 * the route's free places and the plan's free share (section 4.1.1).
 *
 * <p>The policy of the current limit is rebuilt when the limit changes. The capacity factor is the
 * limit over the highest limit learnt so far, in twentieths (so that a discovery document is not
 * rebuilt for every step), set whenever the limit changes and the factor in force differs: a route
 * that learnt it could carry 40 and now carries 20 runs its quotas at half. Thread-safe.
 */
final class AdaptiveRoute {
  /** The steps of the capacity factor: twentieths. */
  static final int FACTOR_STEPS = 20;
  /** The longest {@code t} of an admitted request's item, as for every concurrency policy (headroom-core {@code Concurrency}). */
  static final long HINT_NANOS = 1_000_000_000L;

  private final AdaptiveConcurrency config;
  private final Ticker ticker;
  private final CapacityReductions capacity;
  private final List<QuotaPolicy> scaled;
  private final State state;
  private volatile QuotaPolicy policy;

  /**
   * What a route's adaptive concurrency has learnt and holds: the part a reloaded gate takes over.
   * Thread-safe: {@code inflight} is atomic; {@code peak} and the shares' counters are guarded by
   * this object's lock.
   */
  static final class State {
    final AdaptiveLimit limit;
    final AtomicInteger inflight = new AtomicInteger();
    /** Each named plan's share; empty without shares. */
    final Map<String, Share> shares;
    /** The plans the shares leave out, together. */
    final Share rest;
    /** The highest limit learnt; guarded by this. */
    int peak;

    State(AdaptiveConcurrency config, long now) {
      this.limit = new AdaptiveLimit(config, now);
      this.peak = config.initialLimit();
      Map<String, Share> byPlan = new HashMap<>();
      double sum = 0;
      for (Map.Entry<String, Double> e : config.shares().entrySet()) {
        byPlan.put(e.getKey(), new Share(e.getValue()));
        sum += e.getValue();
      }
      this.shares = Map.copyOf(byPlan);
      this.rest = new Share(Math.max(0, 1 - sum));
    }

    /** The share of {@code plan} (null when the request has none). */
    Share share(String plan) {
      Share s = plan == null ? null : shares.get(plan);
      return s != null ? s : rest;
    }
  }

  /** One plan's (or the left-out plans') part of the limit. Its counter is guarded by the {@link State}'s lock. */
  static final class Share {
    final double fraction;
    int inflight;

    Share(double fraction) {
      this.fraction = fraction;
    }

    /** The requests this share keeps under limit {@code q}: {@code ceil(q * fraction)}; none for a fraction under a millionth. */
    int guaranteed(int q) {
      return fraction < 1e-6 ? 0 : (int) Math.ceil(q * fraction - 1e-9);
    }
  }

  /**
   * @param scaled the route's policies whose capacity follows the limit (none without scaleQuotas)
   */
  AdaptiveRoute(AdaptiveConcurrency config, Ticker ticker, CapacityReductions capacity, List<QuotaPolicy> scaled) {
    this(config, ticker, capacity, scaled, new State(config, ticker.read()));
  }

  private AdaptiveRoute(AdaptiveConcurrency config, Ticker ticker, CapacityReductions capacity, List<QuotaPolicy> scaled,
      State state) {
    this.config = config;
    this.ticker = ticker;
    this.capacity = capacity;
    this.scaled = config.scaleQuotas() ? List.copyOf(scaled) : List.of();
    this.state = state;
    this.policy = policy(state.limit.limit());
  }

  /**
   * The adaptive concurrency of a reloaded route: this one's state (learnt limit, highest limit,
   * requests in flight, shares) with the new gate's ticker and capacity reductions and
   * {@code scaled}, the reloaded route's policies. For a route whose name and adaptive settings are
   * unchanged: requests admitted before the reload count against the limit until they complete, as
   * they would have.
   */
  AdaptiveRoute carriedOver(Ticker ticker, CapacityReductions capacity, List<QuotaPolicy> scaled) {
    return new AdaptiveRoute(config, ticker, capacity, scaled, state);
  }

  /** The settings. */
  AdaptiveConcurrency config() {
    return config;
  }

  /** The limit now. */
  int limit() {
    return state.limit.limit();
  }

  /** The requests in flight now. */
  int inflight() {
    return state.inflight.get();
  }

  /** The state now, for an operator's view; {@code route} the route's identity. */
  AdaptiveState state(String route) {
    synchronized (state) { // the shares' counters are guarded by it
      int q = state.limit.limit();
      Map<String, AdaptiveState.Share> shares = new HashMap<>();
      state.shares.forEach((plan, s) -> shares.put(plan, new AdaptiveState.Share(s.fraction, s.guaranteed(q), s.inflight)));
      return new AdaptiveState(route, config.name(), q, state.inflight.get(), shares);
    }
  }

  private QuotaPolicy policy(int q) {
    return QuotaPolicy.builder(config.name()).quota(q).unit(QuotaUnit.CONCURRENT_REQUESTS)
        .window(Duration.ofSeconds(1)).partitioning(Partitioning.GLOBAL).build();
  }

  /** The policy advertising limit {@code q}: the one kept while the limit stays. */
  private QuotaPolicy current(int q) {
    QuotaPolicy p = policy;
    if (p.quota() != q) {
      p = policy(q);
      policy = p;
    }
    return p;
  }

  /** A permit for one more request in flight, or null when the limit is reached; without shares. */
  Permit tryAcquire() {
    return tryAcquire(null);
  }

  /**
   * A permit for one more request of {@code plan} (null for none) in flight, or null when the limit
   * is reached and, with shares, the plan has its share in flight.
   */
  Permit tryAcquire(String plan) {
    if (!state.shares.isEmpty()) {
      return tryAcquireShared(state.share(plan));
    }
    AtomicInteger inflight = state.inflight;
    while (true) {
      int n = inflight.get();
      int q = state.limit.limit();
      if (n >= q) {
        return null;
      }
      if (inflight.compareAndSet(n, n + 1)) {
        return permit(q, n + 1, q - (n + 1), null);
      }
    }
  }

  private Permit tryAcquireShared(Share share) {
    int q;
    int n;
    int free;
    synchronized (state) {
      n = state.inflight.get();
      q = state.limit.limit();
      int g = share.guaranteed(q);
      if (n >= q && share.inflight >= g) {
        return null;
      }
      n = state.inflight.incrementAndGet();
      share.inflight++;
      free = Math.max(0, Math.max(q - n, g - share.inflight));
    }
    return permit(q, n, free, share);
  }

  /** The permit of the {@code n}th request in flight under limit {@code q}, {@code free} more of its kind let through. */
  private Permit permit(int q, int n, int free, Share share) {
    QuotaPolicy p = current(q);
    long t = free == 0 ? Math.min(HINT_NANOS, drainNanos(1, n)) : 0;
    return new Permit(ticker.read(), n, share, new PolicyOutcome(p, PartitionKey.GLOBAL, 1, true, free, t, 0, null));
  }

  /**
   * The refusal of a request beyond the limit: the policy's item with nothing remaining and a
   * Retry-After of the time the requests in flight take to drain enough for one more.
   */
  Decision refused() {
    int q = state.limit.limit();
    int n = state.inflight.get();
    long wait = Math.max(1_000_000_000L, drainNanos(Math.max(1, n - q + 1), Math.max(1, n)));
    return Decision.of(List.of(new PolicyOutcome(current(q), PartitionKey.GLOBAL, 1, false, 0, wait, wait, null)));
  }

  /**
   * How long {@code excess} of {@code n} requests in flight take to complete: by Little's law they
   * complete at {@code n / latency} a second, so {@code excess * latency / n}; a second of latency is
   * assumed before any is measured.
   */
  private long drainNanos(int excess, int n) {
    long latency = state.limit.latencyNanos();
    if (latency <= 0) {
      latency = 1_000_000_000L;
    }
    return (long) Math.ceil((double) excess * latency / n);
  }

  /** A completion's sample: the limit learns from it, and the quotas follow when it changed. */
  private void sample(Permit p, boolean failed) {
    long now = ticker.read();
    long latency = p.latency >= 0 ? p.latency : now - p.start;
    if (state.limit.onSample(now, latency, p.latency >= 0 ? p.ownDelay : 0, p.inflight, failed)) {
      scale(state.limit.limit());
    }
  }

  /** Sets the scaled policies' capacity factor to {@code q} over the highest limit learnt, in twentieths. */
  private void scale(int q) {
    synchronized (state) {
      state.peak = Math.max(state.peak, q);
      if (scaled.isEmpty()) {
        return;
      }
      double factor = (double) Math.max(1, (int) Math.floor((double) q * FACTOR_STEPS / state.peak)) / FACTOR_STEPS;
      for (QuotaPolicy p : scaled) {
        // compared with the factor in force, which may be a reloaded configuration's or an operator's
        if (capacity.factor(p.name()).orElse(1.0) != factor) {
          capacity.set(p, factor);
        }
      }
    }
  }

  /** One request fewer in flight, and one fewer of its share. */
  private void release(Share share) {
    if (share == null) {
      state.inflight.decrementAndGet();
      return;
    }
    synchronized (state) {
      state.inflight.decrementAndGet();
      share.inflight--;
    }
  }

  /** Adds the permit's item to {@code outcomes}: the fields an admitted response carries. */
  static List<PolicyOutcome> with(List<PolicyOutcome> outcomes, Permit permit) {
    List<PolicyOutcome> all = new ArrayList<>(outcomes.size() + 1);
    all.addAll(outcomes);
    all.add(permit.outcome);
    return all;
  }

  /** One admitted request's place in flight, given back once. */
  final class Permit {
    private final long start;
    private final int inflight;
    /** The share it counts against; null without shares. */
    private final Share share;
    private final PolicyOutcome outcome;
    private final AtomicBoolean done = new AtomicBoolean();
    /** The upstream's time as the front end measured it, or -1: from {@link #start} to completion. */
    private volatile long latency = -1;
    /** Of {@link #latency}, the front end's own delay. */
    private volatile long ownDelay;

    private Permit(long start, int inflight, Share share, PolicyOutcome outcome) {
      this.start = start;
      this.inflight = inflight;
      this.share = share;
      this.outcome = outcome;
    }

    /** The item the admitted response advertises. */
    PolicyOutcome outcome() {
      return outcome;
    }

    /** The front end measured the upstream's time, {@code ownDelayNanos} of it its own (Admission#upstreamLatency). */
    void measured(long latencyNanos, long ownDelayNanos) {
      this.ownDelay = Math.max(0, ownDelayNanos);
      this.latency = Math.max(0, latencyNanos);
    }

    /**
     * The response completed with {@code status}: a 5xx is a failure, anything else a latency
     * sample. Once; later calls do nothing.
     */
    void complete(int status) {
      if (done.compareAndSet(false, true)) {
        release(share);
        sample(this, status >= 500);
      }
    }

    /**
     * No response came (the upstream failed or timed out, or the client left: a front end cannot
     * always tell them apart): a failure. Once.
     */
    void unanswered() {
      if (done.compareAndSet(false, true)) {
        release(share);
        sample(this, true);
      }
    }

    /** The request went no further than the decision: given back without a sample. Once. */
    void abandon() {
      if (done.compareAndSet(false, true)) {
        release(share);
      }
    }
  }
}
