package dev.headroom.client;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * When and how the client retries a refused request (429, or 503 with Retry-After).
 *
 * <p>The wait before retry number {@code n} (counted from 0) is
 * {@code min(max(retryAfter, baseDelay) * 2^n, maxWait)}, where {@code retryAfter} is the
 * response's Retry-After (RFC 9110 section 10.2.3; clamped by {@link Ceilings#maxRetryAfter()})
 * and {@link Builder#baseDelay(Duration) baseDelay} ({@link #DEFAULT_BASE_DELAY}) is both the wait
 * when the refusal says none and the floor of every wait: a server answering every 429 with
 * {@code Retry-After: 0} still gets a doubling back-off (1 s, 2 s, 4 s) rather than four immediate
 * attempts. Then up to {@code jitter * wait} is added at random, so that Retry-After stays a
 * minimum (Graceful Boundaries section 2: "treat retryAfterSeconds as a minimum wait time ...
 * adding small random jitter prevents synchronized retry storms").
 *
 * <p>A refusal without a usable Retry-After (absent, unparseable, or below {@code baseDelay})
 * holds every request of its scope, not only the refused one: the client's budgets pause the
 * scope for {@code backoff(n, baseDelay)}, {@code n} counting the scope's consecutive such
 * refusals (see {@link HeadroomClient}).
 *
 * <p>A refusal of a request that pacing sent to ask (a budget that may be spent and states no
 * reset: Azure Resource Manager's remaining-only fields, Shopify's call limit once its leak is
 * contradicted) is not a sign of overload but the answer sought: its Retry-After says when quota
 * returns. It is waited as it stands, {@link #askDelay} {@code = min(max(retryAfter, baseDelay),
 * maxWait)}, without doubling or jitter (pacing already sends such requests one at a time), and
 * it does not count as a back-off for the later ones: {@code n} counts only the call's earlier
 * refusals that were not asks. It still counts as a try toward {@link #maxAttempts()}. Worked
 * numbers: one caller's request, refused as an ask in three windows in a row with
 * {@code Retry-After: 4}, waits 4 s each time (not 4, 8 and 16 s, which held every other caller
 * of its scope behind it once it was the last request left).
 *
 * <p>Only idempotent methods (RFC 9110 section 9.2.2) are retried unless
 * {@link Builder#retryNonIdempotent(boolean)} says otherwise. After {@link #maxAttempts()} tries
 * the client gives up with {@link RateLimitedException}.
 *
 * <p>Immutable.
 */
public final class RetryPolicy {

  /** RFC 9110 section 9.2.2. */
  public static final Set<String> IDEMPOTENT_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE");

  /**
   * Default {@link Builder#baseDelay(Duration)}: one second, the wait when a refusal says none and
   * the floor of every wait (seed 003 floors the vend extension's {@code retry_after} the same way).
   */
  public static final Duration DEFAULT_BASE_DELAY = Duration.ofSeconds(1);

  private static final RetryPolicy DEFAULTS = builder().build();
  private static final RetryPolicy NONE = builder().maxAttempts(1).build();

  private final int maxAttempts;
  private final Duration baseDelay;
  private final Duration maxWait;
  private final double jitter;
  private final boolean retryNonIdempotent;
  private final RandomGenerator random;

  private RetryPolicy(Builder b) {
    this.maxAttempts = b.maxAttempts;
    this.baseDelay = b.baseDelay;
    this.maxWait = b.maxWait;
    this.jitter = b.jitter;
    this.retryNonIdempotent = b.retryNonIdempotent;
    this.random = b.random;
  }

  /** Four attempts, 1 s base, 2 min ceiling, 10 % jitter, idempotent methods only. */
  public static RetryPolicy defaults() {
    return DEFAULTS;
  }

  /** One attempt: a refusal is reported at once. */
  public static RetryPolicy none() {
    return NONE;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Tries in all, the first included. */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** The wait when a refusal says none, and the floor of every wait. */
  public Duration baseDelay() {
    return baseDelay;
  }

  public Duration maxWait() {
    return maxWait;
  }

  public double jitter() {
    return jitter;
  }

  public boolean retryNonIdempotent() {
    return retryNonIdempotent;
  }

  /** Whether a request with this method may be retried at all. */
  public boolean mayRetry(String method) {
    return retryNonIdempotent || IDEMPOTENT_METHODS.contains(method);
  }

  /**
   * The wait before retry {@code retry} (0 for the first retry), before jitter:
   * {@code min(max(base, baseDelay) * 2^retry, maxWait)}, saturating.
   */
  public Duration backoff(int retry, Duration base) {
    Objects.requireNonNull(base, "base");
    if (retry < 0) {
      throw new IllegalArgumentException("retry: expected 0 or more, got " + retry);
    }
    long nanos = Math.max(Ceilings.nanos(base), Ceilings.nanos(baseDelay));
    long max = Ceilings.nanos(maxWait);
    for (int i = 0; i < retry && nanos < max; i++) {
      nanos = nanos > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : nanos * 2;
    }
    return Duration.ofNanos(Math.min(nanos, max));
  }

  /** {@link #backoff} plus a random share of up to {@link #jitter()} of it. */
  public Duration delay(int retry, Duration base) {
    Duration d = backoff(retry, base);
    if (jitter == 0 || d.isZero()) {
      return d;
    }
    long extra = (long) (d.toNanos() * jitter * random.nextDouble());
    return d.plusNanos(extra);
  }

  /**
   * The wait after the refusal of a request sent to ask (see the class comment):
   * {@code min(max(retryAfter, baseDelay), maxWait)}, neither doubled nor jittered.
   */
  public Duration askDelay(Duration retryAfter) {
    return backoff(0, retryAfter);
  }

  /** Builds a {@link RetryPolicy}; every setter validates its argument. */
  public static final class Builder {
    private int maxAttempts = 4;
    private Duration baseDelay = DEFAULT_BASE_DELAY;
    private Duration maxWait = Duration.ofMinutes(2);
    private double jitter = 0.1;
    private boolean retryNonIdempotent;
    private RandomGenerator random = RandomGenerator.getDefault();

    private Builder() {}

    /** Tries in all, from 1 (no retry) to 100. */
    public Builder maxAttempts(int n) {
      if (n < 1 || n > 100) {
        throw new IllegalArgumentException("maxAttempts: expected 1 to 100, got " + n);
      }
      this.maxAttempts = n;
      return this;
    }

    /**
     * The wait before the first retry when the refusal has no usable Retry-After, and the floor of
     * every wait (a {@code Retry-After: 0} is raised to it); positive. {@link #DEFAULT_BASE_DELAY}.
     */
    public Builder baseDelay(Duration d) {
      Objects.requireNonNull(d, "baseDelay");
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("baseDelay: expected a positive duration, got " + d);
      }
      this.baseDelay = d;
      return this;
    }

    /** The longest wait before one retry, jitter aside; positive. */
    public Builder maxWait(Duration d) {
      Objects.requireNonNull(d, "maxWait");
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("maxWait: expected a positive duration, got " + d);
      }
      this.maxWait = d;
      return this;
    }

    /** The share of the wait added at random, from 0 to 1. */
    public Builder jitter(double jitter) {
      if (!(jitter >= 0 && jitter <= 1)) {
        throw new IllegalArgumentException("jitter: expected 0 to 1, got " + jitter);
      }
      this.jitter = jitter;
      return this;
    }

    /** Whether POST, PATCH and other non-idempotent requests are retried too; off by default. */
    public Builder retryNonIdempotent(boolean retry) {
      this.retryNonIdempotent = retry;
      return this;
    }

    /** The source of jitter; exists for testing. */
    public Builder random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    public RetryPolicy build() {
      return new RetryPolicy(this);
    }
  }
}
