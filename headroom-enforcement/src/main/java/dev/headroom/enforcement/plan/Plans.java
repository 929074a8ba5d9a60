package dev.headroom.enforcement.plan;

import dev.headroom.QuotaPolicy;
import dev.headroom.http.body.LimitRefusals;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The plans of a service, in order from the smallest to the largest, and the fallback plan of every
 * caller whose plan cannot be found. Built once against the service's policies, so that every plan's
 * policies are made (and checked) before the first request:
 *
 * <ul>
 *   <li>a plan's policy is the base policy with the plan's overrides, named {@code base:plan}
 *       ({@code api:pro}): stores key counters by policy name, so the counters of two plans never
 *       collide, and {@code RateLimit-Policy} names the plan the caller is on;
 *   <li>a policy a plan does not override is the base policy itself, counters shared;
 *   <li>a base policy changed at run time (the servlet filter's {@code RuntimeLimits}, the
 *       starter's {@code headroom} endpoint) reaches every plan's override of it
 *       ({@link #policy(Plan, QuotaPolicy)}): an overridden quota keeps its ratio to the base quota
 *       ({@code api} 60 and {@code api:pro} 1000; {@code api} set to 30 makes {@code api:pro} 500,
 *       rounded to the nearest unit, at least 1), and what the plan does not override (window,
 *       algorithm, or the quota itself) is the base's new value. A capacity reduction of a base
 *       policy applies to its plans' policies too: front ends look its factor up under
 *       {@link #baseName(String)};
 *   <li>the {@code upgradeUrl} of a refusal under a plan is the {@link Plan#url()} of the next plan
 *       in order (Graceful Boundaries section 3, constructive guidance); the last plan has none of
 *       its own, and its refusals keep the policy's configured guidance.
 * </ul>
 *
 * <p>{@link #select} turns a {@link PlanResolution} into the plan enforced: never an unlimited
 * caller, whatever the resolver says. Thread-safe; immutable but for a bounded cache of the plan
 * policies derived from run-time changes.
 */
public final class Plans {
  private final List<Plan> plans;
  private final Plan fallback;
  private final Map<String, Plan> byName;
  /** Per plan name, the effective policy by base policy name (only those the plan overrides). */
  private final Map<String, Map<String, QuotaPolicy>> effective;
  /** The base policies as configured, by name. */
  private final Map<String, QuotaPolicy> bases;
  /** The base policy's name of every plan's policy ({@code api:pro} to {@code api}). */
  private final Map<String, String> baseNames;
  /** Plan policies derived from a base policy changed at run time, by plan and current base. */
  private final Map<PlanBase, QuotaPolicy> changed = new ConcurrentHashMap<>();

  /** The most derived plan policies kept; beyond it the cache starts again (run-time changes are rare). */
  private static final int MAX_CHANGED = 1024;

  private record PlanBase(String plan, QuotaPolicy base) {}

  private Plans(List<Plan> plans, Plan fallback, Map<String, Plan> byName, Map<String, Map<String, QuotaPolicy>> effective,
      Map<String, QuotaPolicy> bases) {
    this.plans = plans;
    this.fallback = fallback;
    this.byName = byName;
    this.effective = effective;
    this.bases = bases;
    Map<String, String> names = new HashMap<>();
    effective.values().forEach(m -> m.forEach((base, p) -> names.put(p.name(), base)));
    this.baseNames = Map.copyOf(names);
  }

  /**
   * The plans, checked against the service's policies.
   *
   * @param plans in order, smallest first (the order of upgrades)
   * @param fallback the name of the plan of callers whose plan cannot be found
   * @param policies the service's policies, which the overrides name
   * @throws IllegalArgumentException naming the plan, the field, the value and what was expected
   */
  public static Plans of(List<Plan> plans, String fallback, Collection<QuotaPolicy> policies) {
    if (plans.isEmpty()) {
      throw new IllegalArgumentException("plans: expected at least one plan, got none");
    }
    Map<String, QuotaPolicy> bases = new LinkedHashMap<>();
    for (QuotaPolicy p : policies) {
      bases.put(p.name(), p);
    }
    Map<String, Plan> byName = new LinkedHashMap<>();
    Map<String, Map<String, QuotaPolicy>> effective = new LinkedHashMap<>();
    for (Plan plan : plans) {
      if (byName.putIfAbsent(plan.name(), plan) != null) {
        throw new IllegalArgumentException("plan '" + plan.name() + "': declared twice; expected unique plan names");
      }
      Map<String, QuotaPolicy> mine = new LinkedHashMap<>();
      for (Map.Entry<String, PolicyOverride> o : plan.policies().entrySet()) {
        QuotaPolicy base = bases.get(o.getKey());
        if (base == null) {
          throw new IllegalArgumentException("plan '" + plan.name() + "': policy '" + o.getKey()
              + "' is not a policy of the service; expected one of " + bases.keySet());
        }
        try {
          mine.put(base.name(), o.getValue().apply(base, plan.name()));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("plan '" + plan.name() + "': policy '" + o.getKey() + "': "
              + e.getMessage(), e);
        }
      }
      effective.put(plan.name(), Collections.unmodifiableMap(mine));
    }
    Plan fb = byName.get(fallback);
    if (fb == null) {
      throw new IllegalArgumentException("fallback: plan '" + fallback + "' is not declared; expected one of "
          + byName.keySet());
    }
    return new Plans(List.copyOf(plans), fb, Collections.unmodifiableMap(byName), Collections.unmodifiableMap(effective),
        Collections.unmodifiableMap(bases));
  }

  /** Every plan, smallest first. */
  public List<Plan> plans() {
    return plans;
  }

  /** The plan of callers whose plan cannot be found. */
  public Plan fallback() {
    return fallback;
  }

  /** The plan of that name. */
  public Optional<Plan> plan(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  /** The plan after {@code plan} in order, the one a refusal suggests upgrading to. */
  public Optional<Plan> next(Plan plan) {
    int i = plans.indexOf(plan);
    return i < 0 || i + 1 >= plans.size() ? Optional.empty() : Optional.of(plans.get(i + 1));
  }

  /** The upgrade URL of a refusal under {@code plan}: the next plan's page, when it has one. */
  public Optional<String> upgradeUrl(Plan plan) {
    return next(plan).flatMap(Plan::url);
  }

  /**
   * The policy {@code base} as {@code plan} enforces it: its override, or {@code base} itself.
   * When {@code base} is not the policy as configured (changed at run time), the override follows
   * it as the class comment says: an overridden quota scaled by the base's change, the rest the
   * base's.
   */
  public QuotaPolicy policy(Plan plan, QuotaPolicy base) {
    Map<String, QuotaPolicy> mine = effective.get(plan.name());
    QuotaPolicy p = mine == null ? null : mine.get(base.name());
    if (p == null) {
      return base;
    }
    QuotaPolicy configured = bases.get(base.name());
    if (configured == base || configured.equals(base)) {
      return p;
    }
    PlanBase k = new PlanBase(plan.name(), base);
    QuotaPolicy known = changed.get(k);
    if (known != null) {
      return known;
    }
    if (changed.size() >= MAX_CHANGED) {
      changed.clear();
    }
    PolicyOverride o = plan.policies().get(base.name());
    QuotaPolicy.Builder b = base.toBuilder().name(p.name());
    if (o.quota().isPresent()) {
      b.quota(Math.max(1, Math.round((double) o.quota().getAsLong() * base.quota() / configured.quota())));
    }
    o.window().ifPresent(b::window);
    o.algorithm().ifPresent(b::algorithm);
    QuotaPolicy next = b.build();
    changed.put(k, next);
    return next;
  }

  /**
   * The name of the base policy {@code policy} is a plan's version of ({@code api} for
   * {@code api:pro}); {@code policy} itself when it is a base policy (or unknown).
   */
  public String baseName(String policy) {
    return baseNames.getOrDefault(policy, policy);
  }

  /**
   * Lets the refusals of every plan's policy ({@code api:pro}) speak with the texts of its base
   * policy ({@code api}) and point at the next plan's page as {@code upgradeUrl} (Graceful
   * Boundaries section 3), unless texts of its own were given.
   */
  public LimitRefusals.Builder speakAsBases(LimitRefusals.Builder refusals) {
    for (Plan plan : plans) {
      String upgrade = upgradeUrl(plan).orElse(null);
      overrides(plan).forEach((base, policy) -> refusals.textsOf(policy.name(), base, upgrade));
    }
    return refusals;
  }

  /** The policies {@code plan} overrides, by base policy name, each as it enforces it. */
  public Map<String, QuotaPolicy> overrides(Plan plan) {
    return effective.getOrDefault(plan.name(), Map.of());
  }

  /**
   * The plan a resolution leads to, or the refusal it asks for. Named and known: that plan;
   * named but unknown, anonymous or unavailable: the fallback plan (with a note saying why, for the
   * host's log); rejected: the refusal.
   */
  public Selection select(PlanResolution resolution) {
    if (resolution instanceof PlanResolution.Named n) {
      Plan p = byName.get(n.plan());
      return p != null ? new Selection(p, Optional.empty(), Optional.empty())
          : new Selection(fallback, Optional.empty(), Optional.of("plan '" + printable(n.plan())
              + "' is not declared; the fallback plan '" + fallback.name() + "' applies"));
    }
    if (resolution instanceof PlanResolution.Unavailable u) {
      return new Selection(fallback, Optional.empty(), Optional.of("plan resolver unavailable ("
          + u.reason() + "); the fallback plan '" + fallback.name() + "' applies"));
    }
    if (resolution instanceof PlanResolution.Rejected r) {
      return new Selection(fallback, Optional.of(r), Optional.empty());
    }
    return new Selection(fallback, Optional.empty(), Optional.empty());
  }

  /**
   * The plan a request is enforced under, or its refusal.
   *
   * @param plan the plan (the fallback when refused, never used then)
   * @param rejected present when the request is refused with 401
   * @param warning present when the fallback applies because something went wrong
   */
  public record Selection(Plan plan, Optional<PlanResolution.Rejected> rejected, Optional<String> warning) {}

  private static String printable(String s) {
    String cut = s.length() > 64 ? s.substring(0, 64) + "..." : s;
    return cut.replaceAll("[^\\x20-\\x7e]", "?");
  }
}
