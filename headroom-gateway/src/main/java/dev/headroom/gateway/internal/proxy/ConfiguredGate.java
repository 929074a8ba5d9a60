package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateBuilder;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.gateway.config.Route;
import dev.headroom.gateway.internal.HeldResolver;
import dev.headroom.gateway.internal.PlanResolvers;
import dev.headroom.gateway.internal.config.ConfigSections;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * A gateway configuration as headroom-http's {@link Gate}, the one enforcement path the servlet,
 * WebFlux and Spring Cloud Gateway front ends decide through too. Each route with policies becomes
 * {@link RouteRules} ({@link GateRoutes}): its methods and template, its policies (a policy whose {@code when.routes}
 * leaves the route out is not one of its policies; {@code when.methods} is
 * {@link RouteRules.Builder#when}; {@code count} is {@link RouteRules.Builder#counting(String,
 * RouteRules.Counting)}; {@code shadow} and {@code shadowFields} a shadow policy), its cost
 * ({@code cost.header}, {@code cost.chargeHeader}), dialects, field rules, {@code pk} and
 * {@code omitOnRedirect}. Allow lists and escalations are the gate's, by policy name; the
 * escalation blocks and capacity reductions are the {@link GatewayState}'s, so they outlive a reload;
 * so does what an adaptive route learnt, when its name and adaptive settings are unchanged
 * ({@link GateBuilder#adaptiveFrom}: the gate of the snapshot in force hands it over).
 *
 * <p>The gateway matches routes itself (its table answers 404 and 405) and hands the gate the
 * matched route ({@link Gate#decideAsync(RouteRules, dev.headroom.enforcement.GateRequest)}) and
 * asks it for the discovery document ({@link Gate#discoveryAnswer}): the gate's document, listing
 * the limited routes under their names (a route of several methods once per method), the plans,
 * the limits in force after capacity reductions, the service's changelog and feed, and the
 * conformance level the configuration delivers. Vend routes publish their
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
        .storeFailureMode(Gate.StoreFailureMode.REFUSE).listener(new DecisionMeter(state))
        .meterRegistry(state.metrics.registry()).waitTimer(new QueueTimer(state.timers, state.waitLoop));
    Snapshot previous = state.snapshot();
    if (previous != null) {
      b.adaptiveFrom(previous.gate()); // a reload: unchanged adaptive routes keep what they learnt
    }
    Map<Route, RouteRules> rules = GateRoutes.add(config, b);
    if (plans != null && resolver.isPresent()) {
      Duration wait = PlanResolvers.wait(config.plans().get().resolver());
      b.plans(plans, held(resolver.get(), wait), wait);
    }
    return new ConfiguredGate(b.build(), rules, plans);
  }

  /** Adds the discovery document and every route with policies to {@code b}; the rules by route. */

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
