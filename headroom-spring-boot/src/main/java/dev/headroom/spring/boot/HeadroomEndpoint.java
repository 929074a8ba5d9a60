package dev.headroom.spring.boot;

import dev.headroom.QuotaPolicy;
import dev.headroom.http.embed.RuntimeLimits;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.lang.Nullable;

/**
 * The {@code headroom} actuator endpoint: the limits in force ({@code GET /actuator/headroom}),
 * one policy changed at run time ({@code POST /actuator/headroom/{policy}} with {@code quota} and
 * optionally {@code window}, such as {@code 60s}) or restored as configured
 * ({@code DELETE /actuator/headroom/{policy}}), through the filter's {@link RuntimeLimits}: counters
 * carry on, the next request and the discovery document see the change. Expose it as any actuator
 * endpoint ({@code management.endpoints.web.exposure.include=headroom}) and secure it as such: it
 * changes limits.
 */
@Endpoint(id = "headroom")
public class HeadroomEndpoint {
  private final RuntimeLimits limits;

  public HeadroomEndpoint(RuntimeLimits limits) {
    this.limits = limits;
  }

  /** Every policy as enforced now. */
  @ReadOperation
  public Map<String, Map<String, Object>> limits() {
    Map<String, Map<String, Object>> out = new LinkedHashMap<>();
    limits.current().forEach((name, p) -> out.put(name, view(p)));
    return out;
  }

  /**
   * Changes a policy's quota, and its window when given.
   *
   * @throws HeadroomConfigurationException naming the policy, the value and what was expected
   */
  @WriteOperation
  public Map<String, Object> set(@Selector String policy, long quota, @Nullable Duration window) {
    try {
      return view(limits.set(policy, quota, Optional.ofNullable(window)));
    } catch (IllegalArgumentException e) {
      throw new HeadroomConfigurationException("headroom.policies." + policy, quota, e.getMessage(), e);
    }
  }

  /** Restores a policy as configured. */
  @DeleteOperation
  public Map<String, Object> reset(@Selector String policy) {
    try {
      return view(limits.reset(policy));
    } catch (IllegalArgumentException e) {
      throw new HeadroomConfigurationException("headroom.policies." + policy, policy, e.getMessage(), e);
    }
  }

  private static Map<String, Object> view(QuotaPolicy p) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("quota", p.quota());
    m.put("windowSeconds", p.windowSeconds());
    m.put("unit", p.unit().token());
    m.put("algorithm", p.algorithm().token());
    return m;
  }
}
