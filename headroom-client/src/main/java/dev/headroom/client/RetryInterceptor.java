package dev.headroom.client;

import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Retries refusals (429, or 503 with Retry-After) as {@link RetryPolicy} says, and gives up with
 * {@link RateLimitedException}. The wait honours Retry-After (clamped by
 * {@link Ceilings#maxRetryAfter()}) but is never shorter than {@link RetryPolicy#baseDelay()}, so
 * {@code Retry-After: 0} does not remove the back-off; pacing then holds the request further if
 * the budgets say so (a refusal without a usable Retry-After holds its whole scope there too).
 * Thread-safe (stateless).
 */
final class RetryInterceptor implements Interceptor {

  private final RetryPolicy policy;
  private final Ceilings ceilings;

  RetryInterceptor(RetryPolicy policy, Ceilings ceilings) {
    this.policy = policy;
    this.ceilings = ceilings;
  }

  @Override
  public CompletableFuture<Exchange> intercept(Chain chain) {
    return attempt(chain, chain.request(), 0);
  }

  private CompletableFuture<Exchange> attempt(Chain chain, HttpRequest request, int retry) {
    return chain.proceed(request).thenCompose(ex -> {
      if (!ex.isRefused()) {
        return CompletableFuture.completedFuture(ex);
      }
      int tries = retry + 1;
      if (!policy.mayRetry(request.method())) {
        return CompletableFuture.failedFuture(new RateLimitedException(ex, tries,
            request.method() + " is not idempotent and retryNonIdempotent is off"));
      }
      if (tries >= policy.maxAttempts()) {
        return CompletableFuture.failedFuture(new RateLimitedException(ex, tries, "maxAttempts " + policy.maxAttempts() + " reached"));
      }
      Duration base = ex.retryAfter()
          .map(ra -> ra.compareTo(ceilings.maxRetryAfter()) > 0 ? ceilings.maxRetryAfter() : ra)
          .orElse(policy.baseDelay());
      Duration delay = policy.delay(retry, base);
      return chain.scheduler().delay(delay).thenCompose(v -> attempt(chain, request, retry + 1));
    });
  }
}
