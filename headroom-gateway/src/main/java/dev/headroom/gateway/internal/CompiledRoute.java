package dev.headroom.gateway.internal;

import dev.headroom.gateway.GatewayConfig.Policy;
import dev.headroom.gateway.GatewayConfig.Route;
import java.util.List;

/** A route ready to match: its template parsed and its policies resolved. Immutable. */
record CompiledRoute(Route route, PathTemplate template, List<Policy> policies) {
  CompiledRoute {
    policies = List.copyOf(policies);
  }

  boolean hasMethod(String method) {
    return route.methods().contains(method);
  }
}
