package dev.headroom.gateway.internal.proxy;

import dev.headroom.InMemoryStore;
import dev.headroom.QuotaLimiter;
import dev.headroom.enforcement.Escalation;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateBuilder;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.enforcement.discovery.LimitsDiscoveryDocument;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.PolicyRules;
import dev.headroom.gateway.config.Route;
import dev.headroom.gateway.config.RouteCost;
import dev.headroom.gateway.config.Service;
import dev.headroom.gateway.internal.HeldResolver;
import dev.headroom.gateway.internal.PlanResolvers;
import dev.headroom.gateway.internal.config.ConfigSections;
import dev.headroom.http.headers.HeaderDialect;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * A gateway configuration as headroom-http's {@link Gate}, the one enforcement path the servlet,
 * WebFlux and Spring Cloud Gateway front ends decide through too. Each route with policies becomes
 * {@link RouteRules}: its methods and template, its policies (a policy whose {@code when.routes}
 * leaves the route out is not one of its policies; {@code when.methods} is
 * {@link RouteRules.Builder#when}; {@code count} is {@link RouteRules.Builder#counting(String,
 * RouteRules.Counting)}; {@code shadow} and {@code shadowFields} a shadow policy), its cost
 * ({@code cost.header}, {@code cost.chargeHeader}), dialects, field rules, {@code pk} and
 * {@code omitOnRedirect}. Allow lists and escalations are the gate's, by policy name; the
 * escalation blocks and capacity reductions are the {@link GatewayState}'s, so they outlive a reload.
 *
 * <p>The gateway matches routes itself (its table answers 404 and 405) and hands the gate the
 * matched route ({@link Gate#decideAsync(RouteRules, dev.headroom.enforcement.GateRequest)}) and
 * asks it for the discovery document ({@link Gate#discoveryAnswer}): the gate's document, listing
 * the limited routes under their names (a route of several methods once per method), the plans,
 * the limits in force after capacity reductions, the service's changelog and feed, and the
 * conformance level the configuration delivers ({@link #discovery}). Vend routes publish their
 * limits through {@code vend.capabilities} and are not listed.
 * Built once per configuration snapshot; immutable.
 */
public final class ConfiguredGate {
  private final Gate<Object> gate;
  private final Map<Route, RouteRules> rules;
  private final Plans plans;

  private ConfiguredGate(Gate<Object> gate, Map<Route, RouteRules> rules, Plans plans) {
    this.gate = gate;
    this.rules = rules;
    this.plans = plans;
  }

  /**
   * The gate of {@code config}.
   *
   * @param resolver the plan resolver the configuration holds, when it has plans
   * @throws IllegalArgumentException when headroom-http refuses part of it (the configuration
   *     reader has checked each part already, so this means two parts disagree)
   */
  public static ConfiguredGate of(ConfigSections config, GatewayState state, GatewayMessages vocabulary,
      Optional<HeldResolver> resolver) {
    Plans plans = config.plans().map(p -> p.plans()).orElse(null);
    GateBuilder<Object> b = Gate.builder().limiter(state.limiter).refusals(vocabulary.refusals())
        .clientAddresses(vocabulary.clients()).ticker(state.ticker).state(state.escalations, state.capacity)
        .storeFailureMode(Gate.StoreFailureMode.REFUSE).listener(new DecisionMeter(state, plans));
    Map<Route, RouteRules> rules = routes(config, b);
    if (plans != null && resolver.isPresent()) {
      Duration wait = PlanResolvers.wait(config.plans().get().resolver());
      b.plans(plans, held(resolver.get(), wait), wait);
    }
    return new ConfiguredGate(b.build(), rules, plans);
  }

  /**
   * Builds the gate of {@code config} and its discovery document once, on a store of its own that
   * decides nothing, so that the configuration reader reports at load what headroom-enforcement
   * refuses in combination (two routes with one discovery key), never at the first request.
   *
   * @throws IllegalArgumentException naming what headroom-enforcement refused
   */
  public static void check(ConfigSections config, GatewayMessages vocabulary) {
    GateBuilder<Object> b = Gate.builder().limiter(QuotaLimiter.of(InMemoryStore.builder().build()))
        .refusals(vocabulary.refusals()).clientAddresses(vocabulary.clients());
    routes(config, b);
    Optional<Plans> plans = config.plans().map(p -> p.plans());
    plans.ifPresent(p -> b.plans(p, view -> CompletableFuture.completedFuture(
        new PlanResolution.Unavailable("a configuration check resolves no plan")), Duration.ofMillis(1)));
    b.build().discovery();
  }

  /** Adds the discovery document and every route with policies to {@code b}; the rules by route. */
  private static Map<Route, RouteRules> routes(ConfigSections config, GateBuilder<Object> b) {
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
      boolean any = false;
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

  /**
   * A resolver that holds {@code resolver} while a request waits for its plan (at most
   * {@code wait}), so that a reload cannot close it meanwhile ({@link HeldResolver}).
   */
  private static PlanResolver held(HeldResolver resolver, Duration wait) {
    return view -> {
      HeldResolver h = resolver.hold();
      if (h == null) {
        return CompletableFuture.completedFuture(new PlanResolution.Unavailable("the plan resolver is closed"));
      }
      CompletableFuture<PlanResolution> own;
      try {
        CompletionStage<PlanResolution> stage = h.resolver().resolve(view);
        own = stage == null ? CompletableFuture.completedFuture(null) : stage.toCompletableFuture().copy();
      } catch (RuntimeException e) {
        own = CompletableFuture.completedFuture(new PlanResolution.Unavailable("the resolver threw " + e));
      }
      if (own.isDone()) {
        h.release();
        return own;
      }
      own.completeOnTimeout(new PlanResolution.Unavailable("no answer within " + wait.toMillis() + " ms"),
          wait.toMillis(), TimeUnit.MILLISECONDS).whenComplete((r, e) -> h.release());
      return own;
    };
  }

  /** The built gate every route decides through. */
  public Gate<Object> gate() {
    return gate;
  }

  /** The route's rules, or empty for a route without policies (forwarded undecided). */
  Optional<RouteRules> rules(Route route) {
    return Optional.ofNullable(rules.get(route));
  }

  /** The configured plans, when there are. */
  Optional<Plans> plans() {
    return Optional.ofNullable(plans);
  }
}
