package dev.headroom.gateway.internal;

import dev.headroom.gateway.GatewayConfig;
import java.util.Map;

/**
 * One configuration made ready to serve: routes compiled, upstream pools resolved, the HTTP
 * vocabulary built. A request keeps the snapshot it started with, so a reload never changes a
 * request in flight. Immutable.
 */
record Snapshot(GatewayConfig config, RouteTable routes, Map<String, UpstreamPool> pools, HttpVocabulary vocabulary,
    Map<GatewayConfig.Route, VendRoutes> vend) {
  Snapshot {
    pools = Map.copyOf(pools);
    vend = java.util.Collections.unmodifiableMap(new java.util.IdentityHashMap<>(vend));
  }
}
