package dev.headroom.enforcement;

import dev.headroom.Decision;
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

  /** The store could not decide (or update); the gate then applies its store-failure mode. */
  default void storeFailed(RouteRules route, StoreException failure) {}

  /** Listens to nothing. */
  static GateListener none() {
    return (route, decision) -> {};
  }
}
