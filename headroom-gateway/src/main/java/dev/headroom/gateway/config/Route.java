package dev.headroom.gateway.config;

import dev.headroom.enforcement.AdaptiveConcurrency;
import dev.headroom.http.headers.FieldRules;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A route: methods and a path template ({@code /items/{id}}, {@code /files/**}), the upstream it
 * forwards to, the policies that apply, the header dialects it speaks (one, or several that do not clash) and whether the upstream's
 * bare non-success responses are rewritten into structured ones, and whether the upstream's
 * redirects (3xx) go out without RateLimit fields (draft-09 section 6), whether the route is listed
 * in the discovery document ({@code listed: false} keeps it out, Graceful Boundaries SC-4), and the
 * optional field rules it turns on (jitter, fields only near exhaustion, the remaining/reset ratio
 * cap: headroom-http {@link FieldRules}), what a request costs, and the protocols a request may
 * upgrade its connection to ({@code upgrade}, lower case, such as {@code websocket}; empty: none,
 * and a request asking for an upgrade is refused with 400), and its adaptive concurrency
 * ({@code adaptive}: a {@code concurrent-requests} policy whose quota is learnt from the upstream's
 * latency and failures; empty: off).
 */
public record Route(
    String name,
    Set<String> methods,
    String path,
    String upstream,
    List<String> policies,
    List<String> dialects,
    boolean normaliseErrors,
    boolean omitOnRedirect,
    Optional<PartitionKeyMode> pk,
    Optional<Vend> vend,
    boolean listed,
    FieldRules fields,
    RouteCost cost,
    Set<String> upgrade,
    Optional<AdaptiveConcurrency> adaptive) {
  public Route {
    methods = Set.copyOf(methods);
    upgrade = Set.copyOf(upgrade);
    policies = List.copyOf(policies);
    dialects = List.copyOf(dialects);
  }
}
