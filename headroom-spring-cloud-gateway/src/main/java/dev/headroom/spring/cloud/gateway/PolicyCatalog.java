package dev.headroom.spring.cloud.gateway;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.enforcement.settings.PolicySet;
import dev.headroom.enforcement.settings.SettingsReader;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.http.headers.HeaderDialect;
import java.net.URI;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.springframework.boot.convert.DurationStyle;

/**
 * The named policies of {@code headroom.cloud-gateway.policies} with their texts, escalations and
 * allow lists, and the header defaults, read once at startup by headroom-http's
 * {@link SettingsReader} (the converter every binding of the settings model shares); and the
 * routes of {@code headroom.cloud-gateway.routes}; and the readers of the filter arguments routes give (a window, an algorithm, a cost), whose errors name
 * the argument, the value and what is expected. Immutable.
 */
final class PolicyCatalog {

  private final PolicySet set;
  private final Set<HeaderDialect> dialects;
  private final FieldRules fields;
  private final Map<String, RouteRules> routes;

  private PolicyCatalog(PolicySet set, Set<HeaderDialect> dialects, FieldRules fields, Map<String, RouteRules> routes) {
    this.set = set;
    this.dialects = Set.copyOf(dialects);
    this.fields = fields;
    this.routes = Map.copyOf(routes);
  }

  /** Policies given in code, with no texts of their own, ietf fields and no field rules. */
  static PolicyCatalog of(Map<String, QuotaPolicy> policies) {
    PolicySet set = new PolicySet(policies, PolicyTexts.builder(new CloudGatewayProperties().getWhy()).build(),
        Map.of(), Map.of(), Map.of(), Optional.empty());
    return new PolicyCatalog(set, EnumSet.of(HeaderDialect.IETF), FieldRules.none(), Map.of());
  }

  /**
   * Reads every {@code headroom.cloud-gateway.policies.NAME}, the service's why and origin, and
   * {@code headroom.cloud-gateway.headers}.
   *
   * @throws CloudGatewayConfigurationException naming every property that cannot be used
   */
  static PolicyCatalog from(CloudGatewayProperties properties) {
    SettingsReader r = SettingsReader.properties(PREFIX);
    Optional<URI> origin = r.origin(properties.getService());
    PolicySet set = r.policies(properties.getWhy(), origin, properties.getPolicies());
    // The settings model has a policy's queue; this binding's filters do not wait (yet): said, not ignored.
    properties.getPolicies().forEach((name, p) -> {
      if (p.getQueue() != null) {
        r.problem(r.path("policies") + "." + name + ".queue", "max-wait " + p.getQueue().getMaxWait(),
            "no queue: Spring Cloud Gateway's Headroom filter and rate limiter refuse at once (the standalone "
                + "gateway's policies.NAME.queue and the Spring Boot starter's headroom.policies.NAME.queue wait)");
      }
    });
    Set<HeaderDialect> dialects = r.dialects(r.path("headers.dialects"), properties.getHeaders().getDialects());
    FieldRules fields = r.fields(r.path("headers"), properties.getHeaders());
    Map<String, RouteRules> routes = new LinkedHashMap<>();
    properties.getRoutes().forEach((id, route) -> {
      if (route.getKey() == null) {
        route.setKey(id);
      }
      r.route(r.path("routes") + "." + id, route, set.policies()).ifPresent(rules -> routes.put(id, rules));
    });
    r.throwIfProblems(CloudGatewayConfigurationException::new);
    return new PolicyCatalog(set, dialects, fields, routes);
  }

  /** The prefix of this binding's properties. */
  static final String PREFIX = "headroom.cloud-gateway";

  /** The rules of {@code routes.ID}, the route of this id, if the properties state them. */
  Optional<RouteRules> route(String routeId) {
    return Optional.ofNullable(routes.get(routeId));
  }

  /** The policies with their texts, escalations and allow lists. */
  PolicySet policies() {
    return set;
  }

  /** The dialects of a route that names none ({@code headers.dialects}). */
  Set<HeaderDialect> dialects() {
    return dialects;
  }

  /** The field rules of {@code headers}: jitter, only-near-exhaustion, the ratio cap. */
  FieldRules fields() {
    return fields;
  }

  /**
   * {@code store.on-failure}: whether a request the store cannot decide is refused.
   *
   * @throws CloudGatewayConfigurationException unless it is allow or refuse
   */
  static boolean refuseOnStoreFailure(CloudGatewayProperties properties) {
    SettingsReader r = SettingsReader.properties(PREFIX);
    Gate.StoreFailureMode mode = r.onFailure(r.path("store.onFailure"), properties.getStore().getOnFailure());
    r.throwIfProblems(CloudGatewayConfigurationException::new);
    return mode == Gate.StoreFailureMode.REFUSE;
  }

  /** The words of a library's refusal after "expected ", or all of them. */
  private static String what(IllegalArgumentException e) {
    String m = String.valueOf(e.getMessage());
    int expected = m.indexOf("expected ");
    return expected >= 0 ? m.substring(expected + "expected ".length()) : m;
  }

  /** The policy of that name, if declared. */
  Optional<QuotaPolicy> find(String name) {
    return Optional.ofNullable(set.policies().get(name));
  }

  /** Every declared policy, in declaration order. */
  Map<String, QuotaPolicy> all() {
    return set.policies();
  }

  /**
   * A window as a route writes it: {@code 60s}, {@code 1m}, {@code PT1M}, or bare seconds.
   *
   * @throws CloudGatewayConfigurationException naming the argument
   */
  static Duration window(String argument, String value) {
    try {
      return DurationStyle.detectAndParse(value.strip(), ChronoUnit.SECONDS);
    } catch (RuntimeException e) {
      throw new CloudGatewayConfigurationException(argument, value, "a duration such as 60s, 1m, 1h or PT1M", e);
    }
  }

  /** An algorithm token, naming the argument when it is none. */
  static Algorithm algorithm(String argument, String value) {
    try {
      return Algorithm.fromToken(value.strip());
    } catch (IllegalArgumentException e) {
      throw new CloudGatewayConfigurationException(argument, value, what(e), e);
    }
  }

  /**
   * Header dialects of a route's argument: tokens, each possibly a comma-separated list.
   *
   * @throws CloudGatewayConfigurationException naming the argument and the token that is none
   */
  static Set<HeaderDialect> dialects(String argument, List<String> tokens) {
    SettingsReader r = SettingsReader.properties(PREFIX);
    Set<HeaderDialect> read = r.dialects(argument, tokens);
    r.throwIfProblems(CloudGatewayConfigurationException::new);
    return read;
  }

  /** A cost in units: a whole number from 0 to {@link QuotaPolicy#MAX_QUOTA}. */
  static long cost(String argument, Long value) {
    if (value == null || value < 0 || value > QuotaPolicy.MAX_QUOTA) {
      throw new CloudGatewayConfigurationException(argument, value, "a whole number of units from 0 to "
          + QuotaPolicy.MAX_QUOTA);
    }
    return value;
  }
}
