package dev.headroom.enforcement;

import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.plan.Plan;
import dev.headroom.enforcement.plan.Plans;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The gate's limits, changeable at run time without a restart (the gateway reloads its file; an
 * embedding application calls this, or Spring Boot's {@code headroom} actuator endpoint does). A
 * change replaces a policy's quota and, optionally, its window: the policy keeps its name, so its
 * counters carry on (stores key counters by policy name), as a gateway reload does. The next
 * request is decided under the new limit and the discovery document is built again.
 *
 * <p>Plans: a change of a base policy reaches every plan's version of it (headroom-http
 * {@link Plans#policy}): a plan that overrides the quota keeps its ratio to the base quota
 * ({@code api} 60 with {@code api:pro} 1000: setting {@code api} to 30 enforces {@code api:pro}
 * at 500, rounded to the nearest unit, at least 1), and what the plan does not override (the
 * window, the algorithm, or the quota) is the base's new value; {@link #reset} restores both. A
 * capacity reduction of the base reaches the plans' versions in the same way
 * ({@link Gate#reduceCapacity}). Thread-safe.
 */
public final class RuntimeLimits {
  private final Map<String, QuotaPolicy> configured;
  /** The filter's plans, every change checked against; null without plans. */
  private final Plans plans;
  private final ConcurrentHashMap<String, QuotaPolicy> changed = new ConcurrentHashMap<>();
  private volatile Runnable onChange = () -> {};

  RuntimeLimits(Map<String, QuotaPolicy> configured, Plans plans) {
    this.configured = Collections.unmodifiableMap(new LinkedHashMap<>(configured));
    this.plans = plans;
  }

  void onChange(Runnable r) {
    this.onChange = r;
  }

  /** Every policy of the gate's routes, as enforced now, by name. */
  public Map<String, QuotaPolicy> current() {
    Map<String, QuotaPolicy> out = new LinkedHashMap<>();
    configured.forEach((name, p) -> out.put(name, changed.getOrDefault(name, p)));
    return Collections.unmodifiableMap(out);
  }

  /**
   * Changes a policy's quota (and window, when given) from the next request on.
   *
   * @return the policy as enforced now
   * @throws IllegalArgumentException naming the policy, the field, the value and what was expected
   */
  public QuotaPolicy set(String policy, long quota, Optional<Duration> window) {
    QuotaPolicy base = configured.get(Objects.requireNonNull(policy, "policy"));
    if (base == null) {
      throw new IllegalArgumentException("policy: '" + policy + "' is not a policy of the filter's routes; expected one of "
          + configured.keySet());
    }
    QuotaPolicy.Builder b = base.toBuilder().quota(quota);
    window.ifPresent(b::window);
    QuotaPolicy next = b.build();
    if (plans != null) {
      for (Plan plan : plans.plans()) {
        try {
          plans.policy(plan, next);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("policy '" + policy + "': plan '" + plan.name() + "': " + e.getMessage(), e);
        }
      }
    }
    changed.put(policy, next);
    onChange.run();
    return next;
  }

  /** Restores a policy as configured. */
  public QuotaPolicy reset(String policy) {
    QuotaPolicy base = configured.get(policy);
    if (base == null) {
      throw new IllegalArgumentException("policy: '" + policy + "' is not a policy of the filter's routes; expected one of "
          + configured.keySet());
    }
    changed.remove(policy);
    onChange.run();
    return base;
  }

  /**
   * Every plan's version of every policy as enforced now, by name ({@code api:pro}); empty without
   * plans.
   */
  public Map<String, QuotaPolicy> plans() {
    Map<String, QuotaPolicy> out = new LinkedHashMap<>();
    if (plans != null) {
      for (Plan plan : plans.plans()) {
        for (String base : plans.overrides(plan).keySet()) {
          QuotaPolicy b = configured.get(base);
          if (b != null) {
            QuotaPolicy p = plans.policy(plan, effective(b));
            out.put(p.name(), p);
          }
        }
      }
    }
    return Collections.unmodifiableMap(out);
  }

  /** {@code p} as enforced now. */
  QuotaPolicy effective(QuotaPolicy p) {
    QuotaPolicy c = changed.get(p.name());
    return c == null ? p : c;
  }
}
