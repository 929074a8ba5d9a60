package dev.headroom.gateway.internal;

import dev.headroom.QuotaPolicy;
import dev.headroom.gateway.config.Policy;
import dev.headroom.enforcement.plan.Plan;
import dev.headroom.enforcement.plan.Plans;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The configured policies as each plan enforces them: for every policy a plan overrides, a
 * {@link Policy} whose quota is the plan's ({@code api:pro}, so its counters, its escalations and
 * its RateLimit-Policy item are its own), speaking with its base policy's texts; its refusals
 * point at the next plan's page ({@code upgradeUrl}, Graceful Boundaries section 3) through
 * headroom-http's {@code LimitRefusals.Builder.plans}. Policies a plan
 * leaves alone are the configured ones. Built once per configuration; immutable.
 */
final class PlanPolicies {
  private final Plans plans;
  private final Map<String, Map<String, Policy>> byPlan;
  private final List<Policy> variants;

  private PlanPolicies(Plans plans, Map<String, Map<String, Policy>> byPlan, List<Policy> variants) {
    this.plans = plans;
    this.byPlan = byPlan;
    this.variants = variants;
  }

  static PlanPolicies of(Plans plans, Map<String, Policy> policies) {
    Map<String, Map<String, Policy>> byPlan = new HashMap<>();
    List<Policy> variants = new ArrayList<>();
    for (Plan plan : plans.plans()) {
      Map<String, Policy> mine = new HashMap<>();
      for (Map.Entry<String, QuotaPolicy> o : plans.overrides(plan).entrySet()) {
        Policy base = policies.get(o.getKey());
        Policy variant = new Policy(o.getValue(), base.partition(), base.texts(), base.escalation(), base.rules());
        mine.put(base.name(), variant);
        variants.add(variant);
      }
      byPlan.put(plan.name(), Collections.unmodifiableMap(mine));
    }
    return new PlanPolicies(plans, Collections.unmodifiableMap(byPlan), List.copyOf(variants));
  }

  Plans plans() {
    return plans;
  }

  /** Every policy a plan made, for the vocabulary to know their texts and partitionings. */
  List<Policy> variants() {
    return variants;
  }

  /** {@code base} as {@code plan} enforces it. */
  Policy policy(Plan plan, Policy base) {
    Policy p = byPlan.getOrDefault(plan.name(), Map.of()).get(base.name());
    return p == null ? base : p;
  }

  /** A route's policies as {@code plan} enforces them, in the route's order. */
  List<Policy> policies(Plan plan, List<Policy> route) {
    Map<String, Policy> mine = byPlan.getOrDefault(plan.name(), Map.of());
    if (mine.isEmpty()) {
      return route;
    }
    List<Policy> out = new ArrayList<>(route.size());
    for (Policy p : route) {
      out.add(mine.getOrDefault(p.name(), p));
    }
    return out;
  }
}
