package dev.headroom.client;

import java.time.Duration;

/**
 * What to do after a refusal (429, or 503 with Retry-After): wait {@link #delay()} and send the
 * request again, or give up with {@link #failure()}. {@link RetryPolicy} decides, with the same
 * rule for every front end of the budget engine (the JDK client's retry step, and every transport
 * adapter through {@link ClientBudget#decide}):
 * <ul>
 *   <li>a request that may not be sent again (a non-idempotent method without
 *       {@link RetryPolicy.Builder#retryNonIdempotent}, RFC 9110 section 9.2.2, or a body that
 *       cannot be replayed) gives up at once;
 *   <li>after {@link RetryPolicy#maxAttempts()} tries it gives up;
 *   <li>otherwise it waits {@link RetryPolicy#delay} from the refusal's Retry-After (RFC 9110
 *       section 10.2.3, clamped by {@link Ceilings#maxRetryAfter()}) or the policy's base delay,
 *       doubled for each earlier refusal of the call that was not an ask;
 *   <li>a refusal of a request pacing sent to ask (a budget that may be spent and states no reset)
 *       waits its Retry-After as it stands, {@link RetryPolicy#askDelay}.
 * </ul>
 *
 * <p>Immutable.
 */
public final class RetryDecision {

  private final Duration delay;
  private final RateLimitedException failure;

  private RetryDecision(Duration delay, RateLimitedException failure) {
    this.delay = delay;
    this.failure = failure;
  }

  /**
   * The decision after try number {@code tries} (1 for the first) of a request with this method
   * was refused with {@code refused}.
   */
  static RetryDecision decide(RetryPolicy policy, Ceilings ceilings, String method, Exchange refused, int tries) {
    return decide(policy, ceilings, method, refused, tries, tries - 1);
  }

  /**
   * The decision after try number {@code tries} (1 for the first) of a request with this method
   * was refused with {@code refused}, {@code backoffs} of the call's earlier refusals having been
   * ones that escalate the back-off ({@link #escalates}).
   */
  static RetryDecision decide(RetryPolicy policy, Ceilings ceilings, String method, Exchange refused, int tries,
      int backoffs) {
    if (!policy.mayRetry(method)) {
      return giveUp(refused, tries, method + " is not idempotent and retryNonIdempotent is off");
    }
    if (tries >= policy.maxAttempts()) {
      return giveUp(refused, tries, "maxAttempts " + policy.maxAttempts() + " reached");
    }
    Duration base = refused.retryAfter()
        .map(ra -> ra.compareTo(ceilings.maxRetryAfter()) > 0 ? ceilings.maxRetryAfter() : ra)
        .orElse(policy.baseDelay());
    if (refused.asked()) {
      return new RetryDecision(policy.askDelay(base), null);
    }
    return new RetryDecision(policy.delay(backoffs, base), null);
  }

  /**
   * Whether this refusal doubles the waits after later refusals of the same call: every refusal
   * but that of a request pacing sent to ask ({@link Exchange#asked()}).
   */
  static boolean escalates(Exchange refused) {
    return !refused.asked();
  }

  static RetryDecision giveUp(Exchange refused, int tries, String reason) {
    return new RetryDecision(null, new RateLimitedException(refused, tries, reason));
  }

  /** Whether the request is to be sent again after {@link #delay()}. */
  public boolean retry() {
    return failure == null;
  }

  /**
   * How long to wait before sending again.
   *
   * @throws IllegalStateException when the decision is to give up
   */
  public Duration delay() {
    if (failure != null) {
      throw new IllegalStateException("delay: the decision is to give up (" + failure.getMessage() + ")");
    }
    return delay;
  }

  /**
   * The exception to give up with, carrying the refusal.
   *
   * @throws IllegalStateException when the decision is to retry
   */
  public RateLimitedException failure() {
    if (failure == null) {
      throw new IllegalStateException("failure: the decision is to retry after " + delay);
    }
    return failure;
  }

  @Override
  public String toString() {
    return failure == null ? "retry after " + delay : "give up: " + failure.getMessage();
  }
}
