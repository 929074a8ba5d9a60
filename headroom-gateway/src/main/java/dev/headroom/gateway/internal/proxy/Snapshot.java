package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.Gate;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.config.Route;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * One configuration made ready to serve: routes compiled, upstream pools resolved, the HTTP
 * vocabulary built, the limits page rendered, the enforcement gate built ({@link ConfiguredGate}).
 * A request keeps the snapshot it started with, so a reload never changes a
 * request in flight. Immutable.
 */
public record Snapshot(GatewayConfig config, RouteTable routes, Map<String, UpstreamPool> pools, HttpVocabulary vocabulary,
    Map<Route, VendRoutes> vend, Optional<LimitsPage> page, Gate<Object> gate) {
  public Snapshot {
    pools = Map.copyOf(pools);
    vend = Collections.unmodifiableMap(new IdentityHashMap<>(vend));
  }

  /**
   * A snapshot with the limits page of {@code config} ({@code service.humanUrl}), if it names one,
   * that decides nothing: what becomes of a request from its head alone ({@link Triage}).
   */
  Snapshot(GatewayConfig config, RouteTable routes, Map<String, UpstreamPool> pools, HttpVocabulary vocabulary,
      Map<Route, VendRoutes> vend) {
    this(config, routes, pools, vocabulary, vend, LimitsPage.of(config), null);
  }
}
