package dev.headroom.spring.cloud.gateway;

import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.VendRateLimits;
import dev.headroom.vend.VendRoute;
import dev.headroom.vend.format.Scope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;
import org.springframework.cloud.gateway.support.HasRouteId;

/**
 * {@code Headroom}: a Spring Cloud Gateway filter that gives a route Headroom's whole behaviour,
 * as the servlet filter and the WebFlux filter give an application's routes: the policies of
 * {@code headroom.cloud-gateway.policies} decided all at once per request (any algorithm, requests,
 * content bytes charged when the response completes, concurrency leases released then), the
 * RateLimit fields in the route's dialects, one refusal body that is RFC 9457 problem details and a
 * Graceful Boundaries refusal (HTML for a browser), escalation, run-time capacity, and the route
 * listed in the discovery document at {@code /.well-known/limits} and {@code /api/limits}. Store
 * calls never block an event loop.
 *
 * <pre>{@code
 * spring.cloud.gateway.server.webflux.routes:
 *   - id: items
 *     uri: http://items.internal
 *     predicates: [Path=/api/items/{id}, Method=GET]
 *     filters:
 *       - Headroom=per-key                  # shortcut: one policy
 *       - name: Headroom                    # or in full
 *         args:
 *           policies: [per-key, per-ip]     # decided all at once
 *           path: /api/items/{id}           # the template discovery publishes (and the gate matches); /** by default
 *           methods: [GET]
 *           dialects: [ietf, x-ratelimit]
 *           cost: 1                         # or cost-header: X-Cost with max-cost
 *           listed: true
 *           jitter: 5s
 *           only-near-exhaustion: 0.8
 *           cap-remaining-to-reset-ratio: 1
 *           vend: {function: per-function}   # a vend endpoint (seed 003): POSTs to path are vend calls
 * }</pre>
 *
 * <p>Or with no arguments ({@code - Headroom}), the rules of {@code headroom.cloud-gateway.routes.ID}
 * for the route's id: every rule of the settings model's route (policies, a policy's method
 * condition in {@code when}, counting per policy in {@code count}, {@code charge-header},
 * {@code pk}, {@code omit-on-redirect}, the field rules, discovery), as the gateway's YAML states them.
 *
 * <p>From the Java DSL: {@code .filters(f -> f.filter(headroom.apply("items", c -> c.setPolicies(List.of("per-key")))))},
 * with this factory as a bean ({@code HeadroomGatewayFilterFactory headroom}).
 *
 * <p>Thread-safe.
 */
public final class HeadroomGatewayFilterFactory extends AbstractGatewayFilterFactory<HeadroomGatewayFilterFactory.Config> {

  /**
   * Before {@code NettyWriteResponseFilter}, which writes the upstream's response through the
   * exchange it was given: so it is given the one whose response counts content bytes.
   */
  public static final int ORDER = NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER - 1;

  private final HeadroomRoutes routes;
  private final PolicyCatalog catalog;
  private final QuotaLimiter limiter;

  HeadroomGatewayFilterFactory(HeadroomRoutes routes, PolicyCatalog catalog, QuotaLimiter limiter) {
    super(Config.class);
    this.routes = Objects.requireNonNull(routes, "routes");
    this.catalog = Objects.requireNonNull(catalog, "catalog");
    this.limiter = Objects.requireNonNull(limiter, "limiter");
  }

  @Override
  public List<String> shortcutFieldOrder() {
    return List.of("policies");
  }

  @Override
  public GatewayFilter apply(Config config) {
    String routeId = config.getRouteId();
    if (routeId == null || routeId.isBlank()) {
      throw new CloudGatewayConfigurationException("Headroom filter route id", routeId,
          "the id of the route it limits (from the Java DSL: apply(routeId, config -> ...))");
    }
    boolean vend = config.getVend() != null && !config.getVend().isEmpty();
    boolean policies = config.getPolicies() != null && !config.getPolicies().isEmpty();
    RouteRules rules;
    if (!policies && catalog.route(routeId).isPresent()) {
      rules = catalog.route(routeId).get(); // headroom.cloud-gateway.routes.ID
    } else {
      rules = vend && !policies ? null : rules(routeId, config);
    }
    routes.register(routeId, rules, vend ? vendRoute(routeId, config) : null);
    return new OrderedGatewayFilter((exchange, chain) -> routes.filter(exchange, chain::filter), ORDER);
  }

  /** The route's arguments, read once; an error names the argument, the value and what is expected. */
  RouteRules rules(String routeId, Config c) {
    String at = "spring.cloud.gateway.server.webflux.routes[id=" + routeId + "].filters[Headroom]";
    if (c.getPolicies() == null || c.getPolicies().isEmpty()) {
      throw new CloudGatewayConfigurationException(at + ".policies", null, "one or more of headroom.cloud-gateway.policies "
          + catalog.all().keySet() + ", or the route's rules in headroom.cloud-gateway.routes." + routeId);
    }
    RouteRules.Builder b;
    try {
      b = RouteRules.builder(c.getPath() == null ? "/**" : c.getPath());
    } catch (IllegalArgumentException e) {
      throw new CloudGatewayConfigurationException(at + ".path", c.getPath(), "a path template such as /api/items/{id}", e);
    }
    b.key(routeId);
    List<QuotaPolicy> policies = new ArrayList<>();
    for (String name : c.getPolicies()) {
      policies.add(catalog.find(name.strip()).orElseThrow(() -> new CloudGatewayConfigurationException(at + ".policies",
          name, "one of headroom.cloud-gateway.policies " + catalog.all().keySet())));
    }
    b.policies(policies);
    if (c.getMethods() != null && !c.getMethods().isEmpty()) {
      step(at + ".methods", c.getMethods(), () -> b.methods(c.getMethods()));
    }
    if (c.getDialects() != null && !c.getDialects().isEmpty()) {
      b.dialects(PolicyCatalog.dialects(at + ".dialects", c.getDialects()));
    }
    if (c.getCost() != null) {
      long cost = PolicyCatalog.cost(at + ".cost", c.getCost());
      step(at + ".cost", c.getCost(), () -> b.cost(cost));
    }
    if (c.getCostHeader() != null) {
      long max = c.getMaxCost() == null ? QuotaPolicy.MAX_QUOTA : PolicyCatalog.cost(at + ".max-cost", c.getMaxCost());
      step(at + ".cost-header", c.getCostHeader(), () -> b.costHeader(c.getCostHeader(), max));
    }
    if (c.getListed() != null) {
      b.listed(c.getListed());
    }
    FieldRules fields = FieldRules.none();
    if (c.getJitter() != null) {
      Duration jitter = PolicyCatalog.window(at + ".jitter", c.getJitter());
      fields = stepped(at + ".jitter", c.getJitter(), fields, f -> f.jitter(jitter));
    }
    if (c.getOnlyNearExhaustion() != null) {
      fields = stepped(at + ".only-near-exhaustion", c.getOnlyNearExhaustion(), fields,
          f -> f.onlyNearExhaustion(c.getOnlyNearExhaustion()));
    }
    if (c.getCapRemainingToResetRatio() != null) {
      Duration min = c.getCapMinWindow() == null ? Duration.ZERO : PolicyCatalog.window(at + ".cap-min-window", c.getCapMinWindow());
      fields = stepped(at + ".cap-remaining-to-reset-ratio", c.getCapRemainingToResetRatio(), fields,
          f -> f.capRemainingToResetRatio(c.getCapRemainingToResetRatio(), min));
    }
    b.fields(fields);
    return b.build();
  }

  /**
   * The route's vend scopes (seed 003): {@code vend.SCOPE: POLICY} for the scopes global, service,
   * function and user; calls are POSTs to {@code path}.
   */
  VendRoute vendRoute(String routeId, Config c) {
    String at = "spring.cloud.gateway.server.webflux.routes[id=" + routeId + "].filters[Headroom].vend";
    if (c.getPath() == null || c.getPath().contains("*")) {
      throw new CloudGatewayConfigurationException(at.replace(".vend", ".path"), c.getPath(),
          "the path of the vend endpoint, such as /vend, for a route with vend scopes");
    }
    VendRateLimits.Builder limits = VendRateLimits.builder();
    c.getVend().forEach((scope, policy) -> {
      Scope s;
      try {
        s = Scope.fromToken(scope.strip());
      } catch (IllegalArgumentException e) {
        throw new CloudGatewayConfigurationException(at, scope, "a scope: global, service, function or user", e);
      }
      QuotaPolicy q = catalog.find(policy.strip()).orElseThrow(() -> new CloudGatewayConfigurationException(
          at + "." + scope, policy, "one of headroom.cloud-gateway.policies " + catalog.all().keySet()));
      step(at + "." + scope, policy, () -> limits.limit(s, q));
    });
    try {
      VendRoute.Builder b = VendRoute.builder(c.getPath(), VendRateLimiter.builder(limits.build()).limiter(limiter).build());
      if (c.getDialects() != null && !c.getDialects().isEmpty()) {
        b.dialects(PolicyCatalog.dialects(at.replace(".vend", ".dialects"), c.getDialects()));
      }
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new CloudGatewayConfigurationException(at, c.getVend(), e.getMessage(), e);
    }
  }

  private static void step(String argument, Object value, Runnable step) {
    try {
      step.run();
    } catch (IllegalArgumentException e) {
      throw new CloudGatewayConfigurationException(argument, value, e.getMessage(), e);
    }
  }

  private static FieldRules stepped(String argument, Object value, FieldRules f,
      UnaryOperator<FieldRules> step) {
    try {
      return step.apply(f);
    } catch (IllegalArgumentException e) {
      throw new CloudGatewayConfigurationException(argument, value, e.getMessage(), e);
    }
  }

  /** The arguments of one route's {@code Headroom} filter. */
  public static class Config implements HasRouteId {
    private String routeId;
    private List<String> policies = new ArrayList<>();
    private String path;
    private List<String> methods = new ArrayList<>();
    private List<String> dialects = new ArrayList<>();
    private Long cost;
    private String costHeader;
    private Long maxCost;
    private Boolean listed;
    private String jitter;
    private Double onlyNearExhaustion;
    private Double capRemainingToResetRatio;
    private String capMinWindow;
    private Map<String, String> vend = new LinkedHashMap<>();

    @Override
    public void setRouteId(String routeId) {
      this.routeId = routeId;
    }

    @Override
    public String getRouteId() {
      return routeId;
    }

    /** Policies of {@code headroom.cloud-gateway.policies}, decided all at once. */
    public List<String> getPolicies() {
      return policies;
    }

    public Config setPolicies(List<String> policies) {
      this.policies = policies;
      return this;
    }

    /** The path template discovery publishes and the gate matches; {@code /**} by default. */
    public String getPath() {
      return path;
    }

    public Config setPath(String path) {
      this.path = path;
      return this;
    }

    /** The methods limited (and published); every method by default. */
    public List<String> getMethods() {
      return methods;
    }

    public Config setMethods(List<String> methods) {
      this.methods = methods;
      return this;
    }

    /** The dialects of the fields; {@code headroom.cloud-gateway.headers.dialects} by default. */
    public List<String> getDialects() {
      return dialects;
    }

    public Config setDialects(List<String> dialects) {
      this.dialects = dialects;
      return this;
    }

    /** Units each request takes; 1 by default. */
    public Long getCost() {
      return cost;
    }

    public Config setCost(Long cost) {
      this.cost = cost;
      return this;
    }

    /** A request header giving each request's cost (a whole number up to max-cost; otherwise 400). */
    public String getCostHeader() {
      return costHeader;
    }

    public Config setCostHeader(String costHeader) {
      this.costHeader = costHeader;
      return this;
    }

    public Long getMaxCost() {
      return maxCost;
    }

    public Config setMaxCost(Long maxCost) {
      this.maxCost = maxCost;
      return this;
    }

    /** Whether discovery lists the route; true by default. */
    public Boolean getListed() {
      return listed;
    }

    public Config setListed(Boolean listed) {
      this.listed = listed;
      return this;
    }

    /** Up to this much added to Retry-After and t (draft-09 section 8.5), such as {@code 5s}. */
    public String getJitter() {
      return jitter;
    }

    public Config setJitter(String jitter) {
      this.jitter = jitter;
      return this;
    }

    /** Fields of allowed requests only from this utilisation on (draft-09 section 6.2), 0 to 1. */
    public Double getOnlyNearExhaustion() {
      return onlyNearExhaustion;
    }

    public Config setOnlyNearExhaustion(Double onlyNearExhaustion) {
      this.onlyNearExhaustion = onlyNearExhaustion;
      return this;
    }

    /** Caps r/t at this many times q/w (draft-09 sections 6 and 8.5), at least 1. */
    public Double getCapRemainingToResetRatio() {
      return capRemainingToResetRatio;
    }

    public Config setCapRemainingToResetRatio(Double capRemainingToResetRatio) {
      this.capRemainingToResetRatio = capRemainingToResetRatio;
      return this;
    }

    /** The shortest window the ratio cap applies to; 0 by default. */
    public String getCapMinWindow() {
      return capMinWindow;
    }

    public Config setCapMinWindow(String capMinWindow) {
      this.capMinWindow = capMinWindow;
      return this;
    }

    /**
     * Vend scopes of the route (seed 003), scope to policy: {@code function: per-function}. The
     * route's POSTs to {@code path} are then vend calls, refused 429 {@code RATE_LIMITED}.
     */
    public Map<String, String> getVend() {
      return vend;
    }

    public Config setVend(Map<String, String> vend) {
      this.vend = vend;
      return this;
    }
  }
}
