package dev.headroom.client;

import java.net.http.HttpRequest;
import java.util.concurrent.CompletableFuture;

/**
 * Retries refusals (429, or 503 with Retry-After) as {@link RetryPolicy} says, and gives up with
 * {@link RateLimitedException}. The wait honours Retry-After (clamped by
 * {@link Ceilings#maxRetryAfter()}) but is never shorter than {@link RetryPolicy#baseDelay()}, so
 * {@code Retry-After: 0} does not remove the back-off; pacing then holds the request further if
 * the budgets say so (a refusal without a usable Retry-After holds its whole scope there too). A
 * refusal of a request pacing sent to ask waits its Retry-After undoubled ({@link RetryPolicy#askDelay}).
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
    return attempt(chain, chain.request(), 0, 0);
  }

  /** Try {@code retry + 1}; {@code backoffs} of the earlier refusals escalate the back-off. */
  private CompletableFuture<Exchange> attempt(Chain chain, HttpRequest request, int retry, int backoffs) {
    return chain.proceed(request).thenCompose(ex -> {
      if (!ex.isRefused()) {
        return CompletableFuture.completedFuture(ex);
      }
      RetryDecision decision = RetryDecision.decide(policy, ceilings, request.method(), ex, retry + 1, backoffs);
      if (!decision.retry()) {
        return CompletableFuture.failedFuture(decision.failure());
      }
      int next = backoffs + (RetryDecision.escalates(ex) ? 1 : 0);
      return chain.scheduler().delay(decision.delay()).thenCompose(v -> attempt(chain, request, retry + 1, next));
    });
  }
}
