package dev.headroom.spring.cloud.gateway;

import java.util.Set;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Serves the discovery document of every Headroom route (Graceful Boundaries section 1) at the
 * conventional paths, whatever the gateway's routes: requests for those paths never reach a route,
 * so no route predicate has to match them. The gate answers them ({@link HeadroomRoutes}); every
 * other request passes untouched. Thread-safe.
 */
final class DiscoveryWebFilter implements WebFilter, Ordered {

  private final HeadroomRoutes routes;
  private final Set<String> paths;

  DiscoveryWebFilter(HeadroomRoutes routes, Set<String> paths) {
    this.routes = routes;
    this.paths = Set.copyOf(paths);
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE + 100;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    if (!paths.contains(exchange.getRequest().getPath().pathWithinApplication().value())) {
      return chain.filter(exchange);
    }
    return routes.filter(exchange, chain::filter);
  }
}
