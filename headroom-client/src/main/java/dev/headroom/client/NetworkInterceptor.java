package dev.headroom.client;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.BodySubscriber;
import java.net.http.HttpResponse.BodySubscribers;
import java.util.concurrent.CompletableFuture;

/**
 * The last step: sends the request with {@link HttpClient#sendAsync}. A refusal's body is read by
 * the client (bounded) instead of the caller's handler, so that it can be parsed and the request
 * retried; every other body goes to the caller's handler untouched. Thread-safe.
 */
final class NetworkInterceptor implements Interceptor {

  private final HttpClient http;
  private final BodyHandler<Object> handler;
  private final dev.headroom.Ticker ticker;

  NetworkInterceptor(HttpClient http, BodyHandler<?> callerHandler, int maxRefusalBytes, dev.headroom.Ticker ticker) {
    this.http = http;
    this.ticker = ticker;
    this.handler = info -> {
      int s = info.statusCode();
      if (s == 429 || (s == 503 && info.headers().firstValue("Retry-After").isPresent())) {
        return BodySubscribers.mapping(RefusalBody.subscriber(maxRefusalBytes), b -> (Object) b);
      }
      BodySubscriber<?> caller = callerHandler.apply(info);
      return BodySubscribers.mapping(caller, b -> (Object) b);
    };
  }

  /** A network step whose every body is read by the client, bounded (for discovery documents). */
  static NetworkInterceptor bounded(HttpClient http, int maxBytes, dev.headroom.Ticker ticker) {
    BodyHandler<RefusalBody> all = info -> RefusalBody.subscriber(maxBytes);
    return new NetworkInterceptor(http, all, maxBytes, ticker);
  }

  @Override
  public CompletableFuture<Exchange> intercept(Chain chain) {
    return http.sendAsync(chain.request(), handler)
        .thenApply((HttpResponse<Object> response) -> Exchange.of(chain.request(), response, ticker.instant()));
  }
}
