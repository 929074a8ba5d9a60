package dev.headroom.enforcement;

import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.discovery.DiscoveryRoute;
import dev.headroom.enforcement.discovery.LimitsDiscoveryDocument;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;
import java.util.function.UnaryOperator;

/**
 * The gate's discovery document (Graceful Boundaries section 1), made from its routes and built
 * again whenever limits change at run time ({@link RuntimeLimits}), so that the document never
 * drifts from what is enforced: the limits an operator changed ({@link RuntimeLimits}) or reduced
 * ({@link CapacityReductions}, rebuilt when a factor changes) and the limits of adaptive routes
 * (the {@code learnt} limit now, rebuilt when one has moved since: {@code Gate#discovery()}). With plans, each route lists the fallback plan's limits and the
 * document lists every plan. Immutable.
 */
final class GateDiscovery {
  private final String service;
  private final String description;
  private final LimitRefusals refusals;
  private final List<RouteRules> routes;
  private final Plans plans;
  private final List<QuotaPolicy> policies;
  private final Consumer<LimitsDiscoveryDocument.Builder> customizer;
  /** Each policy as configured, by name: what a reduced policy's description speaks of. */
  private final Map<String, QuotaPolicy> configuredByName;

  GateDiscovery(String service, String description, LimitRefusals refusals, List<RouteRules> routes, Plans plans,
      List<QuotaPolicy> policies, Consumer<LimitsDiscoveryDocument.Builder> customizer) {
    this.service = service;
    this.description = description;
    this.refusals = refusals;
    this.routes = routes;
    this.plans = plans;
    this.policies = policies;
    this.customizer = customizer;
    Map<String, QuotaPolicy> byName = new HashMap<>();
    routes.forEach(r -> r.policies().forEach(p -> byName.putIfAbsent(p.name(), p)));
    policies.forEach(p -> byName.putIfAbsent(p.name(), p));
    this.configuredByName = Map.copyOf(byName);
  }

  /**
   * The document with each policy as {@code effective} says (the limits in force).
   *
   * @throws IllegalArgumentException when headroom-http refuses part of it
   */
  LimitsDiscoveryDocument build(UnaryOperator<QuotaPolicy> effective, Predicate<String> reduced,
      ToIntFunction<RouteRules> learnt) {
    LimitsDiscoveryDocument.Builder d = LimitsDiscoveryDocument.builder(service, description)
        .texts(q -> texts(q, reduced))
        .proactiveHeaders(routes.stream().anyMatch(r -> !r.policies().isEmpty() || r.adaptive().isPresent()));
    refusals.origin().ifPresent(d::origin);
    for (RouteRules r : routes) {
      List<String> methods = r.methods().isEmpty() ? List.of("ANY") : List.copyOf(r.methods());
      for (String m : methods) {
        DiscoveryRoute.Builder dr = DiscoveryRoute.builder(m, r.template()).listed(r.listed());
        for (QuotaPolicy p : r.policies()) {
          QuotaPolicy now = effective.apply(p);
          dr.policy(plans == null ? now : plans.policy(plans.fallback(), now));
        }
        if (r.key().isPresent()) {
          dr.key(methods.size() == 1 ? r.key().get() : r.key().get() + "-" + m.toLowerCase(Locale.ROOT));
        }
        r.adaptive().ifPresent(a -> dr.adaptive(new DiscoveryRoute.Adaptive(a.name(), learnt.applyAsInt(r),
            a.minLimit(), a.maxLimit(), a.shares())));
        r.note().ifPresent(dr::note);
        if (r.cost() != 1 || r.costHeader().isPresent() || r.chargeHeader().isPresent()) {
          dr.cost(new DiscoveryRoute.Cost(r.cost(), r.costHeader(), r.maxCost(), r.chargeHeader()));
        }
        d.route(dr.build());
      }
    }
    if (plans != null) {
      d.plans(plans, policies.stream().map(effective).toList());
    }
    customizer.accept(d);
    return d.build();
  }

  /**
   * A policy's texts; a policy whose capacity an operator reduced says so after its description,
   * with the quota in force (draft-09 section 5.2: the reduction is temporary).
   */
  private PolicyTexts texts(QuotaPolicy inForce, Predicate<String> reduced) {
    PolicyTexts t = refusals.texts(inForce);
    QuotaPolicy configured = configuredByName.get(inForce.name());
    if (configured == null || !reduced.test(inForce.name())) {
      return t;
    }
    return t.toBuilder().description(t.description(configured) + " Temporarily reduced to " + inForce.quota() + ".")
        .build();
  }
}
