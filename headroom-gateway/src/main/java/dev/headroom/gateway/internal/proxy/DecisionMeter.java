package dev.headroom.gateway.internal.proxy;

import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.StoreException;
import dev.headroom.enforcement.GateListener;
import dev.headroom.enforcement.RouteRules;

/**
 * The gate's decisions as the dashboard's heavy hitters by partition, and the store's failures as a
 * throttled warning ({@link GatewayState#storeWarning}). The meters ({@code headroom_decisions_total}
 * by policy, outcome and problem, {@code headroom_store_latency_seconds}, ...) are the gate's own,
 * recorded in the gateway's registry as on every front end (headroom-enforcement
 * {@code HeadroomMeters}). Thread-safe.
 */
final class DecisionMeter implements GateListener {
  private final GatewayState state;

  DecisionMeter(GatewayState state) {
    this.state = state;
  }

  @Override
  public void decided(RouteRules route, Decision decision) {
    for (PolicyOutcome o : decision.outcomes()) {
      state.metrics.partition(o.policy().name(), o.key(), !o.allowed());
    }
  }

  @Override
  public void storeFailed(RouteRules route, StoreException failure) {
    state.storeWarning.warn(state.ticker, "store failed on route " + route.template() + ": " + failure);
  }

  @Override
  public void blocked(RouteRules route, QuotaPolicy policy, PartitionKey key) {
    state.metrics.partition(policy.name(), key, true);
  }
}
