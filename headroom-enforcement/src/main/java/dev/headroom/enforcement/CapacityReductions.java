package dev.headroom.enforcement;

import dev.headroom.QuotaPolicy;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Run-time capacity reductions an operator sets (the gateway's admin {@code /capacity}, the
 * servlet filter's and the Spring Boot starter's {@code reduceCapacity}): the one implementation
 * every front end uses.
 *
 * <p>A policy reduced to a factor f in (0, 1) is enforced with quota {@code max(1, floor(q * f))}
 * under the same name and algorithm, so it shares the counters of the full policy (a partition
 * that spent 3 of 4 and is reduced to 0.5 has none left); its refusals are
 * {@code temporary-reduced-capacity} with status 503 (draft-ietf-httpapi-ratelimit-headers-09
 * section 5.2). A factor of 1 restores the policy. A factor set on a base policy reduces every
 * plan's version of it too ({@code api} at 0.5 makes {@code api:pro}'s 1000 a 500): front ends
 * pass the base's name ({@code Plans.baseName}) to {@link #effective(QuotaPolicy, String)} and
 * {@link #isReduced(String, String)}.
 *
 * <p>Thread-safe: one concurrent map of immutable entries.
 */
public final class CapacityReductions {
  private record Reduced(double factor, QuotaPolicy base, QuotaPolicy policy) {}

  private final Map<String, Reduced> reduced = new ConcurrentHashMap<>();
  /** Counts the changes, so that what is derived from the reductions (a discovery document) knows when to derive again. */
  private final AtomicLong version = new AtomicLong();
  /** Plan versions reduced by their base's factor, by name; an entry is made again when stale. */
  private final Map<String, Reduced> variants = new ConcurrentHashMap<>();

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
    } else {
      reduced.put(base.name(), new Reduced(factor, base, reduce(base, factor)));
    }
    version.incrementAndGet();
  }

  /** A number that changes whenever a factor is set or restored. */
  long version() {
    return version.get();
  }

  private static QuotaPolicy reduce(QuotaPolicy p, double factor) {
    return p.toBuilder().quota(Math.max(1, (long) Math.floor(p.quota() * factor))).build();
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

  /**
   * {@code policy}, a plan's version of the base policy named {@code base} (or the base itself),
   * as enforced: reduced by its own factor if it has one, else by the base's.
   */
  public QuotaPolicy effective(QuotaPolicy policy, String base) {
    if (reduced.isEmpty() || base.equals(policy.name()) || reduced.containsKey(policy.name())) {
      return effective(policy);
    }
    Reduced r = reduced.get(base);
    if (r == null) {
      return policy;
    }
    Reduced v = variants.get(policy.name());
    if (v == null || v.factor() != r.factor() || !v.base().equals(policy)) {
      v = new Reduced(r.factor(), policy, reduce(policy, r.factor()));
      variants.put(policy.name(), v);
    }
    return v.policy();
  }

  /** Whether {@code policy}, a version of the base policy named {@code base}, runs reduced. */
  public boolean isReduced(String policy, String base) {
    return !reduced.isEmpty() && (reduced.containsKey(policy) || reduced.containsKey(base));
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
