package dev.headroom;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The answer for a whole request: every policy decided at once, all or nothing. Either every
 * policy allowed it and each consumed its cost, or at least one refused it and none consumed
 * anything.
 *
 * <p>Immutable.
 */
public final class Decision {

  private final boolean allowed;
  private final List<PolicyOutcome> outcomes;
  private final List<PolicyOutcome> violated;
  private final PolicyOutcome mostConstraining;
  private final long retryAfterNanos;

  private Decision(List<PolicyOutcome> outcomes) {
    this.outcomes = List.copyOf(outcomes);
    List<PolicyOutcome> refused = new ArrayList<>(2);
    long retry = 0;
    for (PolicyOutcome o : this.outcomes) {
      if (!o.allowed()) {
        refused.add(o);
        retry = Math.max(retry, o.retryAfter().toNanos());
      }
    }
    this.violated = Collections.unmodifiableList(refused);
    this.allowed = refused.isEmpty();
    this.retryAfterNanos = retry;
    this.mostConstraining = pickMostConstraining(this.outcomes, this.violated);
  }

  /**
   * For {@link Store} implementations: the decision made of these outcomes. It is allowed when
   * every outcome is; when it is not, outcomes that allowed must not have consumed anything.
   *
   * @throws IllegalArgumentException if there is no outcome
   */
  public static Decision of(List<PolicyOutcome> outcomes) {
    if (outcomes.isEmpty()) {
      throw new IllegalArgumentException("outcomes: expected at least one policy outcome, got none");
    }
    return new Decision(outcomes);
  }

  /** Whether the request may proceed. */
  public boolean allowed() {
    return allowed;
  }

  /** One outcome per acquisition, in the order they were asked. */
  public List<PolicyOutcome> outcomes() {
    return outcomes;
  }

  /** The outcomes that refused the request; empty when allowed. */
  public List<PolicyOutcome> violated() {
    return violated;
  }

  /**
   * The policy to report when only one can be: when refused, the violated policy with the longest
   * Retry-After; when allowed, the policy closest to exhaustion (the smallest remaining share of
   * its quota, then the longest reset), as draft-polli-ratelimit-headers-02 section 4 asks.
   */
  public PolicyOutcome mostConstraining() {
    return mostConstraining;
  }

  /** When refused: how long until the whole request could be allowed; zero when allowed. */
  public Duration retryAfter() {
    return Duration.ofNanos(retryAfterNanos);
  }

  /** {@link #retryAfter()} in whole seconds, rounded up; the value for {@code Retry-After}. */
  public long retryAfterSeconds() {
    return PolicyOutcome.ceilSeconds(retryAfterNanos);
  }

  /** The concurrency leases this decision holds; to be released when the request completes. */
  public List<Lease> leases() {
    List<Lease> leases = null;
    for (PolicyOutcome o : outcomes) {
      if (o.lease().isPresent()) {
        if (leases == null) {
          leases = new ArrayList<>(1);
        }
        leases.add(o.lease().get());
      }
    }
    return leases == null ? List.of() : Collections.unmodifiableList(leases);
  }

  private static PolicyOutcome pickMostConstraining(List<PolicyOutcome> all, List<PolicyOutcome> refused) {
    PolicyOutcome best = null;
    if (!refused.isEmpty()) {
      for (PolicyOutcome o : refused) {
        if (best == null || o.retryAfter().compareTo(best.retryAfter()) > 0) {
          best = o;
        }
      }
      return best;
    }
    for (PolicyOutcome o : all) {
      if (best == null) {
        best = o;
        continue;
      }
      int byShare = Double.compare(o.utilisation(), best.utilisation());
      if (byShare > 0 || (byShare == 0 && o.reset().compareTo(best.reset()) > 0)) {
        best = o;
      }
    }
    return best;
  }

  @Override
  public String toString() {
    return (allowed ? "allowed " : "refused ") + outcomes;
  }
}
