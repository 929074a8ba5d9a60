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
import java.util.List;
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
 * <p>State: a counter of requests in flight (one atomic, compare-and-set against the limit); the
 * policy of the current limit, rebuilt when the limit changes; and, under this object's lock, the
 * highest limit learnt. The capacity factor is the limit over the highest limit learnt so far, in
 * twentieths (so that a discovery document is not rebuilt for every step), set whenever the limit
 * changes and the factor in force differs: a route that learnt it could carry 40 and now carries
 * 20 runs its quotas at half. Thread-safe.
 */
final class AdaptiveRoute {
  /** The steps of the capacity factor: twentieths. */
  static final int FACTOR_STEPS = 20;
  /** The longest {@code t} of an admitted request's item, as for every concurrency policy (headroom-core {@code Concurrency}). */
  static final long HINT_NANOS = 1_000_000_000L;

  private final AdaptiveConcurrency config;
  private final AdaptiveLimit limit;
  private final Ticker ticker;
  private final CapacityReductions capacity;
  private final List<QuotaPolicy> scaled;
  private final AtomicInteger inflight = new AtomicInteger();
  private volatile QuotaPolicy policy;
  /** The highest limit learnt; guarded by this. */
  private int peak;

  /**
   * @param scaled the route's policies whose capacity follows the limit (none without scaleQuotas)
   */
  AdaptiveRoute(AdaptiveConcurrency config, Ticker ticker, CapacityReductions capacity, List<QuotaPolicy> scaled) {
    this.config = config;
    this.ticker = ticker;
    this.capacity = capacity;
    this.scaled = config.scaleQuotas() ? List.copyOf(scaled) : List.of();
    this.limit = new AdaptiveLimit(config, ticker.read());
    this.policy = policy(config.initialLimit());
    this.peak = config.initialLimit();
  }

  /** The limit now. */
  int limit() {
    return limit.limit();
  }

  /** The requests in flight now. */
  int inflight() {
    return inflight.get();
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

  /** A permit for one more request in flight, or null when the limit is reached. */
  Permit tryAcquire() {
    while (true) {
      int n = inflight.get();
      int q = limit.limit();
      if (n >= q) {
        return null;
      }
      if (inflight.compareAndSet(n, n + 1)) {
        QuotaPolicy p = current(q);
        long t = n + 1 >= q ? Math.min(HINT_NANOS, drainNanos(1, n + 1)) : 0;
        return new Permit(ticker.read(), n + 1,
            new PolicyOutcome(p, PartitionKey.GLOBAL, 1, true, q - (n + 1), t, 0, null));
      }
    }
  }

  /**
   * The refusal of a request beyond the limit: the policy's item with nothing remaining and a
   * Retry-After of the time the requests in flight take to drain enough for one more.
   */
  Decision refused() {
    int q = limit.limit();
    int n = inflight.get();
    long wait = Math.max(1_000_000_000L, drainNanos(Math.max(1, n - q + 1), Math.max(1, n)));
    return Decision.of(List.of(new PolicyOutcome(current(q), PartitionKey.GLOBAL, 1, false, 0, wait, wait, null)));
  }

  /**
   * How long {@code excess} of {@code n} requests in flight take to complete: by Little's law they
   * complete at {@code n / latency} a second, so {@code excess * latency / n}; a second of latency is
   * assumed before any is measured.
   */
  private long drainNanos(int excess, int n) {
    long latency = limit.latencyNanos();
    if (latency <= 0) {
      latency = 1_000_000_000L;
    }
    return (long) Math.ceil((double) excess * latency / n);
  }

  /** A completion's sample: the limit learns from it, and the quotas follow when it changed. */
  private void sample(Permit p, boolean failed) {
    long now = ticker.read();
    long latency = p.latency >= 0 ? p.latency : now - p.start;
    if (limit.onSample(now, latency, p.latency >= 0 ? p.ownDelay : 0, p.inflight, failed)) {
      scale(limit.limit());
    }
  }

  /** Sets the scaled policies' capacity factor to {@code q} over the highest limit learnt, in twentieths. */
  private synchronized void scale(int q) {
    peak = Math.max(peak, q);
    if (scaled.isEmpty()) {
      return;
    }
    double factor = (double) Math.max(1, (int) Math.floor((double) q * FACTOR_STEPS / peak)) / FACTOR_STEPS;
    for (QuotaPolicy p : scaled) {
      // compared with the factor in force, which may be a reloaded configuration's or an operator's
      if (capacity.factor(p.name()).orElse(1.0) != factor) {
        capacity.set(p, factor);
      }
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
    private final PolicyOutcome outcome;
    private final AtomicBoolean done = new AtomicBoolean();
    /** The upstream's time as the front end measured it, or -1: from {@link #start} to completion. */
    private volatile long latency = -1;
    /** Of {@link #latency}, the front end's own delay. */
    private volatile long ownDelay;

    private Permit(long start, int inflight, PolicyOutcome outcome) {
      this.start = start;
      this.inflight = inflight;
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
        AdaptiveRoute.this.inflight.decrementAndGet();
        sample(this, status >= 500);
      }
    }

    /**
     * No response came (the upstream failed or timed out, or the client left: a front end cannot
     * always tell them apart): a failure. Once.
     */
    void unanswered() {
      if (done.compareAndSet(false, true)) {
        AdaptiveRoute.this.inflight.decrementAndGet();
        sample(this, true);
      }
    }

    /** The request went no further than the decision: given back without a sample. Once. */
    void abandon() {
      if (done.compareAndSet(false, true)) {
        AdaptiveRoute.this.inflight.decrementAndGet();
      }
    }
  }
}
