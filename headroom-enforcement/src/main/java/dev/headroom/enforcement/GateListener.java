package dev.headroom.enforcement;

import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.StoreException;

/**
 * Observes the gate's decisions, for metrics and logs. Called on whatever thread decided (a
 * request thread, or a store's I/O thread for an asynchronous decision): it must be fast, must not
 * block and must not throw; an exception it throws is ignored.
 */
public interface GateListener {

  /** A decision was made for a request of the route. */
  void decided(RouteRules route, Decision decision);

  /** A shadow policy of the route was decided (it never refuses the request). */
  default void shadowDecided(RouteRules route, Decision decision) {}

  /** A shadow policy of the route could not be decided; the request goes on as if it did not exist. */
  default void shadowFailed(RouteRules route, QuotaPolicy policy, StoreException failure) {}

  /** The store could not decide (or update); the gate then applies its store-failure mode. */
  default void storeFailed(RouteRules route, StoreException failure) {}

  /** The caller is on the allow list of the policy of this name: neither counted nor refused by it. */
  default void bypassed(RouteRules route, String policy) {}

  /** The partition is blocked by the policy's escalation: refused without asking the store. */
  default void blocked(RouteRules route, QuotaPolicy policy, PartitionKey key) {}

  /** The request's credential is invalid for the plans: refused with 401. */
  default void planRejected(RouteRules route) {}

  /** Listens to nothing. */
  static GateListener none() {
    return (route, decision) -> {};
  }
}
