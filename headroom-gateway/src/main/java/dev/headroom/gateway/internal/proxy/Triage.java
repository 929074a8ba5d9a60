package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.GateResponse;
import dev.headroom.http.DiscoveryPaths;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.vend.format.VendRequestException;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the gateway does with a request, decided from its head alone, before any quota is
 * consulted: answer it itself ({@link Local}: a request that failed to decode, the discovery
 * document, no route, a method the route does not take, a declared body over the bound), forward
 * it ({@link Forward}, once its policies allow it) or read its vend envelope first ({@link Vend},
 * seed 003). A pure function of the configuration snapshot (its gate's discovery document
 * included) and the request head: no channel, no store, no clock, so that each outcome is a unit
 * test.
 *
 * <p>In order: a decoding failure (431, 414, the decoder's own refusal, else 400), the discovery
 * document at {@value #DISCOVERY_WELL_KNOWN} and {@value #DISCOVERY_API} for GET and HEAD (the
 * gate's answer, {@code Gate.discoveryAnswer}: ETag, Cache-Control, 304 for If-None-Match), the
 * limits page at {@code service.humanUrl} ({@link LimitsPage}; 405 for other methods), the
 * route table (404, 405 with Allow), then the declared Content-Length against the vend route's
 * envelope bound and {@code limits.maxBodyBytes} (413).
 */
sealed interface Triage {
  String DISCOVERY_WELL_KNOWN = DiscoveryPaths.WELL_KNOWN;
  String DISCOVERY_API = DiscoveryPaths.API;

  /** What becomes of the request body of a request answered locally. */
  enum Body {
    /** Read and dropped, so that the connection can carry the next request. */
    DROP,
    /** Not read: the connection closes after the answer (it cannot be framed, or is too large to read). */
    UNREAD
  }

  /** The gateway answers the request itself. */
  record Local(LocalResponse response, Body body) implements Triage {}

  /** The request goes to the route's upstream once its policies allow it. */
  record Forward(CompiledRoute route) implements Triage {}

  /** A vend route's call: its envelope is read whole and decided before anything is forwarded. */
  record Vend(CompiledRoute route, VendRoutes vend) implements Triage {}

  /** Decides what becomes of {@code request} under {@code snap}; answers are in {@code format}. */
  static Triage of(Snapshot snap, HttpRequest request, RefusalFormat format) {
    String path = path(request.uri());
    DecoderResult dr = request.decoderResult();
    if (dr.isFailure()) {
      Throwable cause = dr.cause();
      HttpVocabulary.GatewayError e;
      if (cause instanceof TooLongHttpHeaderException) {
        e = GatewayMessages.headerFieldsTooLarge(snap.config().limits().maxHeaderBytes());
      } else if (cause instanceof TooLongHttpLineException || cause instanceof TooLongFrameException) {
        e = GatewayMessages.requestLineTooLong(snap.config().limits().maxRequestLineBytes());
      } else if (cause instanceof RequestDecoder.Refusal refusal) {
        e = refusal.error();
      } else {
        e = GatewayMessages.malformedRequest(cause.getMessage());
      }
      return new Local(snap.vocabulary().error(e, format, path), Body.UNREAD);
    }
    HttpMethod method = request.method();
    if ((path.equals(DISCOVERY_WELL_KNOWN) || path.equals(DISCOVERY_API)) && snap.gate() != null) {
      Optional<GateResponse> doc = snap.gate().discoveryAnswer(new ProxiedRequest(request, path, null));
      if (doc.isPresent()) {
        return new Local(LocalResponse.of(doc.get()), Body.DROP);
      }
    }
    if (snap.page().isPresent() && path.equals(snap.page().get().path())) {
      if (method.equals(HttpMethod.GET) || method.equals(HttpMethod.HEAD)) {
        return new Local(snap.page().get().response(), Body.DROP);
      }
      LocalResponse r = snap.vocabulary().error(GatewayMessages.methodNotAllowed(path, List.of("GET", "HEAD"), method.name()),
          format, path);
      r.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
      return new Local(r, Body.DROP);
    }
    RouteTable.Match m = snap.routes().match(method.name(), path);
    if (m instanceof RouteTable.NotFound) {
      return new Local(snap.vocabulary().error(GatewayMessages.notFound(method.name(), path, DISCOVERY_WELL_KNOWN), format, path),
          Body.DROP);
    }
    if (m instanceof RouteTable.WrongMethod w) {
      LocalResponse r = snap.vocabulary().error(GatewayMessages.methodNotAllowed(path, w.allowed(), method.name()), format, path);
      r.headers().set(HttpHeaderNames.ALLOW, String.join(", ", w.allowed()));
      return new Local(r, Body.DROP);
    }
    CompiledRoute route = ((RouteTable.Found) m).route();
    VendRoutes vend = snap.vend().get(route.route());
    long declared = HttpUtil.getContentLength(request, -1L);
    long maxBody = snap.config().limits().maxBodyBytes();
    if (vend != null && declared > vendMaxBytes(vend, maxBody)) {
      // answered as headroom-vend answers an oversized envelope (INVALID_REQUEST, 400): a vend
      // client cannot read the gateway's 413 problem
      return new Local(vendError(VendRequestException.bodyTooLarge(vendMaxBytes(vend, maxBody),
          OptionalLong.of(declared))), Body.UNREAD);
    }
    if (declared > maxBody) {
      return new Local(snap.vocabulary().error(GatewayMessages.contentTooLarge(maxBody), format, path), Body.UNREAD);
    }
    return vend != null ? new Vend(route, vend) : new Forward(route);
  }

  /**
   * The most a vend call's body may be: the route's {@code maxRequestBytes}, or
   * {@code limits.maxBodyBytes} when that is smaller.
   */
  static long vendMaxBytes(VendRoutes vend, long maxBody) {
    return Math.min(maxBody, vend.reader().maxBytes());
  }

  /** A vend call refused by headroom-vend's reader: its status and JSON body as they are. */
  static LocalResponse vendError(VendRequestException e) {
    return new LocalResponse(HttpResponseStatus.valueOf(e.httpStatus()), "application/json", e.responseBody());
  }

  /** The request target's path: up to the query. */
  static String path(String uri) {
    int q = uri.indexOf('?');
    return q < 0 ? uri : uri.substring(0, q);
  }
}
