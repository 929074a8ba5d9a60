package dev.headroom.gateway.internal.proxy;

import dev.headroom.InMemoryStore;
import dev.headroom.QuotaLimiter;
import dev.headroom.enforcement.Escalation;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateBuilder;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.enforcement.discovery.LimitsDiscoveryDocument;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.PolicyRules;
import dev.headroom.gateway.config.Route;
import dev.headroom.gateway.config.RouteCost;
import dev.headroom.gateway.config.Service;
import dev.headroom.gateway.internal.config.ConfigSections;
import dev.headroom.http.headers.HeaderDialect;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A gateway configuration's routes as the gate's ({@link ConfiguredGate}): each route with
 * policies becomes {@link RouteRules} (its methods and template, its policies, a policy whose
 * {@code when.routes} leaves the route out not among them, {@code when.methods}, {@code count},
 * {@code shadow}, cost and charge headers, dialects, field rules, {@code pk},
 * {@code omitOnRedirect}, {@code adaptive}), with allow lists and escalations by policy name, and the discovery
 * document's service texts and level. Needs nothing of a running gateway, so the configuration
 * reader builds the gate once at load ({@link #check}) without one. Stateless.
 */
final class GateRoutes {
  private GateRoutes() {}

  /**
   * Builds the gate of {@code config} and its discovery document once, on a store of its own that
   * decides nothing, so that the configuration reader reports at load what headroom-enforcement
   * refuses in combination (two routes with one discovery key), never at the first request.
   *
   * @throws IllegalArgumentException naming what headroom-enforcement refused
   */
  static void check(ConfigSections config, GatewayMessages vocabulary) {
    GateBuilder<Object> b = Gate.builder().limiter(QuotaLimiter.of(InMemoryStore.builder().build()))
        .refusals(vocabulary.refusals()).clientAddresses(vocabulary.clients());
    add(config, b);
    Optional<Plans> plans = config.plans().map(p -> p.plans());
    plans.ifPresent(p -> b.plans(p, view -> CompletableFuture.completedFuture(
        new PlanResolution.Unavailable("a configuration check resolves no plan")), Duration.ofMillis(1)));
    b.build().discovery();
  }

  static Map<Route, RouteRules> add(ConfigSections config, GateBuilder<Object> b) {
    Service service = config.service();
    b.discovery(service.name(), service.description().isBlank() ? service.name() : service.description())
        .discoveryCustomizer(d -> discovery(d, config));
    Map<Route, RouteRules> rules = new IdentityHashMap<>();
    Set<String> used = new LinkedHashSet<>();
    for (Route r : config.routes()) {
      RouteRules.Builder rb = RouteRules.builder(r.path()).methods(r.methods()).key(r.name())
          .listed(r.listed() && r.vend().isEmpty()).fields(r.fields())
          .omitOnRedirect(r.omitOnRedirect()).exposure(RouteExposures.forRoute(config.pk(), r));
      if (!r.dialects().isEmpty()) {
        rb.dialects(r.dialects().stream().map(HeaderDialect::fromToken).toList());
      }
      cost(rb, r.cost());
      r.adaptive().ifPresent(rb::adaptive);
      boolean any = r.adaptive().isPresent();
      for (String name : r.policies()) {
        Policy p = config.policies().get(name);
        PolicyRules pr = p.rules();
        if (!pr.routes().isEmpty() && !pr.routes().contains(r.name())) {
          continue; // when.routes: the policy is not one of this route's
        }
        any = true;
        used.add(name);
        if (pr.shadow()) {
          rb.shadowPolicy(p.quota(), pr.shadowFields());
        } else {
          rb.policy(p.quota());
          if (pr.count() != PolicyRules.CountMode.ALL) {
            rb.counting(name, RouteRules.Counting.valueOf(pr.count().name()));
          }
        }
        if (!pr.methods().isEmpty()) {
          rb.when(name, pr.methods());
        }
      }
      if (any) {
        RouteRules built = rb.build();
        rules.put(r, built);
        b.route(built);
      }
    }
    for (String name : used) {
      Policy p = config.policies().get(name);
      if (!p.rules().allow().isEmpty()) {
        b.allow(name, p.rules().allow());
      }
      if (p.escalation().isPresent() && !p.rules().shadow()) {
        b.escalation(name, new Escalation(p.escalation().get().threshold(), p.escalation().get().block()));
      }
      if (p.queue().isPresent() && !p.rules().shadow()) {
        b.queue(name, p.queue().get());
      }
    }
    return rules;
  }

  /**
   * What the gateway's configuration adds to the gate's discovery document: the service's
   * changelog and feed, the level it delivers (Graceful Boundaries CONFORMANCE.md: level 1 only
   * when every limited route normalises its upstream's errors, {@code normaliseErrors}; otherwise a
   * bare upstream 500 goes out without {@code error}, {@code detail} and {@code why}), and the level
   * {@code service.conformance} declares instead.
   */
  private static void discovery(LimitsDiscoveryDocument.Builder d, ConfigSections config) {
    config.service().changelog().ifPresent(d::changelog);
    config.service().feed().ifPresent(d::feed);
    boolean structuredErrors = true;
    for (Route r : config.routes()) {
      structuredErrors &= r.normaliseErrors() || r.vend().isPresent() || r.policies().isEmpty();
    }
    d.structuredErrors(structuredErrors);
    config.service().conformance().ifPresent(d::declare);
  }

  private static void cost(RouteRules.Builder rb, RouteCost cost) {
    rb.cost(cost.units());
    cost.header().ifPresent(h -> rb.costHeader(h, cost.max()));
    cost.chargeHeader().ifPresent(h -> rb.chargeHeader(h, cost.max()));
  }
}
