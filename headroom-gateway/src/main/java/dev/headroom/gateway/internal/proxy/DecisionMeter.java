package dev.headroom.gateway.internal.proxy;

import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.StoreException;
import dev.headroom.enforcement.GateListener;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.enforcement.plan.Plans;

/**
 * The gate's decisions as the gateway's meters ({@code headroom_decisions_total} by policy and
 * outcome: {@code allowed}, {@code refused}, {@code reduced} (refused under a reduced capacity; a
 * plan's policy follows its base's reduction), {@code blocked} (escalated), {@code bypassed}
 * (allow list), {@code shadow-allowed}, {@code shadow-refused}, {@code shadow-failed}, and
 * {@code plan}/{@code rejected} for an invalid credential; heavy hitters by partition), and the
 * store's failures as a throttled warning ({@link GatewayState#storeWarning}). Thread-safe.
 */
final class DecisionMeter implements GateListener {
  private final GatewayState state;
  private final Plans plans;

  DecisionMeter(GatewayState state, Plans plans) {
    this.state = state;
    this.plans = plans;
  }

  @Override
  public void decided(RouteRules route, Decision decision) {
    for (PolicyOutcome o : decision.outcomes()) {
      String name = o.policy().name();
      state.metrics.decision(name, o.allowed() ? "allowed" : reduced(name) ? "reduced" : "refused", o.key());
    }
  }

  private boolean reduced(String policy) {
    return state.capacity.isReduced(policy, plans == null ? policy : plans.baseName(policy));
  }

  @Override
  public void shadowDecided(RouteRules route, Decision decision) {
    PolicyOutcome o = decision.outcomes().get(0);
    state.metrics.decision(o.policy().name(), o.allowed() ? "shadow-allowed" : "shadow-refused");
  }

  @Override
  public void shadowFailed(RouteRules route, QuotaPolicy policy, StoreException failure) {
    state.metrics.decision(policy.name(), "shadow-failed");
  }

  @Override
  public void storeFailed(RouteRules route, StoreException failure) {
    state.storeWarning.warn(state.ticker, "store failed on route " + route.template() + ": " + failure);
  }

  @Override
  public void bypassed(RouteRules route, String policy) {
    state.metrics.decision(policy, "bypassed");
  }

  @Override
  public void blocked(RouteRules route, QuotaPolicy policy, PartitionKey key) {
    state.metrics.decision(policy.name(), "blocked", key);
  }

  @Override
  public void planRejected(RouteRules route) {
    state.metrics.decision("plan", "rejected");
  }
}
