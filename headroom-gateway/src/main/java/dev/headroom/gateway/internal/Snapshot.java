package dev.headroom.gateway.internal;

import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.config.Route;
import java.util.Map;
import java.util.Optional;

/**
 * One configuration made ready to serve: routes compiled, upstream pools resolved, the HTTP
 * vocabulary built, the limits page rendered, the plan gate made (when the configuration has plans).
 * A request keeps the snapshot it started with, so a reload never changes a
 * request in flight. Immutable.
 */
record Snapshot(GatewayConfig config, RouteTable routes, Map<String, UpstreamPool> pools, HttpVocabulary vocabulary,
    Map<Route, VendRoutes> vend, Optional<LimitsPage> page, Optional<PlanGate> plans) {
  Snapshot {
    pools = Map.copyOf(pools);
    vend = java.util.Collections.unmodifiableMap(new java.util.IdentityHashMap<>(vend));
  }

  /** A snapshot with the limits page of {@code config} ({@code service.humanUrl}), if it names one, and no plans. */
  Snapshot(GatewayConfig config, RouteTable routes, Map<String, UpstreamPool> pools, HttpVocabulary vocabulary,
      Map<Route, VendRoutes> vend) {
    this(config, routes, pools, vocabulary, vend, LimitsPage.of(config), Optional.empty());
  }
}
