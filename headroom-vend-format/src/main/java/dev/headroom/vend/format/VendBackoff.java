package dev.headroom.vend.format;

import java.time.Duration;

/**
 * The client backoff of seed 003 ("Backoff Strategy"):
 * {@code wait_time = min(retry_after * 2^attempt, max_wait)}, attempt counted from 0.
 *
 * <p>"Clients MUST NOT retry immediately without waiting" (seed 003, "Handling RATE_LIMITED"): a
 * {@code retry_after} of zero (or less than {@link #MIN_RETRY_AFTER}) is taken as
 * {@link #MIN_RETRY_AFTER}, so that the formula never yields an immediate retry unless
 * {@code max_wait} itself is zero. Arithmetic saturates: a large attempt gives {@code max_wait}.
 * Pure functions.
 */
public final class VendBackoff {

  /** The least {@code retry_after} the formula starts from: one second, the unit of Retry-After. */
  public static final Duration MIN_RETRY_AFTER = Duration.ofSeconds(1);

  /** The seed's example {@code max_wait}: five minutes. */
  public static final Duration DEFAULT_MAX_WAIT = Duration.ofMinutes(5);

  private VendBackoff() {}

  /**
   * {@code min(retry_after * 2^attempt, max_wait)}.
   *
   * @param retryAfter {@code details.retry_after} (or the Retry-After header), zero or more
   * @param attempt the retry attempt, 0 for the first retry
   * @param maxWait the longest wait, zero or more
   * @throws IllegalArgumentException naming the argument when one is null or negative
   */
  public static Duration waitTime(Duration retryAfter, int attempt, Duration maxWait) {
    if (retryAfter == null || retryAfter.isNegative()) {
      throw new IllegalArgumentException("retryAfter: expected zero or more, got " + retryAfter);
    }
    if (attempt < 0) {
      throw new IllegalArgumentException("attempt: expected 0 or more, got " + attempt);
    }
    if (maxWait == null || maxWait.isNegative()) {
      throw new IllegalArgumentException("maxWait: expected zero or more, got " + maxWait);
    }
    Duration base = retryAfter.compareTo(MIN_RETRY_AFTER) < 0 ? MIN_RETRY_AFTER : retryAfter;
    if (base.compareTo(maxWait) >= 0) {
      return maxWait;
    }
    // wait < maxWait throughout; 2 * wait >= maxWait is tested as wait >= maxWait - wait, which
    // cannot overflow, and ends the loop within 64 rounds whatever the attempt.
    Duration wait = base;
    for (int i = 0; i < attempt; i++) {
      if (wait.compareTo(maxWait.minus(wait)) >= 0) {
        return maxWait;
      }
      wait = wait.multipliedBy(2);
    }
    return wait;
  }

  /** {@link #waitTime(Duration, int, Duration)} with whole seconds, as {@code retry_after.value} is. */
  public static Duration waitTime(long retryAfterSeconds, int attempt, Duration maxWait) {
    if (retryAfterSeconds < 0) {
      throw new IllegalArgumentException("retryAfterSeconds: expected zero or more, got " + retryAfterSeconds);
    }
    return waitTime(Duration.ofSeconds(retryAfterSeconds), attempt, maxWait);
  }
}
