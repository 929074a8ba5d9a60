package dev.headroom;

import java.util.Objects;

/**
 * A held unit of a {@link Algorithm#CONCURRENCY} policy. It is given back by
 * {@link QuotaLimiter#release(Decision)} (or {@link Store#release(Lease)}) when the request completes;
 * if that never happens, the store drops it after the policy's {@link QuotaPolicy#leaseTimeout()}.
 */
public final class Lease {

  private final QuotaPolicy policy;
  private final PartitionKey key;
  private final long id;
  private final long units;

  /** For {@link Store} implementations: a lease with the id the store chose. */
  public Lease(QuotaPolicy policy, PartitionKey key, long id, long units) {
    this.policy = Objects.requireNonNull(policy, "policy");
    this.key = Objects.requireNonNull(key, "key");
    this.id = id;
    this.units = units;
  }

  public QuotaPolicy policy() {
    return policy;
  }

  public PartitionKey key() {
    return key;
  }

  /** The store's identifier of this lease, unique within the policy and partition. */
  public long id() {
    return id;
  }

  /** How many units the lease holds. */
  public long units() {
    return units;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Lease)) {
      return false;
    }
    Lease l = (Lease) o;
    return id == l.id && units == l.units && policy.equals(l.policy) && key.equals(l.key);
  }

  @Override
  public int hashCode() {
    return Objects.hash(policy, key, id, units);
  }

  @Override
  public String toString() {
    return "Lease{" + policy.name() + "[" + key + "] #" + id + " x" + units + "}";
  }
}
