package dev.headroom.client;

import dev.headroom.Ticker;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.BodySubscriber;
import java.net.http.HttpResponse.BodySubscribers;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * The last step: sends the request with {@link HttpClient#sendAsync}. A refusal's body is read by
 * the client (bounded) instead of the caller's handler, so that it can be parsed and the request
 * retried; every other body goes to the caller's handler untouched. For a vend call the client
 * also keeps a bounded copy of that body as it passes (to read the extension data); the copy is
 * used only when the caller's handler had received the whole body by the time the response
 * completed (not with streaming handlers). Thread-safe.
 */
final class NetworkInterceptor implements Interceptor {

  private final HttpClient http;
  private final BodyHandler<?> callerHandler;
  private final int maxRefusalBytes;
  private final int maxCopyBytes;
  private final Ticker ticker;

  NetworkInterceptor(HttpClient http, BodyHandler<?> callerHandler, int maxRefusalBytes, int maxCopyBytes,
      Ticker ticker) {
    this.http = http;
    this.ticker = ticker;
    this.callerHandler = callerHandler;
    this.maxRefusalBytes = maxRefusalBytes;
    this.maxCopyBytes = maxCopyBytes;
  }

  /** A network step whose every body is read by the client, bounded (for discovery documents). */
  static NetworkInterceptor bounded(HttpClient http, int maxBytes, Ticker ticker) {
    BodyHandler<RefusalBody> all = info -> RefusalBody.subscriber(maxBytes);
    return new NetworkInterceptor(http, all, maxBytes, 0, ticker);
  }

  @Override
  public CompletableFuture<Exchange> intercept(Chain chain) {
    boolean copy = maxCopyBytes > 0 && chain instanceof RealChain && ((RealChain) chain).state().vend != null;
    Copy[] copies = new Copy[1];
    BodyHandler<Object> handler = info -> {
      int s = info.statusCode();
      if (ClientBudget.isRefusal(s, info.headers().map())) {
        return BodySubscribers.mapping(RefusalBody.subscriber(maxRefusalBytes), b -> (Object) b);
      }
      BodySubscriber<?> caller = callerHandler.apply(info);
      if (copy) {
        copies[0] = new Copy(caller, maxCopyBytes);
        caller = copies[0];
      }
      return BodySubscribers.mapping(caller, b -> (Object) b);
    };
    return http.sendAsync(chain.request(), handler).thenApply((HttpResponse<Object> response) -> {
      Exchange ex = Exchange.of(chain.request(), response, ticker.instant());
      Copy c = copies[0];
      return c != null && c.bytes() != null ? ex.withBodyCopy(c.bytes()) : ex;
    });
  }

  /** Passes every buffer to the caller's subscriber and keeps a copy of the first {@code max} bytes. */
  private static final class Copy implements BodySubscriber<Object> {
    private final BodySubscriber<?> caller;
    private final int max;
    private byte[] buf = new byte[256];
    private int size;
    private boolean truncated;
    private volatile byte[] complete;

    @SuppressWarnings("unchecked")
    Copy(BodySubscriber<?> caller, int max) {
      this.caller = caller;
      this.max = max;
    }

    /** The whole body, once it completed within the bound; null otherwise. */
    byte[] bytes() {
      return complete;
    }

    @Override
    @SuppressWarnings("unchecked")
    public CompletionStage<Object> getBody() {
      return (CompletionStage<Object>) caller.getBody();
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
      caller.onSubscribe(subscription);
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
      for (ByteBuffer b : items) {
        int n = b.remaining();
        if (truncated || size + n > max) {
          truncated = true;
          continue;
        }
        if (size + n > buf.length) {
          buf = Arrays.copyOf(buf, Math.min(max, Math.max(buf.length * 2, size + n)));
        }
        b.duplicate().get(buf, size, n);
        size += n;
      }
      caller.onNext(items);
    }

    @Override
    public void onError(Throwable throwable) {
      caller.onError(throwable);
    }

    @Override
    public void onComplete() {
      if (!truncated) {
        complete = Arrays.copyOf(buf, size);
      }
      caller.onComplete();
    }
  }
}
