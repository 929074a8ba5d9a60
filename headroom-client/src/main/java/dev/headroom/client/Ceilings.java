package dev.headroom.client;

import java.time.Duration;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * Thresholds beyond which the client does not obey what a server (or an intermediary) says, as
 * draft-ietf-httpapi-ratelimit-headers-09 section 8.5.1 advises: "clients can set thresholds that
 * they consider reasonable ... For example this means capping the maximum number of request per
 * second, or implementing retries when the reset parameter exceeds ten minutes."
 *
 * <p>A reset beyond {@link #maxReset()} is not waited for: the requests it would hold go one at
 * a time, each alone as a probe, and each response decides for the next. A Retry-After beyond
 * {@link #maxRetryAfter()} is waited for up to the ceiling; then the client sends a single probe
 * request and goes by what that response says.
 *
 * <p>Every number a server sent is clamped here <em>before</em> it is converted or added to: a
 * valid Structured Field Integer has up to 15 digits (RFC 9651 section 3.3.1), so
 * {@code t=99999999999999} seconds is well-formed, yet more nanoseconds than a {@code long} holds.
 * {@link #nanos(Duration)} and {@link #clampedNanos(Duration, Duration)} saturate instead of
 * throwing, so no reported value can make the client's bookkeeping fail.
 *
 * <p>Immutable.
 */
public final class Ceilings {

  /** Default {@link Builder#maxReset(Duration)}: ten minutes, the draft's example. */
  public static final Duration DEFAULT_MAX_RESET = Duration.ofMinutes(10);

  /** Default {@link Builder#maxRetryAfter(Duration)}: ten minutes. */
  public static final Duration DEFAULT_MAX_RETRY_AFTER = Duration.ofMinutes(10);

  /** Default {@link Builder#maxTrackedScopes(int)}: bounds the client's memory. */
  public static final int DEFAULT_MAX_TRACKED_SCOPES = 10_000;

  private static final Ceilings DEFAULTS = builder().build();

  private final Duration maxReset;
  private final Duration maxRetryAfter;
  private final double maxRequestsPerSecond;
  private final int maxTrackedScopes;

  private Ceilings(Builder b) {
    this.maxReset = b.maxReset;
    this.maxRetryAfter = b.maxRetryAfter;
    this.maxRequestsPerSecond = b.maxRequestsPerSecond;
    this.maxTrackedScopes = b.maxTrackedScopes;
  }

  /** Ten minutes for resets and Retry-After, no rate cap, 10 000 scopes. */
  public static Ceilings defaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Longest reset ({@code t}, an epoch reset, a window) waited for; beyond it the requests go one at
   * a time as probes, each after the answer before it (draft-09 section 8.5.1).
   */
  public Duration maxReset() {
    return maxReset;
  }

  /** Longest Retry-After obeyed; a longer one is probed at this age. */
  public Duration maxRetryAfter() {
    return maxRetryAfter;
  }

  /** Most requests per second sent within one scope, whatever the server says; empty when uncapped. */
  public OptionalDouble maxRequestsPerSecond() {
    return maxRequestsPerSecond > 0 ? OptionalDouble.of(maxRequestsPerSecond) : OptionalDouble.empty();
  }

  /** Most scopes (origins, by default) whose budgets are remembered; the least recently used go first. */
  public int maxTrackedScopes() {
    return maxTrackedScopes;
  }

  /** The longest duration whose nanoseconds fit a {@code long} (about 292 years). */
  private static final Duration MAX_NANOS = Duration.ofNanos(Long.MAX_VALUE);

  /**
   * {@code d} in nanoseconds, saturating: {@link Long#MAX_VALUE} for anything longer than about
   * 292 years (where {@link Duration#toNanos()} would throw), 0 for a negative duration.
   */
  static long nanos(Duration d) {
    if (d.isNegative()) {
      return 0;
    }
    return d.compareTo(MAX_NANOS) >= 0 ? Long.MAX_VALUE : d.toNanos();
  }

  /** {@code min(d, max)} in nanoseconds, saturating (see {@link #nanos(Duration)}). */
  static long clampedNanos(Duration d, Duration max) {
    return Math.min(nanos(d), nanos(max));
  }

  /** {@code a + b}, saturating at {@link Long#MAX_VALUE} and {@link Long#MIN_VALUE}. */
  static long saturatingAdd(long a, long b) {
    long r = a + b;
    if (((a ^ r) & (b ^ r)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return r;
  }

  /** {@code a * b} for {@code a, b >= 0}, saturating at {@link Long#MAX_VALUE}. */
  static long saturatingMultiply(long a, long b) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    return (hi == 0 && lo >= 0) || (hi == -1 && lo < 0) ? lo : Long.MAX_VALUE;
  }

  /** Builds {@link Ceilings}; every setter validates its argument. */
  public static final class Builder {
    private Duration maxReset = DEFAULT_MAX_RESET;
    private Duration maxRetryAfter = DEFAULT_MAX_RETRY_AFTER;
    private double maxRequestsPerSecond;
    private int maxTrackedScopes = DEFAULT_MAX_TRACKED_SCOPES;

    private Builder() {}

    /** At least one second. */
    public Builder maxReset(Duration maxReset) {
      this.maxReset = atLeastOneSecond("maxReset", maxReset);
      return this;
    }

    /** At least one second. */
    public Builder maxRetryAfter(Duration maxRetryAfter) {
      this.maxRetryAfter = atLeastOneSecond("maxRetryAfter", maxRetryAfter);
      return this;
    }

    /** A positive, finite rate. */
    public Builder maxRequestsPerSecond(double rate) {
      if (!(rate > 0) || Double.isInfinite(rate)) {
        throw new IllegalArgumentException("maxRequestsPerSecond: expected a positive finite rate, got " + rate);
      }
      this.maxRequestsPerSecond = rate;
      return this;
    }

    /** From 1 to 10 000 000. */
    public Builder maxTrackedScopes(int n) {
      if (n < 1 || n > 10_000_000) {
        throw new IllegalArgumentException("maxTrackedScopes: expected 1 to 10000000, got " + n);
      }
      this.maxTrackedScopes = n;
      return this;
    }

    public Ceilings build() {
      return new Ceilings(this);
    }

    private static Duration atLeastOneSecond(String field, Duration d) {
      Objects.requireNonNull(d, field);
      if (d.compareTo(Duration.ofSeconds(1)) < 0) {
        throw new IllegalArgumentException(field + ": expected at least 1 second, got " + d);
      }
      return d;
    }
  }
}
