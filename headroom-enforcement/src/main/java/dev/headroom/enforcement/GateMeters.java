package dev.headroom.enforcement;

import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.StoreException;
import dev.headroom.http.body.ProblemType;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * The gate's meters ({@link HeadroomMeters}): decisions by policy, outcome and problem, store
 * latency, store failures by fallback, leases held. Counters are looked up once and cached. The
 * leases held are kept once per registry ({@link Leases}), so that gates rebuilt on a reload (the
 * gateway) or several gates on one registry report one gauge per policy. Thread-safe.
 */
final class GateMeters implements GateListener {
  private static final String ALLOWED = "allowed";
  private static final String QUOTA_EXCEEDED = GateResponses.problem(ProblemType.QUOTA_EXCEEDED);
  private static final String REDUCED = GateResponses.problem(ProblemType.TEMPORARY_REDUCED_CAPACITY);
  private static final String ABNORMAL = GateResponses.problem(ProblemType.ABNORMAL_USAGE_DETECTED);
  /** The leases held, per registry. */
  private static final Map<MeterRegistry, Leases> LEASES = new WeakHashMap<>();

  private final MeterRegistry registry;
  private final Predicate<String> reduced;
  private final Timer storeLatency;
  private final Map<String, Counter> decisions = new ConcurrentHashMap<>();
  private final Counter[] failures = new Counter[3];
  private final Leases leases;

  /**
   * @param reduced whether a policy (by name; a plan's version by its base) is enforced under a
   *     reduced capacity now
   */
  GateMeters(MeterRegistry registry, Predicate<String> reduced) {
    this.registry = registry;
    this.reduced = reduced;
    this.storeLatency = Timer.builder(HeadroomMeters.STORE_LATENCY)
        .description("Time the store takes to decide one request (every policy at once)").register(registry);
    String[] fallbacks = {"allow", "refuse", "ignore"};
    for (int i = 0; i < fallbacks.length; i++) {
      failures[i] = Counter.builder(HeadroomMeters.STORE_FAILURES).tag(HeadroomMeters.FALLBACK, fallbacks[i])
          .description("Store failures, by what was done instead").register(registry);
    }
    synchronized (LEASES) {
      this.leases = LEASES.computeIfAbsent(registry, r -> new Leases());
    }
  }

  void storeLatency(long nanos) {
    storeLatency.record(nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * A store failure, by what was done instead: {@code allow} (the request went through undecided),
   * {@code refuse} (503) or {@code ignore} (an update after the response).
   */
  void storeFailed(String fallback) {
    failures[switch (fallback) {
      case "allow" -> 0;
      case "refuse" -> 1;
      default -> 2;
    }].increment();
  }

  void leasesTaken(Decision d) {
    for (var lease : d.leases()) {
      leases.held(registry, lease.policy().name()).incrementAndGet();
    }
  }

  void leasesReleased(Decision d) {
    for (var lease : d.leases()) {
      leases.held(registry, lease.policy().name()).decrementAndGet();
    }
  }

  private void count(String policy, String outcome, String problem) {
    String key = policy + '\u0000' + outcome + '\u0000' + problem;
    Counter c = decisions.get(key);
    if (c == null) {
      c = decisions.computeIfAbsent(key, k -> Counter.builder(HeadroomMeters.DECISIONS)
          .description("Headroom decisions by policy, outcome and problem")
          .tag(HeadroomMeters.POLICY, policy).tag(HeadroomMeters.OUTCOME, outcome)
          .tag(HeadroomMeters.PROBLEM, problem).register(registry));
    }
    c.increment();
  }

  @Override
  public void decided(RouteRules route, Decision decision) {
    for (PolicyOutcome o : decision.outcomes()) {
      String name = o.policy().name();
      if (o.allowed()) {
        count(name, ALLOWED, HeadroomMeters.NONE);
      } else if (o.exceedsQuota()) {
        count(name, "refused", HeadroomMeters.EXCEEDS_LIMIT);
      } else if (reduced.test(name)) {
        count(name, "reduced", REDUCED);
      } else {
        count(name, "refused", QUOTA_EXCEEDED);
      }
    }
  }

  @Override
  public void shadowDecided(RouteRules route, Decision decision) {
    for (PolicyOutcome o : decision.outcomes()) {
      count(o.policy().name(), o.allowed() ? "shadow-allowed" : "shadow-refused",
          o.allowed() ? HeadroomMeters.NONE : QUOTA_EXCEEDED);
    }
  }

  @Override
  public void shadowFailed(RouteRules route, QuotaPolicy policy, StoreException failure) {
    count(policy.name(), "shadow-failed", HeadroomMeters.NONE);
    failures[2].increment();
  }

  @Override
  public void bypassed(RouteRules route, String policy) {
    count(policy, "bypassed", HeadroomMeters.NONE);
  }

  @Override
  public void blocked(RouteRules route, QuotaPolicy policy, PartitionKey key) {
    count(policy.name(), "blocked", ABNORMAL);
  }

  @Override
  public void planRejected(RouteRules route) {
    count(HeadroomMeters.PLAN_POLICY, "rejected", HeadroomMeters.INVALID_CREDENTIAL);
  }

  /** The leases held now by policy, for one registry; its gauges hold it strongly. Thread-safe. */
  private static final class Leases {
    private final Map<String, AtomicLong> byPolicy = new ConcurrentHashMap<>();

    AtomicLong held(MeterRegistry registry, String policy) {
      AtomicLong n = byPolicy.get(policy);
      if (n != null) {
        return n;
      }
      return byPolicy.computeIfAbsent(policy, p -> {
        AtomicLong held = new AtomicLong();
        Gauge.builder(HeadroomMeters.LEASES, held, AtomicLong::get).tag(HeadroomMeters.POLICY, p)
            .description("Concurrency leases held now by admitted requests").strongReference(true)
            .register(registry);
        return held;
      });
    }
  }
}
