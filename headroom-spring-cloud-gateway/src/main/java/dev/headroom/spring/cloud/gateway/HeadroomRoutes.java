package dev.headroom.spring.cloud.gateway;

import dev.headroom.enforcement.Escalation;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateBuilder;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.enforcement.partition.AllowList;
import dev.headroom.vend.VendRoute;
import dev.headroom.webflux.HeadroomWebFilter;
import dev.headroom.webflux.ReactiveUserResolver;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * The Headroom routes of a Spring Cloud Gateway application and the one {@link Gate} (headroom-http,
 * the enforcement the servlet and WebFlux filters share) that enforces them. Each route's
 * {@code Headroom} filter registers its rules here, conditioned on that route's id; the gate is
 * rebuilt when the set changes (routes load or refresh), keeping run-time capacity reductions.
 * What the gate decides is written by headroom-webflux's {@link HeadroomWebFilter}: never blocking
 * (the store's asynchronous calls; a decision completed on the store's I/O thread continues on
 * Reactor's parallel scheduler), fields for the upstream's status at commit, content bytes charged
 * and leases released when the response completes.
 *
 * <p>Thread-safe.
 */
public final class HeadroomRoutes {

  private final Consumer<GateBuilder<ServerWebExchange>> settings;
  private final Map<String, Escalation> escalations;
  private final Map<String, AllowList> allowLists;
  private final ReactiveUserResolver users;
  private final Map<String, RouteRules> rules = new LinkedHashMap<>();
  private final Map<String, VendRoute> vendRoutes = new LinkedHashMap<>();
  private final Map<String, Double> reductions = new LinkedHashMap<>();
  private volatile HeadroomWebFilter current;

  /**
   * @param settings everything but the routes: limiter, refusals, ticker, discovery, field rules
   * @param escalations by policy name, applied to the routes that have the policy
   * @param allowLists by policy name, applied to the routes that have the policy
   * @param users who the user of {@code user} partitions is
   */
  HeadroomRoutes(Consumer<GateBuilder<ServerWebExchange>> settings, Map<String, Escalation> escalations,
      Map<String, AllowList> allowLists, ReactiveUserResolver users) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.escalations = Map.copyOf(escalations);
    this.allowLists = Map.copyOf(allowLists);
    this.users = Objects.requireNonNull(users, "users");
    this.current = build();
  }

  /** Registers (or replaces) a route's rules and vend route, either may be null; the gate is rebuilt. */
  synchronized void register(String routeId, RouteRules route, VendRoute vend) {
    if (route == null) {
      rules.remove(routeId);
    } else {
      rules.put(routeId, route);
    }
    if (vend == null) {
      vendRoutes.remove(routeId);
    } else {
      vendRoutes.put(routeId, vend);
    }
    current = build();
  }

  /** The gate in force now: its limits, reduced capacity and discovery document. */
  public Gate<ServerWebExchange> gate() {
    return current.gate();
  }

  /**
   * Lowers (or, with 1, restores) a policy's capacity at run time: the policy runs at
   * {@code max(1, floor(q * factor))} on the same counters and refuses 503
   * {@code temporary-reduced-capacity} (draft-09 section 5.2).
   *
   * @throws IllegalArgumentException naming the policy or factor when either cannot be used
   */
  public synchronized void reduceCapacity(String policy, double factor) {
    current.gate().reduceCapacity(policy, factor);
    if (factor >= 1) {
      reductions.remove(policy);
    } else {
      reductions.put(policy, factor);
    }
  }

  /** Enforces the current gate on one exchange; {@code chain} is the rest of the exchange. */
  Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    return current.filter(exchange, chain);
  }

  private HeadroomWebFilter build() {
    GateBuilder<ServerWebExchange> b = Gate.builder();
    settings.accept(b);
    rules.forEach((id, r) -> b.route(r, exchange -> id.equals(routeId(exchange))));
    escalations.forEach((policy, e) -> {
      if (onSomeRoute(policy)) {
        b.escalation(policy, e);
      }
    });
    allowLists.forEach((policy, a) -> {
      if (onSomeRoute(policy)) {
        b.allow(policy, a);
      }
    });
    Gate<ServerWebExchange> gate = b.build();
    reductions.forEach(gate::reduceCapacity);
    HeadroomWebFilter.Builder filter = HeadroomWebFilter.builder(gate).users(users);
    vendRoutes.values().forEach(filter::vendRoute);
    return filter.build();
  }

  private boolean onSomeRoute(String policy) {
    return rules.values().stream().anyMatch(r -> r.policies().stream().anyMatch(q -> q.name().equals(policy)));
  }

  private static String routeId(ServerWebExchange exchange) {
    Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
    return route == null ? null : route.getId();
  }
}
