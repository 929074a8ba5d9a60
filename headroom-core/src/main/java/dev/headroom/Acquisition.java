package dev.headroom;

import java.util.Objects;

/**
 * One policy of a request, in one partition, at one cost: the unit a {@link Store} decides.
 *
 * <p>The cost is the number of quota units the request asks for: 1 for a plain request, the
 * content length for a {@code content-bytes} policy, or 0 to read the state without consuming.
 */
public final class Acquisition {

  private final QuotaPolicy policy;
  private final PartitionKey key;
  private final long cost;

  private Acquisition(QuotaPolicy policy, PartitionKey key, long cost) {
    this.policy = Objects.requireNonNull(policy, "policy");
    this.key = Objects.requireNonNull(key, "key");
    if (cost < 0 || cost > QuotaPolicy.MAX_QUOTA) {
      throw new IllegalArgumentException("cost: expected an integer from 0 to " + QuotaPolicy.MAX_QUOTA
          + " for policy '" + policy.name() + "', got " + cost);
    }
    this.cost = cost;
  }

  /** One unit of the policy in the given partition. */
  public static Acquisition of(QuotaPolicy policy, PartitionKey key) {
    return new Acquisition(policy, key, 1);
  }

  /**
   * {@code cost} units of the policy in the given partition.
   *
   * @throws IllegalArgumentException if the cost is negative or above {@link QuotaPolicy#MAX_QUOTA}
   */
  public static Acquisition of(QuotaPolicy policy, PartitionKey key, long cost) {
    return new Acquisition(policy, key, cost);
  }

  public QuotaPolicy policy() {
    return policy;
  }

  public PartitionKey key() {
    return key;
  }

  public long cost() {
    return cost;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Acquisition)) {
      return false;
    }
    Acquisition a = (Acquisition) o;
    return cost == a.cost && policy.equals(a.policy) && key.equals(a.key);
  }

  @Override
  public int hashCode() {
    return Objects.hash(policy, key, cost);
  }

  @Override
  public String toString() {
    return policy.name() + "[" + key + "] x" + cost;
  }
}
