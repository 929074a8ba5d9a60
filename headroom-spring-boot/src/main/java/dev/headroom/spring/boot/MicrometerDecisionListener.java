package dev.headroom.spring.boot;

import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.StoreException;
import dev.headroom.enforcement.GateListener;
import dev.headroom.enforcement.RouteRules;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts decisions in Micrometer.
 *
 * <ul>
 * <li>{@code headroom.decisions} (counter), tags {@code policy} and {@code outcome}: one count per
 *   policy of every decided request; {@code allowed} when the request went through,
 *   {@code refused} for a policy that refused it, {@code not-consumed} for a policy that would
 *   have allowed it but was not charged because another refused (all-or-nothing);
 *   {@code shadow-allowed} / {@code shadow-refused} for shadow policies, which never refuse.
 * <li>{@code headroom.store.failures} (counter): decisions the store could not make.
 * </ul>
 *
 * <p>Tag values come from configured policy names only, so cardinality is bounded. Thread-safe.
 */
public final class MicrometerDecisionListener implements GateListener {

  /** The decisions counter. */
  public static final String DECISIONS = "headroom.decisions";

  /** The store failures counter. */
  public static final String STORE_FAILURES = "headroom.store.failures";

  private final MeterRegistry registry;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final Counter failures;

  public MicrometerDecisionListener(MeterRegistry registry) {
    this.registry = registry;
    this.failures = Counter.builder(STORE_FAILURES).description("Decisions the Headroom store could not make")
        .register(registry);
  }

  @Override
  public void decided(RouteRules route, Decision decision) {
    for (PolicyOutcome o : decision.outcomes()) {
      count(o.policy().name(), decision.allowed() ? "allowed" : o.allowed() ? "not-consumed" : "refused");
    }
  }

  private void count(String policy, String outcome) {
    counters.computeIfAbsent(policy + '\u0000' + outcome, k -> Counter.builder(DECISIONS)
        .description("Headroom decisions by policy and outcome")
        .tag("policy", policy).tag("outcome", outcome).register(registry)).increment();
  }

  /** Shadow decisions count as {@code shadow-allowed} or {@code shadow-refused}. */
  @Override
  public void shadowDecided(RouteRules route, Decision decision) {
    for (PolicyOutcome o : decision.outcomes()) {
      count(o.policy().name(), o.allowed() ? "shadow-allowed" : "shadow-refused");
    }
  }

  @Override
  public void storeFailed(RouteRules route, StoreException failure) {
    failures.increment();
  }
}
