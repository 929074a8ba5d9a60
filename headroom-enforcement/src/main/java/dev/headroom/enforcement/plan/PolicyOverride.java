package dev.headroom.enforcement.plan;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a {@link Plan} changes in one policy: its quota {@code q}, its window {@code w} and its
 * algorithm, each optional (what is absent is the policy's own). The unit and the partitioning are
 * never changed by a plan: a plan says how much, not what is counted nor for whom.
 */
public record PolicyOverride(OptionalLong quota, Optional<Duration> window, Optional<Algorithm> algorithm) {

  public PolicyOverride {
    Objects.requireNonNull(quota, "quota");
    Objects.requireNonNull(window, "window");
    Objects.requireNonNull(algorithm, "algorithm");
  }

  /** An override of the quota alone. */
  public static PolicyOverride quota(long quota) {
    return new PolicyOverride(OptionalLong.of(quota), Optional.empty(), Optional.empty());
  }

  /** An override of quota and window. */
  public static PolicyOverride of(long quota, Duration window) {
    return new PolicyOverride(OptionalLong.of(quota), Optional.of(window), Optional.empty());
  }

  /**
   * The policy as this plan enforces it, named {@code base:plan} so that its counters are its own
   * (stores key counters by policy name).
   *
   * @throws IllegalArgumentException from {@link QuotaPolicy.Builder#build()} naming the field
   */
  QuotaPolicy apply(QuotaPolicy base, String plan) {
    QuotaPolicy.Builder b = base.toBuilder().name(base.name() + ":" + plan);
    quota.ifPresent(b::quota);
    window.ifPresent(b::window);
    algorithm.ifPresent(b::algorithm);
    return b.build();
  }
}
