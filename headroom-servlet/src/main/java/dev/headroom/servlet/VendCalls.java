package dev.headroom.servlet;

import dev.headroom.StoreException;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.servlet.internal.BufferedResponse;
import dev.headroom.servlet.internal.ReplayedRequest;
import dev.headroom.vend.CallIdentity;
import dev.headroom.vend.VendDecision;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.VendRoute;
import dev.headroom.vend.format.VendRequest;
import dev.headroom.vend.format.VendRequestException;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.OptionalLong;

/**
 * One vend call through the filter ({@link VendRoute}; seed 003, the gateway part of the vend
 * rate-limit extension, applied in-process as the gateway's {@code VendCall} does it):
 *
 * <ol>
 * <li>the envelope is read whole, bounded by the route's reader (a larger one: 413
 *   {@code INVALID_REQUEST}; a malformed one: 400 {@code PARSE_ERROR} / {@code INVALID_REQUEST}, the
 *   envelopes of headroom-vend-format);
 * <li>every applicable scope is decided at once for the caller ({@code X-Vend-Caller}) and the
 *   user (the filter's {@link UserResolver}; one that is no identifier counts as no user);
 * <li>refused: 429 {@code RATE_LIMITED}, {@code Retry-After} equal to
 *   {@code details.retry_after.value} ({@link VendDecision#refuse});
 * <li>allowed: {@code vend.capabilities} answered here when the route says so; otherwise the
 *   application answers the replayed envelope into a buffer, and its response goes out with the
 *   RateLimit fields and, for a 200, the extension data inserted (or the capabilities merged).
 * </ol>
 *
 * Stateless.
 */
final class VendCalls {
  private VendCalls() {}

  /**
   * Serves a call. When the store cannot decide, the call reaches the application without fields
   * ({@code allowOnStoreFailure}) or is refused 503 temporary-reduced-capacity, as the filter's
   * other routes are (the gate's {@code Gate.StoreFailureMode}).
   *
   * @param origin the service's origin for the 503 body, or null
   */
  static void serve(HttpServletRequest request, HttpServletResponse response, FilterChain chain, VendRoute route,
      RateLimitHeaders headers, UserResolver users, boolean allowOnStoreFailure, URI origin)
      throws IOException, ServletException {
    VendRateLimiter limiter = route.limiter();
    int max = route.reader().maxBytes();
    long declared = request.getContentLengthLong();
    if (declared > max) {
      error(request, response, VendRequestException.bodyTooLarge(max, OptionalLong.of(declared)));
      return;
    }
    byte[] body = request.getInputStream().readNBytes(max + 1);
    if (body.length > max) {
      response.setHeader("Connection", "close"); // the rest of the body is not read
      error(request, response, VendRequestException.bodyTooLarge(max, OptionalLong.empty()));
      return;
    }
    VendDecision d;
    try {
      VendRequest call = route.reader().parse(body);
      d = limiter.decide(call, identity(request, users));
    } catch (VendRequestException e) {
      error(request, response, e);
      return;
    } catch (StoreException e) {
      if (allowOnStoreFailure) {
        chain.doFilter(new ReplayedRequest(request, body), response);
      } else {
        RefusalResponses.unavailable(request, response, origin);
      }
      return;
    }
    try {
      if (!d.allowed()) {
        response.setStatus(d.httpStatus());
        byte[] refusal = d.refuse(headers, response::addHeader);
        write(response, refusal);
        return;
      }
      if (d.request().isCapabilities() && route.answersCapabilities()) {
        response.setStatus(200);
        d.writeHeaders(headers, 200, response::addHeader);
        write(response, d.successResponse(limiter.capabilities()));
        return;
      }
      BufferedResponse buffered = new BufferedResponse(response);
      chain.doFilter(new ReplayedRequest(request, body), buffered);
      byte[] out = buffered.content();
      int status = response.getStatus();
      if (status == 200) {
        out = d.request().isCapabilities() ? limiter.mergeCapabilities(out) : d.decorate(out);
      }
      d.writeHeaders(headers, status, response::addHeader);
      response.setContentLength(out.length);
      response.getOutputStream().write(out);
    } finally {
      limiter.release(d);
    }
  }

  private static CallIdentity identity(HttpServletRequest request, UserResolver users) {
    String caller = request.getHeader(VendRateLimiter.CALLER_HEADER);
    try {
      return CallIdentity.of(caller, users.user(request).orElse(null));
    } catch (IllegalArgumentException e) {
      // a user that is no identifier counts as no user: the shared anonymous partition, as in the gateway
      return CallIdentity.of(caller, null);
    }
  }

  private static void error(HttpServletRequest request, HttpServletResponse response, VendRequestException e)
      throws IOException {
    RefusalResponses.settleUnreadBody(request, response);
    response.setStatus(e.httpStatus());
    write(response, e.responseBody());
  }

  private static void write(HttpServletResponse response, byte[] body) throws IOException {
    response.setContentType("application/json");
    RefusalFormat.refusalFields(response::setHeader);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }
}
