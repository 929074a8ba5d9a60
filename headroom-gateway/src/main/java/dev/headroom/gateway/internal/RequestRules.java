package dev.headroom.gateway.internal;

import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.PolicyRules;
import dev.headroom.gateway.config.RouteCost;
import dev.headroom.gateway.internal.HttpVocabulary.RequestFacts;
import dev.headroom.enforcement.RequestCost;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A policy's rules and a route's cost applied to one request, before anything is decided:
 * whether the policy applies ({@code when}: method and route) and whether the caller bypasses it
 * ({@code allow}: its address in a CIDR block, its API key's SHA-256 on the list); what the request
 * costs ({@code cost}, or the request header {@code cost.header}, bounded by {@code cost.max}).
 */
final class RequestRules {
  private RequestRules() {}

  /** Whether {@code p} decides this request: it applies, and the caller is not on its allow list. */
  static boolean applies(Exchange ex, Policy p, RequestFacts facts) {
    PolicyRules r = p.rules();
    if (!r.appliesTo(facts.method(), ex.route.route().name())) {
      return false;
    }
    if (!r.allow().isEmpty() && r.allow().bypasses(
        r.allow().cidrs().isEmpty() ? Optional.empty() : ex.snap.vocabulary().clientAddress(facts),
        facts.headers().getAll(r.allow().header()))) {
      ex.state.metrics.decision(p.name(), "bypassed");
      return false;
    }
    return true;
  }

  /**
   * The request's cost in units: {@code cost.header}'s value (one field line, a whole number from 0
   * to {@code cost.max}) or, without it, {@code cost.units}. A value that is not valid is answered
   * 400 naming the header and what is expected, and the result is empty.
   */
  static OptionalLong cost(Exchange ex, RouteCost cost) {
    if (cost.header().isEmpty()) {
      return OptionalLong.of(cost.units());
    }
    List<String> values = ex.request.headers().getAll(cost.header().get());
    if (values.isEmpty()) {
      return OptionalLong.of(cost.units());
    }
    OptionalLong v = RequestCost.parse(values, cost.max());
    if (v.isEmpty()) {
      String header = cost.header().get();
      ex.refused(ex.snap.vocabulary().error(new HttpVocabulary.GatewayError(400, RequestCost.ERROR,
          RequestCost.detail(header), RequestCost.WHY,
          Map.of("field", header, "expected", RequestCost.expected(header, cost.max()))), ex.format, ex.path()));
    }
    return v;
  }

  /** The units a policy is asked for: bytes are charged after the fact, a concurrency lease is one. */
  static long units(QuotaPolicy p, long cost) {
    return switch (p.unit()) {
      case CONTENT_BYTES -> 0;
      case CONCURRENT_REQUESTS -> 1;
      default -> cost;
    };
  }
}
