package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.GateResponse;
import dev.headroom.http.DiscoveryPaths;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.vend.format.VendRequestException;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

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
 * envelope bound and {@code limits.maxBodyBytes} (413), then an HTTP/1.1 request's offer to upgrade
 * its connection ({@code Upgrade} with {@code Connection: upgrade}, RFC 9110 section 7.8) against
 * the route's {@code upgrade}: 400 when the route allows none of the protocols offered (a route
 * without {@code upgrade} allows none: the request is refused rather than served without the
 * upgrade, so that a WebSocket client learns why instead of reading an ordinary response as a
 * failed handshake), 400 for an upgrade request with a body, else forwarded asking for the
 * protocols the route allows.
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

  /**
   * The request goes to the route's upstream once its policies allow it; {@code upgrade} is the
   * Upgrade protocols it asks the upstream for (those of the request's that the route allows), or
   * null for an ordinary request.
   */
  record Forward(CompiledRoute route, String upgrade) implements Triage {}

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
    String offered = request.protocolVersion().equals(HttpVersion.HTTP_1_1) ? upgradeOffer(request) : null;
    if (offered != null) {
      String accepted = vend == null ? accepted(offered, route.route().upgrade()) : null;
      if (accepted == null) {
        String quoted = offered.length() <= 80 ? offered : offered.substring(0, 80) + "...";
        return new Local(snap.vocabulary().error(GatewayMessages.upgradeNotAllowed(path, quoted,
            new TreeSet<>(vend == null ? route.route().upgrade() : Set.of())), format, path), Body.DROP);
      }
      if (!(request instanceof LastHttpContent)) {
        return new Local(snap.vocabulary().error(GatewayMessages.upgradeWithBody(), format, path), Body.UNREAD);
      }
      return new Forward(route, accepted);
    }
    return vend != null ? new Vend(route, vend) : new Forward(route, null);
  }

  /**
   * The protocols an HTTP/1.1 request offers to upgrade its connection to (its Upgrade fields, RFC
   * 9110 section 7.8), as a comma-separated list, without {@code h2c}; null when it offers none.
   * An offer is an Upgrade field together with the {@code upgrade} connection option, which its
   * sender must send with it (section 7.8): an Upgrade field alone is a hop-by-hop field that
   * lost its option on the way, and is dropped like any other (section 7.6.1). An HTTP/1.0
   * request's Upgrade is ignored (section 7.8 requires it), and so is {@code h2c}: RFC 9113
   * section 3.1 deprecates that upgrade, and a server that does not take an offered upgrade may
   * carry on in HTTP/1.1 (section 7.8), which is what clients offering it expect.
   */
  static String upgradeOffer(HttpRequest request) {
    if (!request.headers().contains(HttpHeaderNames.UPGRADE)
        || !request.headers().containsValue(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE, true)) {
      return null;
    }
    StringBuilder out = new StringBuilder();
    for (String line : request.headers().getAll(HttpHeaderNames.UPGRADE)) {
      for (String member : line.split(",")) {
        String p = member.strip();
        if (!p.isEmpty() && !p.equalsIgnoreCase("h2c")) {
          out.append(out.length() == 0 ? "" : ", ").append(p);
        }
      }
    }
    return out.length() == 0 ? null : out.toString();
  }

  /**
   * The offered protocols that {@code allowed} (lower case) names, as the request wrote them, in
   * its order; null when there is none. A protocol offered with a version ({@code name/version})
   * is allowed by its name alone or by the name with that version.
   */
  static String accepted(String offered, Set<String> allowed) {
    StringBuilder out = new StringBuilder();
    for (String member : offered.split(",")) {
      String p = member.strip();
      String lower = p.toLowerCase(Locale.ROOT);
      int slash = lower.indexOf('/');
      if (allowed.contains(lower) || slash > 0 && allowed.contains(lower.substring(0, slash))) {
        out.append(out.length() == 0 ? "" : ", ").append(p);
      }
    }
    return out.length() == 0 ? null : out.toString();
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
