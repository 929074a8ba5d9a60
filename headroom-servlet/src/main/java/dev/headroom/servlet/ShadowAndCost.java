package dev.headroom.servlet;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.StoreException;
import dev.headroom.http.RequestCost;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.enforcement.ShadowFields;
import dev.headroom.http.partition.PartitionKeyDerivation;
import dev.headroom.http.partition.RequestView;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalLong;

/**
 * A route's cost and shadow policies, applied by the filter. Cost: the request header
 * {@link Route#costHeader()} (one field, a whole number from 0 to {@link Route#maxCost()}, parsed
 * without overflow) or {@link Route#cost()}; a bad value is 400 {@code invalid_cost} naming the
 * header and the range (Graceful Boundaries section 6). Shadow: each shadow policy decided alone,
 * reported to {@link DecisionListener#shadowDecided}, logged (platform logging) when it would refuse,
 * its lease (if any) given back at once, its item added to the response's RateLimit fields when
 * the route sends its fields; a store failure is ignored; a caller on the policy's allow list
 * bypasses it. Stateless.
 */
final class ShadowAndCost {
  private static final System.Logger LOG = System.getLogger(ShadowAndCost.class.getName());

  private ShadowAndCost() {}

  /** The request's cost, or empty after answering 400. */
  static OptionalLong cost(HttpServletRequest request, HttpServletResponse response, Route route, URI origin)
      throws IOException {
    if (route.costHeader().isEmpty()) {
      return OptionalLong.of(route.cost());
    }
    String header = route.costHeader().get();
    List<String> values = Collections.list(request.getHeaders(header));
    if (values.isEmpty()) {
      return OptionalLong.of(route.cost());
    }
    OptionalLong cost = RequestCost.parse(values, route.maxCost());
    if (cost.isPresent()) {
      return cost;
    }
    Refusal refusal = Refusal.builder(400).error(RequestCost.ERROR).detail(RequestCost.detail(header))
        .why(RequestCost.WHY).field(header).expected(RequestCost.expected(header, route.maxCost()))
        .origin(origin).build();
    response.setStatus(400);
    RefusalFormat format = RefusalFormat.negotiate(request.getHeader("Accept"));
    RefusalResponses.writeBody(request, response, format, format.body(refusal, null));
    return OptionalLong.empty();
  }

  /** The units a policy is asked for: bytes are charged after the fact, a concurrency lease is one. */
  static long units(QuotaPolicy p, long cost) {
    return switch (p.unit()) {
      case CONTENT_BYTES -> 0;
      case CONCURRENT_REQUESTS -> 1;
      default -> cost;
    };
  }

  /**
   * Decides the route's shadow policies the request does not bypass.
   *
   * @return the RateLimit items of those whose fields are sent ({@link Route#sendsShadowFields}),
   *     as {@link ShadowFields#item} makes them; empty when none
   */
  static List<PolicyOutcome> shadows(QuotaLimiter limiter, Route route, List<PartitionKeyDerivation> derivations,
      RequestView view, long cost, DecisionListener listener, AllowLists allows) {
    List<QuotaPolicy> shadows = route.shadowPolicies();
    List<PolicyOutcome> fields = List.of();
    for (int i = 0; i < shadows.size(); i++) {
      QuotaPolicy p = shadows.get(i);
      if (allows.bypasses(p.name(), view)) {
        continue;
      }
      Decision d;
      try {
        d = limiter.acquire(List.of(Acquisition.of(p, derivations.get(i).derive(view), units(p, cost))));
      } catch (StoreException e) {
        continue; // a shadow decision never affects the request
      }
      limiter.release(d);
      try {
        listener.shadowDecided(route, d);
      } catch (RuntimeException ignored) {
        // A listener cannot fail the request (DecisionListener contract).
      }
      if (!d.allowed()) {
        LOG.log(System.Logger.Level.INFO, "shadow policy {0} would refuse a request of {1} (retry after {2} s); allowed",
            p.name(), route.template(), d.retryAfterSeconds());
      }
      if (route.sendsShadowFields(p.name())) {
        if (fields.isEmpty()) {
          fields = new ArrayList<>(1);
        }
        fields.add(ShadowFields.item(d.outcomes().get(0)));
      }
    }
    return fields;
  }

  /** The decision the response's RateLimit fields are written from: the enforced one and the shadow items. */
  static Decision withShadowFields(Decision enforced, List<PolicyOutcome> shadowFields) {
    if (shadowFields.isEmpty()) {
      return enforced;
    }
    List<PolicyOutcome> all = new ArrayList<>(enforced.outcomes());
    all.addAll(shadowFields);
    return Decision.of(all);
  }
}
