package dev.headroom.spring.cloud.gateway;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import java.time.Duration;
import dev.headroom.http.headers.HeaderDialect;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.springframework.boot.convert.DurationStyle;

/**
 * The named policies of {@code headroom.cloud-gateway.policies}, each read once into a
 * {@link QuotaPolicy} at startup, and the readers of the filter arguments routes give (a window,
 * an algorithm, a cost), whose errors name the argument, the value and what is expected.
 * Immutable.
 */
final class PolicyCatalog {

  private final Map<String, QuotaPolicy> policies;

  private PolicyCatalog(Map<String, QuotaPolicy> policies) {
    this.policies = Collections.unmodifiableMap(new LinkedHashMap<>(policies));
  }

  static PolicyCatalog of(Map<String, QuotaPolicy> policies) {
    return new PolicyCatalog(policies);
  }

  /**
   * Reads every {@code headroom.cloud-gateway.policies.NAME}.
   *
   * @throws CloudGatewayConfigurationException naming the first property that cannot be used
   */
  static PolicyCatalog from(CloudGatewayProperties properties) {
    Map<String, QuotaPolicy> read = new LinkedHashMap<>();
    properties.getPolicies().forEach((name, p) -> read.put(name, policy(name, p)));
    return new PolicyCatalog(read);
  }

  private static QuotaPolicy policy(String name, CloudGatewayProperties.Policy p) {
    String at = "headroom.cloud-gateway.policies." + name;
    if (p.getQuota() == null) {
      throw new CloudGatewayConfigurationException(at + ".quota", null, "a whole number of units from 0 to "
          + QuotaPolicy.MAX_QUOTA);
    }
    QuotaPolicy.Builder b = QuotaPolicy.builder(name);
    apply(at + ".quota", p.getQuota(), () -> b.quota(p.getQuota()));
    apply(at + ".window", p.getWindow(), () -> b.window(p.getWindow()));
    apply(at + ".algorithm", p.getAlgorithm(), () -> b.algorithm(Algorithm.fromToken(p.getAlgorithm())));
    apply(at + ".unit", p.getUnit(), () -> b.unit(QuotaUnit.fromToken(p.getUnit())));
    apply(at + ".partitioning", p.getPartitioning(), () -> b.partitioning(p.getPartitioning()));
    apply(at + ".lease-timeout", p.getLeaseTimeout(), () -> b.leaseTimeout(p.getLeaseTimeout()));
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new CloudGatewayConfigurationException(at, name, "a consistent policy (" + e.getMessage() + ")", e);
    }
  }

  /** Runs one builder step, turning its refusal into one that names the property. */
  private static void apply(String property, Object value, Runnable step) {
    try {
      step.run();
    } catch (IllegalArgumentException e) {
      throw new CloudGatewayConfigurationException(property, value, what(e), e);
    }
  }

  private static String what(IllegalArgumentException e) {
    String m = String.valueOf(e.getMessage());
    int expected = m.indexOf("expected ");
    return expected >= 0 ? m.substring(expected + "expected ".length()) : m;
  }

  /** The policy of that name, if declared. */
  Optional<QuotaPolicy> find(String name) {
    return Optional.ofNullable(policies.get(name));
  }

  /** Every declared policy, in declaration order. */
  Map<String, QuotaPolicy> all() {
    return policies;
  }

  /**
   * A window as a route writes it: {@code 60s}, {@code 1m}, {@code PT1M}, or bare seconds.
   *
   * @throws CloudGatewayConfigurationException naming the argument
   */
  static Duration window(String argument, String value) {
    try {
      return DurationStyle.detectAndParse(value.strip(), java.time.temporal.ChronoUnit.SECONDS);
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
   * Header dialects as configured: tokens, each possibly a comma-separated list.
   *
   * @throws CloudGatewayConfigurationException naming the argument and the token that is none
   */
  static Set<HeaderDialect> dialects(String argument, List<String> tokens) {
    Set<HeaderDialect> read = EnumSet.noneOf(HeaderDialect.class);
    for (String t : tokens) {
      for (String one : t.split(",")) {
        try {
          read.add(HeaderDialect.fromToken(one));
        } catch (IllegalArgumentException e) {
          throw new CloudGatewayConfigurationException(argument, one.strip(), "one of ietf, draft-07, draft-06, "
              + "draft-03, x-ratelimit", e);
        }
      }
    }
    if (read.isEmpty()) {
      throw new CloudGatewayConfigurationException(argument, "", "at least one dialect");
    }
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
