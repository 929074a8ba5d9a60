package dev.headroom.client;

import dev.headroom.Ticker;
import java.net.http.HttpRequest;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The chain one interceptor sees: the interceptors after it. Immutable. */
final class RealChain implements Interceptor.Chain {

  private final List<Interceptor> interceptors;
  private final int index;
  private final HttpRequest request;
  private final HeadroomClient client;
  private final CallState state;

  RealChain(List<Interceptor> interceptors, int index, HttpRequest request, HeadroomClient client) {
    this(interceptors, index, request, client, new CallState());
  }

  RealChain(List<Interceptor> interceptors, int index, HttpRequest request, HeadroomClient client, CallState state) {
    this.interceptors = interceptors;
    this.index = index;
    this.request = request;
    this.client = client;
    this.state = state;
  }

  /** What the steps of one call share (the same object for every attempt of the call). */
  CallState state() {
    return state;
  }

  @Override
  public HttpRequest request() {
    return request;
  }

  @Override
  public CompletableFuture<Exchange> proceed(HttpRequest next) {
    if (index >= interceptors.size()) {
      throw new IllegalStateException("proceed: the network step is the last in the chain and cannot proceed");
    }
    RealChain chain = new RealChain(interceptors, index + 1, next, client, state);
    try {
      CompletableFuture<Exchange> f = interceptors.get(index).intercept(chain);
      if (f == null) {
        return CompletableFuture.failedFuture(new NullPointerException(
            "interceptor " + interceptors.get(index).getClass().getName() + " returned null"));
      }
      return f;
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public Budgets budgets() {
    return client.budgets();
  }

  @Override
  public Ticker ticker() {
    return client.ticker();
  }

  @Override
  public Scheduler scheduler() {
    return client.scheduler();
  }
}
