package dev.headroom.spring.boot;

import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.AdaptiveState;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.RuntimeLimits;
import dev.headroom.enforcement.Waiting;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
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
 * a change of its base as {@link RuntimeLimits} says, and what the filter's gate holds now: a
 * policy with a queue has a {@code queue} member ({@code maxWaitMillis}, {@code maxQueued}, and the
 * requests {@code waiting}), and each route's adaptive limit is listed under the name it is
 * advertised by ({@code adaptive}, unit {@code concurrent-requests}) with a {@code routes} member:
 * per route, the {@code limit} learnt, the requests {@code inflight} and, with shares, each plan's
 * {@code fraction}, {@code guaranteed} places and {@code inflight}. A change that is not valid (an unknown
 * policy, a quota below 1) is answered 400 naming the property, the value and what was expected,
 * and changes nothing. Expose it as any actuator
 * endpoint ({@code management.endpoints.web.exposure.include=headroom}) and secure it as such: it
 * changes limits.
 */
@Endpoint(id = "headroom")
public class HeadroomEndpoint {
  private final RuntimeLimits limits;
  /** The gate whose queues and adaptive limits are shown; null when only the limits are. */
  private final Gate<?> gate;

  /** The endpoint of {@code limits} alone: no queue nor adaptive limit is shown. */
  public HeadroomEndpoint(RuntimeLimits limits) {
    this.limits = limits;
    this.gate = null;
  }

  /** The endpoint of a filter's gate: its limits, its queues and its routes' adaptive limits. */
  public HeadroomEndpoint(Gate<?> gate) {
    this.limits = gate.limits();
    this.gate = gate;
  }

  /**
   * Every policy as enforced now (with its queue, if any), then every plan's version of one, then
   * the routes' adaptive limits.
   */
  @ReadOperation
  public Map<String, Map<String, Object>> limits() {
    Map<String, Map<String, Object>> out = new LinkedHashMap<>();
    Map<String, Waiting> queues = gate == null ? Map.of() : gate.queues();
    Map<String, Integer> waiting = gate == null ? Map.of() : gate.waiting();
    limits.current().forEach((name, p) -> {
      Map<String, Object> v = view(p);
      Waiting w = queues.get(name);
      if (w != null) {
        Map<String, Object> q = new LinkedHashMap<>();
        q.put("maxWaitMillis", w.maxWait().toMillis());
        q.put("maxQueued", w.maxQueued());
        q.put("waiting", waiting.getOrDefault(name, 0));
        v.put("queue", q);
      }
      out.put(name, v);
    });
    limits.plans().forEach((name, p) -> {
      Map<String, Object> v = view(p);
      int colon = name.lastIndexOf(':'); // plan names have no colon (Plan), policy names may
      v.put("base", name.substring(0, colon));
      v.put("plan", name.substring(colon + 1));
      out.put(name, v);
    });
    for (AdaptiveState a : gate == null ? List.<AdaptiveState>of() : gate.adaptiveStates()) {
      // routes may share the advertised name (each has its own limit), and another route may have a
      // policy of that name: one entry per name, with a member per route
      Map<String, Object> v = out.computeIfAbsent(a.policy(), n -> {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("unit", "concurrent-requests");
        m.put("windowSeconds", 1L);
        return m;
      });
      @SuppressWarnings("unchecked")
      Map<String, Object> routes = (Map<String, Object>) v.computeIfAbsent("routes", k -> new LinkedHashMap<>());
      routes.put(a.route(), adaptive(a));
    }
    return out;
  }

  private static Map<String, Object> adaptive(AdaptiveState a) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("limit", a.limit());
    m.put("inflight", a.inflight());
    if (!a.shares().isEmpty()) {
      Map<String, Object> shares = new TreeMap<>();
      a.shares().forEach((plan, s) -> {
        Map<String, Object> share = new LinkedHashMap<>();
        share.put("fraction", s.fraction());
        share.put("guaranteed", s.guaranteed());
        share.put("inflight", s.inflight());
        shares.put(plan, share);
      });
      m.put("shares", shares);
    }
    return m;
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
