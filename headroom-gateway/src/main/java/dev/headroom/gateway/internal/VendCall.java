package dev.headroom.gateway.internal;

import dev.headroom.PolicyOutcome;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.vend.CallIdentity;
import dev.headroom.vend.VendDecision;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.format.VendRequestException;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The decision step of a vend call ({@link Admission.Vend}; seed 003, the gateway part of the
 * vend rate-limit extension): the envelope, read whole, is parsed (400 {@code INVALID_REQUEST} on
 * a bad one, as headroom-vend's reader answers), and every scope it names is decided at once for
 * the caller ({@code X-Vend-Caller}) and user. A refused call is answered 429 {@code RATE_LIMITED}
 * with Retry-After equal to {@code details.retry_after.value} (seed 003, HTTP Mapping); an
 * unmerged {@code vend.capabilities} is answered by the gateway; anything else goes upstream.
 */
final class VendCall {
  private VendCall() {}

  static void decide(Exchange ex, byte[] envelope) {
    VendRoutes vend = ex.vend;
    try {
      ex.vendCall = vend.reader().parse(envelope);
    } catch (VendRequestException e) {
      ex.answer(Admission.vendError(e));
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
    CompletableFuture<VendDecision> f = vend.limiter().decideAsync(ex.vendCall, identity).toCompletableFuture();
    if (f.isDone()) {
      decided(ex, f, t0);
    } else {
      f.whenComplete((d, e) -> ex.conn.ctx.executor().execute(() -> decided(ex, f, t0)));
    }
  }

  private static void decided(Exchange ex, CompletableFuture<VendDecision> f, long t0) {
    ex.state.metrics.storeLatency(System.nanoTime() - t0);
    VendDecision d;
    try {
      d = f.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof VendRequestException v) {
        ex.answer(Admission.vendError(v)); // X-Vend-Caller is not a caller name
        return;
      }
      QuotaCheck.storeFailed(ex, e.getCause() == null ? e : e.getCause());
      return;
    }
    if (ex.ended()) {
      return;
    }
    ex.vendDecision = d;
    ex.decision = d.decision().orElse(null);
    if (ex.decision != null) {
      for (PolicyOutcome o : ex.decision.outcomes()) {
        ex.state.metrics.decision(o.policy().name(), o.allowed() ? "allowed" : "refused");
      }
    }
    RateLimitHeaders headers = ex.snap.vocabulary().headers(ex.route.route());
    if (!d.allowed()) {
      LocalResponse r = new LocalResponse(HttpResponseStatus.valueOf(d.httpStatus()), "application/json",
          new byte[0]);
      byte[] body = d.refuse(headers, r.headers()::add);
      ex.answer(new LocalResponse(r.status(), r.contentType(), body, r.headers()));
      return;
    }
    if (ex.vendCall.isCapabilities() && !ex.vend.settings().mergeCapabilities()) {
      LocalResponse r = new LocalResponse(HttpResponseStatus.OK, "application/json",
          d.successResponse(ex.vend.limiter().capabilities()));
      d.writeHeaders(headers, 200, r.headers()::add);
      ex.answer(r);
      return;
    }
    ex.vendAllowed();
  }
}
