package dev.headroom.client;

import dev.headroom.Ticker;
import java.net.http.HttpRequest;
import java.util.concurrent.CompletableFuture;

/**
 * One step of the client between the caller and the network, in the manner of OkHttp's
 * interceptors: it sees the request, may change it, calls {@link Chain#proceed} (zero, one or
 * several times) and may change or replace what comes back. The client's own features (retry and
 * back-off, Graceful Boundaries guidance, pacing) are interceptors too.
 *
 * <p>Order, outermost first: the caller's {@link HeadroomClient.Builder#addInterceptor
 * interceptors} (once per call), retry, guidance, pacing, the caller's
 * {@link HeadroomClient.Builder#addNetworkInterceptor network interceptors} (once per attempt,
 * after pacing admitted it), the network. Extensions that carry limits in bodies (such as vend's
 * rate-limit extension) plug in as network interceptors: they read the body, report budgets
 * through {@link Chain#budgets()} and mark refusals with {@link Exchange#asRefused}.
 *
 * <p>Implementations must be thread-safe and must not block: waiting is done with
 * {@link Chain#scheduler()}.
 */
@FunctionalInterface
public interface Interceptor {

  CompletableFuture<Exchange> intercept(Chain chain);

  /** What an interceptor can reach. */
  interface Chain {

    /** The request as it reached this step. */
    HttpRequest request();

    /** Runs the rest of the chain for a request. */
    CompletableFuture<Exchange> proceed(HttpRequest request);

    /** The budgets the client tracks. */
    Budgets budgets();

    /** The client's clock. */
    Ticker ticker();

    /** The client's way to wait. */
    Scheduler scheduler();
  }
}
