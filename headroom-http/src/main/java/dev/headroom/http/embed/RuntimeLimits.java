package dev.headroom.http.embed;

import dev.headroom.QuotaPolicy;
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
 * request is decided under the new limit and the discovery document is built again. A plan's own
 * override of a policy ({@code api:pro}) is not changed by this; the policy as configured, and so
 * every plan that leaves it alone, is. Thread-safe.
 */
public final class RuntimeLimits {
  private final Map<String, QuotaPolicy> configured;
  private final ConcurrentHashMap<String, QuotaPolicy> changed = new ConcurrentHashMap<>();
  private volatile Runnable onChange = () -> {};

  RuntimeLimits(Map<String, QuotaPolicy> configured) {
    this.configured = Collections.unmodifiableMap(new LinkedHashMap<>(configured));
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

  /** {@code p} as enforced now. */
  QuotaPolicy effective(QuotaPolicy p) {
    QuotaPolicy c = changed.get(p.name());
    return c == null ? p : c;
  }
}
