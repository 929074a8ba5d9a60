package dev.headroom.gateway.internal;

import dev.headroom.QuotaPolicy;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Run-time capacity reductions set by an operator on the admin port. A policy reduced to a factor
 * f in (0, 1) is enforced with quota {@code max(1, floor(q * f))} under the same name and
 * algorithm, so it shares the counters of the full policy; its refusals are
 * {@code temporary-reduced-capacity} (503). Thread-safe.
 */
final class Capacity {
  private record Reduced(double factor, QuotaPolicy base, QuotaPolicy policy) {}

  private final Map<String, Reduced> reduced = new ConcurrentHashMap<>();

  /** Sets the factor for a policy; 1 restores full capacity. */
  void set(QuotaPolicy base, double factor) {
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
  QuotaPolicy effective(QuotaPolicy configured) {
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

  boolean isReduced(String policy) {
    return !reduced.isEmpty() && reduced.containsKey(policy);
  }

  Optional<Double> factor(String policy) {
    Reduced r = reduced.get(policy);
    return r == null ? Optional.empty() : Optional.of(r.factor());
  }

  Map<String, Double> factors() {
    Map<String, Double> out = new java.util.TreeMap<>();
    reduced.forEach((k, v) -> out.put(k, v.factor()));
    return out;
  }
}
