package dev.headroom.servlet;

import dev.headroom.Decision;
import dev.headroom.StoreException;

/**
 * Observes the filter's decisions, for metrics and logs. Called on the request thread, after the
 * decision and before the response is written; must be fast, thread-safe and must not throw (an
 * exception is caught and ignored so that it cannot fail the request).
 */
public interface DecisionListener {

  /** A decision was made for a request of the route. */
  void decided(Route route, Decision decision);

  /** A shadow policy of the route was decided (it never refuses the request). */
  default void shadowDecided(Route route, Decision decision) {}

  /** The store could not decide; the filter then applies its store-failure mode. */
  default void storeFailed(Route route, StoreException failure) {}

  /** Listens to nothing. */
  static DecisionListener none() {
    return (route, decision) -> {};
  }
}
