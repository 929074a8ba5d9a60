package dev.headroom.spring.boot;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.plan.Plan;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.enforcement.plan.PolicyOverride;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * {@code headroom.plans.*} validated into headroom-http's {@link Plans}; every error names the
 * property, the value and what was expected.
 */
final class HeadroomPlanSettings {
  private HeadroomPlanSettings() {}

  /** The plans, or empty when {@code headroom.plans.catalog} is empty. */
  static Optional<Plans> plans(HeadroomPlanProperties props, Map<String, QuotaPolicy> policies) {
    if (props.getCatalog().isEmpty()) {
      return Optional.empty();
    }
    if (props.getFallback() == null) {
      throw new HeadroomConfigurationException("headroom.plans.fallback", null, "one of " + props.getCatalog().keySet());
    }
    if (props.getDeadline() == null || props.getDeadline().isNegative() || props.getDeadline().isZero()) {
      throw new HeadroomConfigurationException("headroom.plans.deadline", props.getDeadline(), "a duration such as 200ms");
    }
    List<Plan> plans = new ArrayList<>();
    for (Map.Entry<String, HeadroomPlanProperties.Plan> e : props.getCatalog().entrySet()) {
      String at = "headroom.plans.catalog." + e.getKey();
      Map<String, PolicyOverride> overrides = new LinkedHashMap<>();
      for (Map.Entry<String, HeadroomPlanProperties.Override> o : e.getValue().getPolicies().entrySet()) {
        String oat = at + ".policies." + o.getKey();
        if (!policies.containsKey(o.getKey())) {
          throw new HeadroomConfigurationException(oat, o.getKey(), "one of the policies " + policies.keySet());
        }
        HeadroomPlanProperties.Override v = o.getValue();
        Optional<Algorithm> algorithm = Optional.empty();
        if (v.getAlgorithm() != null) {
          try {
            algorithm = Optional.of(Algorithm.fromToken(v.getAlgorithm()));
          } catch (IllegalArgumentException ex) {
            throw new HeadroomConfigurationException(oat + ".algorithm", v.getAlgorithm(),
                "fixed-window, sliding-window, token-bucket or concurrency", ex);
          }
        }
        overrides.put(o.getKey(), new PolicyOverride(v.getQuota() == null ? OptionalLong.empty() : OptionalLong.of(v.getQuota()),
            Optional.ofNullable(v.getWindow()), algorithm));
      }
      try {
        plans.add(new Plan(e.getKey(), overrides, Optional.ofNullable(e.getValue().getUrl())));
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException(at, e.getKey(), "a plan name of letters, digits, - and _", ex);
      }
    }
    try {
      return Optional.of(Plans.of(plans, props.getFallback(), policies.values()));
    } catch (IllegalArgumentException ex) {
      String m = ex.getMessage();
      String property = m.startsWith("fallback:") ? "headroom.plans.fallback" : "headroom.plans.catalog";
      throw new HeadroomConfigurationException(property, m, "plans whose policies are valid", ex);
    }
  }
}
