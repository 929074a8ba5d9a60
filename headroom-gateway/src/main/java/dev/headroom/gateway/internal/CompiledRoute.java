package dev.headroom.gateway.internal;

import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Route;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.http.path.PathTemplate;
import java.util.List;

/**
 * A route ready to match: its template parsed, its policies resolved, and the writer of its
 * RateLimit fields (the snapshot's {@link HttpVocabulary#headers}, held here so that a response finds
 * it without a lookup). Immutable.
 */
record CompiledRoute(Route route, PathTemplate template, List<Policy> policies, RateLimitHeaders headers) {
  CompiledRoute {
    policies = List.copyOf(policies);
  }

  boolean hasMethod(String method) {
    return route.methods().contains(method);
  }
}
