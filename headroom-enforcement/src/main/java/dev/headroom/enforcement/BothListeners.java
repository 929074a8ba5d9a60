package dev.headroom.enforcement;

import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.StoreException;

/**
 * The application's listener and the gate's meters, each told every event; one that throws keeps
 * neither the other from hearing nor the request from going on (the {@link GateListener} contract).
 */
record BothListeners(GateListener first, GateListener second) implements GateListener {

  @Override
  public void decided(RouteRules route, Decision decision) {
    tell(() -> first.decided(route, decision));
    tell(() -> second.decided(route, decision));
  }

  @Override
  public void shadowDecided(RouteRules route, Decision decision) {
    tell(() -> first.shadowDecided(route, decision));
    tell(() -> second.shadowDecided(route, decision));
  }

  @Override
  public void shadowFailed(RouteRules route, QuotaPolicy policy, StoreException failure) {
    tell(() -> first.shadowFailed(route, policy, failure));
    tell(() -> second.shadowFailed(route, policy, failure));
  }

  @Override
  public void storeFailed(RouteRules route, StoreException failure) {
    tell(() -> first.storeFailed(route, failure));
    tell(() -> second.storeFailed(route, failure));
  }

  @Override
  public void bypassed(RouteRules route, String policy) {
    tell(() -> first.bypassed(route, policy));
    tell(() -> second.bypassed(route, policy));
  }

  @Override
  public void blocked(RouteRules route, QuotaPolicy policy, PartitionKey key) {
    tell(() -> first.blocked(route, policy, key));
    tell(() -> second.blocked(route, policy, key));
  }

  @Override
  public void planRejected(RouteRules route) {
    tell(() -> first.planRejected(route));
    tell(() -> second.planRejected(route));
  }

  private static void tell(Runnable call) {
    try {
      call.run();
    } catch (RuntimeException ignored) {
      // A listener cannot fail the request or silence the other.
    }
  }
}
