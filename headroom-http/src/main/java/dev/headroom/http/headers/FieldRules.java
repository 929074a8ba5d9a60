package dev.headroom.http.headers;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.random.RandomGenerator;

/**
 * The optional server rules of draft-ietf-httpapi-ratelimit-headers-09 a route may turn on, as one
 * value every front end reads from its own configuration and applies the same way
 * ({@link #applyTo(RateLimitHeaders.Builder)}): the gateway's {@code routes[]}, the servlet
 * filter's {@code Route} and builder, the Spring Boot starter's {@code headroom.headers.*} and
 * {@code headroom.routes[]}.
 *
 * <ul>
 *   <li>{@code jitter} (section 8.5): zero to this many whole seconds added to every {@code t} and
 *       Retry-After of a response, drawn once per response;
 *   <li>{@code onlyNearExhaustion} (section 6.2; Graceful Boundaries SC-7): the fields of allowed
 *       requests only when some policy's utilisation {@code 1 - r/q} reaches the threshold;
 *   <li>{@code capRemainingToResetRatio} (sections 6 and 8.5): {@code r / t} at most
 *       {@code factor * q / w} for policies whose window is at least {@code minWindow}.
 * </ul>
 *
 * <p>{@link #merge} lets a route's own options win over a front end's defaults, option by option.
 * Immutable; validated on construction with the messages of {@link RateLimitHeaders.Builder}.
 */
public final class FieldRules {

  /** A cap on the remaining/reset ratio (draft-09 sections 6 and 8.5). */
  public record RatioCap(double factor, Duration minWindow) {
    /** @throws IllegalArgumentException naming the field, the value and what is expected */
    public RatioCap {
      RateLimitHeaders.builder().capRemainingToResetRatio(factor, minWindow); // validates
    }
  }

  private static final FieldRules NONE = new FieldRules(null, OptionalDouble.empty(), null, null);

  private final Duration jitter;
  private final OptionalDouble onlyNearExhaustion;
  private final RatioCap ratioCap;
  private final RandomGenerator random;

  private FieldRules(Duration jitter, OptionalDouble onlyNearExhaustion, RatioCap ratioCap, RandomGenerator random) {
    this.jitter = jitter;
    this.onlyNearExhaustion = onlyNearExhaustion;
    this.ratioCap = ratioCap;
    this.random = random;
  }

  /** No option set: every front end's default. */
  public static FieldRules none() {
    return NONE;
  }

  /**
   * With jitter of up to {@code max} whole seconds (draft-09 section 8.5).
   *
   * @throws IllegalArgumentException unless {@code max} is whole seconds from 0 to {@link RateLimitHeaders#MAX_JITTER}
   */
  public FieldRules jitter(Duration max) {
    return jitter(max, random);
  }

  /** As {@link #jitter(Duration)}, drawing from {@code random} (seed it for reproducible tests). */
  public FieldRules jitter(Duration max, RandomGenerator random) {
    RateLimitHeaders.builder().jitter(max, random); // validates, naming the field
    return new FieldRules(max, onlyNearExhaustion, ratioCap, random);
  }

  /**
   * With the fields of allowed requests only near exhaustion (draft-09 section 6.2).
   *
   * @throws IllegalArgumentException unless {@code 0 < threshold <= 1}
   */
  public FieldRules onlyNearExhaustion(double threshold) {
    RateLimitHeaders.builder().onlyNearExhaustion(threshold); // validates, naming the field
    return new FieldRules(jitter, OptionalDouble.of(threshold), ratioCap, random);
  }

  /**
   * With the remaining/reset ratio capped (draft-09 sections 6 and 8.5).
   *
   * @throws IllegalArgumentException unless {@code factor >= 1} and {@code minWindow} is not negative
   */
  public FieldRules capRemainingToResetRatio(double factor, Duration minWindow) {
    return new FieldRules(jitter, onlyNearExhaustion, new RatioCap(factor, minWindow), random);
  }

  /** The jitter's maximum, if set. */
  public Optional<Duration> jitter() {
    return Optional.ofNullable(jitter);
  }

  /** The near-exhaustion threshold, if set. */
  public OptionalDouble onlyNearExhaustion() {
    return onlyNearExhaustion;
  }

  /** The ratio cap, if set. */
  public Optional<RatioCap> ratioCap() {
    return Optional.ofNullable(ratioCap);
  }

  /** These options, each one not set here taken from {@code defaults}. */
  public FieldRules merge(FieldRules defaults) {
    Objects.requireNonNull(defaults, "defaults");
    return new FieldRules(jitter != null ? jitter : defaults.jitter,
        onlyNearExhaustion.isPresent() ? onlyNearExhaustion : defaults.onlyNearExhaustion,
        ratioCap != null ? ratioCap : defaults.ratioCap,
        jitter != null ? random : defaults.random);
  }

  /** Sets what is set here on a header writer's builder; returns it. */
  public RateLimitHeaders.Builder applyTo(RateLimitHeaders.Builder b) {
    if (jitter != null) {
      b.jitter(jitter, random);
    }
    onlyNearExhaustion.ifPresent(b::onlyNearExhaustion);
    if (ratioCap != null) {
      b.capRemainingToResetRatio(ratioCap.factor(), ratioCap.minWindow());
    }
    return b;
  }

  @Override
  public String toString() {
    return "FieldRules[jitter=" + jitter + ", onlyNearExhaustion=" + onlyNearExhaustion + ", ratioCap=" + ratioCap + "]";
  }
}
