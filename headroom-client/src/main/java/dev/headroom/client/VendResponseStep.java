package dev.headroom.client;

import java.util.concurrent.CompletableFuture;

/**
 * The network-side step of vend calls: reads each response body the client holds (a refusal's,
 * or the copy taken while the caller's handler read it) as a vend envelope ({@link VendReading})
 * and attaches what it says to the exchange, so that pacing records the extension data and the
 * retry step sees {@code RATE_LIMITED}. Other requests pass untouched. Thread-safe (stateless).
 */
final class VendResponseStep implements Interceptor {

  @Override
  public CompletableFuture<Exchange> intercept(Chain chain) {
    VendCall call = ((RealChain) chain).state().vend;
    if (call == null) {
      return chain.proceed(chain.request());
    }
    return chain.proceed(chain.request()).thenApply(ex -> {
      if (ex.fromCache()) {
        // draft-09 section 7.3: a stored response describes someone else's past.
        return ex;
      }
      return ex.withVend(VendReading.parse(ex.clientBytes(), call.function()));
    });
  }
}
