package dev.headroom.http.enforcement;

import dev.headroom.QuotaPolicy;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Run-time capacity reductions an operator sets (the gateway's admin {@code /capacity}, the
 * servlet filter's and the Spring Boot starter's {@code reduceCapacity}): the one implementation
 * every front end uses.
 *
 * <p>A policy reduced to a factor f in (0, 1) is enforced with quota {@code max(1, floor(q * f))}
 * under the same name and algorithm, so it shares the counters of the full policy (a partition
 * that spent 3 of 4 and is reduced to 0.5 has none left); its refusals are
 * {@code temporary-reduced-capacity} with status 503 (draft-ietf-httpapi-ratelimit-headers-09
 * section 5.2). A factor of 1 restores the policy.
 *
 * <p>Thread-safe: one concurrent map of immutable entries.
 */
public final class CapacityReductions {
  private record Reduced(double factor, QuotaPolicy base, QuotaPolicy policy) {}

  private final Map<String, Reduced> reduced = new ConcurrentHashMap<>();

  /**
   * Sets the factor for a policy; 1 restores full capacity.
   *
   * @throws IllegalArgumentException unless {@code 0 < factor <= 1}
   */
  public void set(QuotaPolicy base, double factor) {
    if (!(factor > 0 && factor <= 1)) {
      throw new IllegalArgumentException("factor: " + factor + " is not valid; expected a number in (0, 1]");
    }
    if (factor == 1) {
      reduced.remove(base.name());
      return;
    }
    long q = Math.max(1, (long) Math.floor(base.quota() * factor));
    reduced.put(base.name(), new Reduced(factor, base, base.toBuilder().quota(q).build()));
  }

  /** The policy to enforce: the reduced one if the operator reduced it, else the configured one. */
  public QuotaPolicy effective(QuotaPolicy configured) {
    Reduced r = reduced.isEmpty() ? null : reduced.get(configured.name());
    if (r == null) {
      return configured;
    }
    if (!r.base().equals(configured)) {
      // The configuration was reloaded with another policy of that name: reapply the factor.
      set(configured, r.factor());
      return reduced.get(configured.name()).policy();
    }
    return r.policy();
  }

  /** Whether the policy of this name runs reduced. */
  public boolean isReduced(String policy) {
    return !reduced.isEmpty() && reduced.containsKey(policy);
  }

  /** The factor of a reduced policy. */
  public Optional<Double> factor(String policy) {
    Reduced r = reduced.get(policy);
    return r == null ? Optional.empty() : Optional.of(r.factor());
  }

  /** Every reduced policy's factor, by name. */
  public Map<String, Double> factors() {
    Map<String, Double> out = new TreeMap<>();
    reduced.forEach((k, v) -> out.put(k, v.factor()));
    return out;
  }
}
