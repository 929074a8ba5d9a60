package dev.headroom.spring.boot;

import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.RuntimeLimits;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
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
 * carry on, the next request and the discovery document see the change. The read also lists each
 * plan's version of a policy ({@code api:pro}, with its {@code plan} and {@code base}), which follows
 * a change of its base as {@link RuntimeLimits} says. A change that is not valid (an unknown
 * policy, a quota below 1) is answered 400 naming the property, the value and what was expected,
 * and changes nothing. Expose it as any actuator
 * endpoint ({@code management.endpoints.web.exposure.include=headroom}) and secure it as such: it
 * changes limits.
 */
@Endpoint(id = "headroom")
public class HeadroomEndpoint {
  private final RuntimeLimits limits;

  public HeadroomEndpoint(RuntimeLimits limits) {
    this.limits = limits;
  }

  /** Every policy as enforced now, then every plan's version of one. */
  @ReadOperation
  public Map<String, Map<String, Object>> limits() {
    Map<String, Map<String, Object>> out = new LinkedHashMap<>();
    limits.current().forEach((name, p) -> out.put(name, view(p)));
    limits.plans().forEach((name, p) -> {
      Map<String, Object> v = view(p);
      int colon = name.lastIndexOf(':'); // plan names have no colon (Plan), policy names may
      v.put("base", name.substring(0, colon));
      v.put("plan", name.substring(colon + 1));
      out.put(name, v);
    });
    return out;
  }

  /**
   * Changes a policy's quota, and its window when given.
   *
   * @throws InvalidEndpointRequestException (400) naming the property, the value and what was expected
   */
  @WriteOperation
  public Map<String, Object> set(@Selector String policy, long quota, @Nullable Duration window) {
    try {
      return view(limits.set(policy, quota, Optional.ofNullable(window)));
    } catch (IllegalArgumentException e) {
      throw invalid(policy, quota, e);
    }
  }

  /**
   * Restores a policy as configured.
   *
   * @throws InvalidEndpointRequestException (400) for a policy the filter does not have
   */
  @DeleteOperation
  public Map<String, Object> reset(@Selector String policy) {
    try {
      return view(limits.reset(policy));
    } catch (IllegalArgumentException e) {
      throw invalid(policy, policy, e);
    }
  }

  private static InvalidEndpointRequestException invalid(String policy, Object value, IllegalArgumentException e) {
    HeadroomConfigurationException c = new HeadroomConfigurationException("headroom.policies." + policy, value,
        e.getMessage(), e);
    return new InvalidEndpointRequestException(c.getMessage(), c.getMessage(), c);
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
