package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.wire.HopByHop;
import dev.headroom.gateway.internal.wire.ResponseBody;
import dev.headroom.gateway.internal.wire.ResponseHead;
import io.netty.handler.codec.http.HttpResponse;

/**
 * One path an upstream response takes to the client, chosen by {@link ProxyExchange} from the
 * response head: {@link StreamRelay} (an HTTP/2 stream's response of known length, as frames),
 * {@link RawRelay} (forwarded as received, byte ranges of the head and the body's
 * bytes as they come), {@link ReframedRelay} (re-encoded by the HTTP encoder: an until-close body,
 * or a chunked one for an HTTP/1.0 client), {@link VendRelay} (read whole and rewritten with the
 * vend extension's data, seed 003) and {@link NormalisedErrorRelay} (a bare upstream error
 * replaced by a structured one, Graceful Boundaries). Every relay drops hop-by-hop fields through
 * {@link HopByHop}, and writes to the client through the narrow {@link ClientSink} the exchange
 * gives it, never the exchange itself: what a relay needs besides (a vend call's decision, the
 * gateway's error answer) it is given when made, here. Confined to the client connection's event loop.
 */
interface ResponseRelay {

  /**
   * The relay for a response head, or null when the response cannot reach the client (answered by
   * the exchange instead: a transfer coding an HTTP/1.0 client cannot be sent).
   */
  static ResponseRelay forHead(ProxyExchange ex, ResponseHead h) {
    if (NormalisedErrorRelay.applies(ex.route, h)) {
      return new NormalisedErrorRelay(ex, h.status(),
          NormalisedErrorRelay.answer(ex.snap.vocabulary(), h.status(), h.get("allow"), ex.format, ex.path()));
    }
    if (VendRelay.transforms(ex.vendCall, ex.vend, ex.headRequest(), h)) {
      ex.upstream.dechunk();
      return new VendRelay(ex, ex.vendCall, ex.vend, h);
    }
    if (StreamRelay.applies(ex, h)) {
      return new StreamRelay(ex, h); // an HTTP/2 stream: HEADERS and DATA frames, no bytes to parse again
    }
    ResponseHead.Framing framing = h.framing();
    if (framing == ResponseHead.Framing.NONE || framing == ResponseHead.Framing.FIXED
        || framing == ResponseHead.Framing.CHUNKED && !ex.http10()) {
      return new RawRelay(ex, h);
    }
    // until-close bodies, and chunked ones for an HTTP/1.0 client, are re-framed by the encoder
    HttpResponse response = h.toHttpResponse();
    String codings = ReframedRelay.codingsBeforeChunked(response.headers());
    if (codings != null && ex.http10()) {
      ex.untransferable(codings);
      return null;
    }
    ex.upstream.dechunk();
    return new ReframedRelay(ex, ReframedRelay.clientResponse(ex, response));
  }

  /** A piece of the response body; the relay owns its bytes. */
  void body(ResponseBody piece);

  /** The upstream's read batch is over: writes what the relay held back for it (a head). */
  default void readComplete() {}

  /** Whether nothing of the response has reached the client connection yet, so that 502 can still be said. */
  boolean nothingSent();

  /** Drops what the relay holds: the exchange ended before the response did. */
  default void release() {}
}
