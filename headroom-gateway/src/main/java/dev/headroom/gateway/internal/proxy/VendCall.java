package dev.headroom.gateway.internal.proxy;

import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.StoreException;
import dev.headroom.http.body.ServiceErrors;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.vend.CallIdentity;
import dev.headroom.vend.VendDecision;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.format.VendRequest;
import dev.headroom.vend.format.VendRequestException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The decision step of a vend call ({@link Triage.Vend}; seed 003, the gateway part of the
 * vend rate-limit extension): the envelope, read whole, is parsed (400 {@code INVALID_REQUEST} on
 * a bad one, as headroom-vend's reader answers), and every scope it names is decided at once for
 * the caller ({@code X-Vend-Caller}) and user. A refused call is answered 429 {@code RATE_LIMITED}
 * with Retry-After equal to {@code details.retry_after.value} (seed 003, HTTP Mapping); an
 * unmerged {@code vend.capabilities} is answered by the gateway; anything else goes upstream.
 */
final class VendCall {
  private VendCall() {}

  /** A vend call allowed to go upstream: the call as parsed and its decision, for the relay that decorates the response. */
  record Allowed(VendRequest call, VendDecision decision) {}

  static void decide(ProxyExchange ex, byte[] envelope) {
    VendRoutes vend = ex.vend;
    VendRequest call;
    try {
      call = vend.reader().parse(envelope);
    } catch (VendRequestException e) {
      ex.refused(Triage.vendError(e));
      return;
    }
    String user = vend.settings().userHeader().map(h -> ex.request.headers().get(h)).orElse(null);
    CallIdentity identity;
    try {
      identity = CallIdentity.of(ex.request.headers().get(VendRateLimiter.CALLER_HEADER), user);
    } catch (IllegalArgumentException e) {
      // a user header that is no identifier counts as no user: the shared anonymous partition
      identity = CallIdentity.of(ex.request.headers().get(VendRateLimiter.CALLER_HEADER), null);
    }
    long t0 = System.nanoTime();
    CompletableFuture<VendDecision> f = vend.limiter().decideAsync(call, identity).toCompletableFuture();
    if (f.isDone()) {
      decided(ex, call, f, t0);
    } else {
      f.whenComplete((d, e) -> ex.conn.ctx.executor().execute(() -> decided(ex, call, f, t0)));
    }
  }

  private static void decided(ProxyExchange ex, VendRequest call, CompletableFuture<VendDecision> f, long t0) {
    ex.state.metrics.storeLatency(System.nanoTime() - t0);
    VendDecision d;
    try {
      d = f.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof VendRequestException v) {
        ex.refused(Triage.vendError(v)); // X-Vend-Caller is not a caller name
        return;
      }
      storeFailed(ex, e.getCause() == null ? e : e.getCause());
      return;
    }
    if (ex.ended()) {
      return;
    }
    Decision decision = d.decision().orElse(null);
    ex.hold(decision);
    if (decision != null) {
      for (PolicyOutcome o : decision.outcomes()) {
        ex.state.metrics.vendDecision(o.policy().name(), o.allowed(), o.key());
      }
    }
    RateLimitHeaders headers = ex.snap.vocabulary().headers(ex.route.route());
    if (!d.allowed()) {
      LocalResponse r = new LocalResponse(HttpResponseStatus.valueOf(d.httpStatus()), "application/json",
          new byte[0]);
      byte[] body = d.refuse(headers, r.headers()::add);
      ex.refused(new LocalResponse(r.status(), r.contentType(), body, r.headers()));
      return;
    }
    if (call.isCapabilities() && !ex.vend.settings().mergeCapabilities()) {
      LocalResponse r = new LocalResponse(HttpResponseStatus.OK, "application/json",
          d.successResponse(ex.vend.limiter().capabilities()));
      d.writeHeaders(headers, 200, r.headers()::add);
      ex.refused(r);
      return;
    }
    ex.vendAllowed(new Allowed(call, d));
  }

  /**
   * The store could not decide (a Redis store failing closed, or the gateway's queue to it full):
   * 503 temporary-reduced-capacity (draft-ietf-httpapi-ratelimit-headers-09 section 5.2) with the
   * Retry-After every front end sends, shorter for the gateway's own overload
   * ({@link StoreException#overloaded}); the warning is throttled ({@link GatewayState#storeWarning}).
   */
  private static void storeFailed(ProxyExchange ex, Throwable why) {
    ex.state.storeWarning.warn(ex.state.ticker, "store failed to decide a vend call on route "
        + ex.route.route().name() + ": " + why);
    boolean overloaded = why instanceof StoreException se && se.overloaded();
    LocalResponse r = ex.snap.vocabulary().error(GatewayMessages.storeUnavailable(overloaded), ex.format, ex.path());
    r.headers().set(HttpHeaderNames.RETRY_AFTER, Long.toString(ServiceErrors.storeRetryAfterSeconds(overloaded)));
    ex.refused(r);
  }
}
