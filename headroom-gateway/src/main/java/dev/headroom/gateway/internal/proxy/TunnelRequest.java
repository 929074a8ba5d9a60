package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.wire.ResponseHead;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * A request made only to open a tunnel: an HTTP/2 extended CONNECT (RFC 8441 section 4) as the
 * HTTP/1.1 upgrade request its upstream understands (RFC 9110 section 7.8): a GET without a body
 * that offers {@code Upgrade: PROTOCOL} with {@code Connection: upgrade}, and for {@code websocket}
 * the opening handshake's fields of RFC 6455 section 4.1 that the HTTP/2 client does not send
 * (RFC 8441 section 5: no {@code Sec-WebSocket-Key}, no {@code Sec-WebSocket-Accept}): a key
 * drawn here and {@code Sec-WebSocket-Version: 13}.
 *
 * <p>It goes through the route's policies as any request ({@link Triage} reads its offer). What
 * differs is the upstream's answer: its client reads any 2xx as the tunnel's opening (RFC 8441
 * section 5), so the upstream must switch ({@link #refusal}): a 101, and for {@code websocket}
 * one whose {@code Sec-WebSocket-Accept} answers the key sent (RFC 6455 section 4.2.2: the
 * gateway is the WebSocket client towards the upstream and checks it as section 4.1 asks). A 101
 * that fails the check, or a 2xx that is not a switch (an upstream that ignored the upgrade, as
 * RFC 9110 section 7.8 lets it), is answered 502; any other status is relayed as it came, as for
 * an HTTP/1.1 handshake.
 *
 * <p>Thread-safety: immutable once built, but for Netty's reference count (it has no content).
 */
public final class TunnelRequest extends DefaultFullHttpRequest {
  /** The GUID of RFC 6455 section 1.3, appended to the key to make the accept value. */
  private static final String WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  /** The one WebSocket version (RFC 6455 section 4.1, item 9). */
  private static final String WEBSOCKET_VERSION = "13";
  /** The bytes of a key before base64 (RFC 6455 section 4.1, item 7). */
  private static final int KEY_BYTES = 16;
  private static final SecureRandom KEYS = new SecureRandom();

  /** The {@code Sec-WebSocket-Accept} the upstream must answer with; null for another protocol. */
  private final String accept;

  private TunnelRequest(String uri, HttpHeaders headers, String accept) {
    super(HttpVersion.HTTP_1_1, HttpMethod.GET, uri, Unpooled.EMPTY_BUFFER, headers, new DefaultHttpHeaders(false));
    this.accept = accept;
  }

  /**
   * The upgrade request to {@code protocol} (the token of {@code :protocol}) at {@code uri} with
   * the client's end-to-end {@code fields} (changed here: the upgrade offer is added, and for
   * {@code websocket} the key and version set).
   */
  public static TunnelRequest upgrade(String protocol, String uri, HttpHeaders fields) {
    fields.set(HttpHeaderNames.UPGRADE, protocol);
    fields.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE);
    String accept = null;
    if (HttpHeaderValues.WEBSOCKET.contentEqualsIgnoreCase(protocol)) {
      byte[] nonce = new byte[KEY_BYTES];
      KEYS.nextBytes(nonce);
      String key = Base64.getEncoder().encodeToString(nonce);
      fields.set(HttpHeaderNames.SEC_WEBSOCKET_KEY, key);
      fields.set(HttpHeaderNames.SEC_WEBSOCKET_VERSION, WEBSOCKET_VERSION);
      accept = accept(key);
    }
    return new TunnelRequest(uri, fields, accept);
  }

  /** The {@code Sec-WebSocket-Accept} value for {@code key} (RFC 6455 section 4.2.2, item 5.4). */
  static String accept(String key) {
    try {
      byte[] sha1 = MessageDigest.getInstance("SHA-1").digest((key + WEBSOCKET_GUID).getBytes(StandardCharsets.US_ASCII));
      return Base64.getEncoder().encodeToString(sha1);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-1", e);
    }
  }

  /**
   * What is wrong with the upstream's switching or final answer {@code h}, for the 502 that
   * replaces it; null when it opened the tunnel, and when it refused in words the client
   * understands (a status that is not 2xx, relayed).
   */
  String refusal(ResponseHead h) {
    if (h.status() == 101) {
      if (accept != null && !accept.equals(h.get("sec-websocket-accept"))) {
        return GatewayMessages.UPSTREAM_HANDSHAKE_INVALID;
      }
      return null;
    }
    return h.status() >= 200 && h.status() < 300 ? GatewayMessages.UPSTREAM_DID_NOT_SWITCH : null;
  }
}
