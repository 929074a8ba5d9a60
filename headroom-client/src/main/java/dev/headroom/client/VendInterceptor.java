package dev.headroom.client;

import dev.headroom.vend.format.VendBackoff;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The retry step for vend calls (seed 003, "Handling RATE_LIMITED", "Backoff Strategy"); every
 * other request goes to the client's {@link RetryInterceptor} unchanged.
 *
 * <p>Before the first attempt it reads the call's envelope ({@link VendCall}: the function, for
 * function-scoped budgets; the declaration, when asked for). A refused attempt (see
 * {@link VendClientOptions}) is retried, when retry is on, after
 * {@code VendBackoff.waitTime(retry_after, n, maxWait)}; the retry then passes through pacing,
 * which may hold it longer when the extension data says so. Thread-safe (stateless).
 */
final class VendInterceptor implements Interceptor {

  private final VendClientOptions options;
  private final Interceptor otherwise;

  VendInterceptor(VendClientOptions options, Interceptor otherwise) {
    this.options = options;
    this.otherwise = otherwise;
  }

  @Override
  public CompletableFuture<Exchange> intercept(Chain chain) {
    if (!options.isVendCall(chain.request())) {
      return otherwise.intercept(chain);
    }
    CallState state = ((RealChain) chain).state();
    return VendCall.of(chain.request(), options).thenCompose(call -> {
      state.vend = call;
      return attempt(chain, call.request(), 0);
    });
  }

  private CompletableFuture<Exchange> attempt(Chain chain, HttpRequest request, int retry) {
    return chain.proceed(request).thenCompose(ex -> {
      if (!ex.isRefused()) {
        return CompletableFuture.completedFuture(ex);
      }
      int tries = retry + 1;
      if (!options.retry()) {
        return CompletableFuture.failedFuture(new VendRateLimitedException(ex, tries,
            "a vend call is a POST, not idempotent; VendClientOptions.retry is off"));
      }
      if (tries >= options.maxAttempts()) {
        return CompletableFuture.failedFuture(new VendRateLimitedException(ex, tries,
            "maxAttempts " + options.maxAttempts() + " reached"));
      }
      Duration retryAfter = ex.retryAfter().orElse(VendBackoff.MIN_RETRY_AFTER);
      Duration wait = VendBackoff.waitTime(retryAfter, retry, options.maxWait());
      return chain.scheduler().delay(wait).thenCompose(v -> attempt(chain, request, retry + 1));
    });
  }
}
