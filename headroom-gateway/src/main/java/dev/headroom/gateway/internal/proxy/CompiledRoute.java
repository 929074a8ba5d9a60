package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.RouteRules;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Route;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.http.path.PathTemplate;
import java.util.List;

/**
 * A route ready to match: its template parsed, its policies resolved, the writer of its RateLimit
 * fields (the snapshot's {@link HttpVocabulary#headers}, for a vend call's decisions, held here so
 * that a response finds it without a lookup), and the rules its gate decides it by
 * ({@link ConfiguredGate}; null for a route without policies, or a snapshot that decides nothing),
 * and the response last made of the gate's refusal for it ({@link KeptRefusal}). Immutable but for
 * that.
 */
record CompiledRoute(Route route, PathTemplate template, List<Policy> policies, RateLimitHeaders headers,
    RouteRules rules, KeptRefusal refusal) {
  CompiledRoute {
    policies = List.copyOf(policies);
  }

  CompiledRoute(Route route, PathTemplate template, List<Policy> policies, RateLimitHeaders headers, RouteRules rules) {
    this(route, template, policies, headers, rules, new KeptRefusal());
  }

  boolean hasMethod(String method) {
    return route.methods().contains(method);
  }
}
