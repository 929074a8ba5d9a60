package dev.headroom.gateway.internal.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Writes a request as it goes upstream, as bytes (the upstream pipeline has no encoder): the
 * head is the client's fields as received minus hop-by-hop ones ({@link HopByHop}, RFC 9110
 * section 7.6.1) and Expect, with this hop's Forwarded element and X-Forwarded-* (RFC 7239)
 * added, and the body's framing: chunked when it came chunked, else its Content-Length (a vend
 * call's collected body: its length). Values go out byte for byte as they came (ISO-8859-1 both
 * ways). The body follows piece by piece, in a chunk each when chunked. A request that upgrades its
 * connection on a route that allows it (RFC 9110 section 7.8) goes up with {@code Connection:
 * upgrade} and the {@code Upgrade} protocols the route accepts: both are hop-by-hop, so this hop
 * states them anew rather than forwarding the client's. Stateless.
 */
public final class UpstreamRequestWriter {
  public static final byte[] LAST_CHUNK = ascii("0\r\n\r\n");
  private static final byte[] CRLF_LAST_CHUNK = ascii("\r\n0\r\n\r\n");
  private static final byte[] SP_HTTP_1_1 = ascii(" HTTP/1.1");
  private static final byte[] FORWARDED_ = ascii("forwarded: ");
  private static final byte[] X_FORWARDED_FOR_ = ascii("x-forwarded-for: ");
  private static final byte[] X_FORWARDED_HOST_ = ascii("x-forwarded-host: ");
  private static final byte[] CONNECTION_UPGRADE = ascii("connection: upgrade\r\n");
  private static final byte[] UPGRADE_ = ascii("upgrade: ");
  private static final byte[] X_FORWARDED_PROTO_HTTP = ascii("x-forwarded-proto: http\r\n");
  private static final byte[] X_FORWARDED_PROTO_HTTPS = ascii("x-forwarded-proto: https\r\n");
  private static final int CRLF = ('\r' << 8) | '\n';

  private UpstreamRequestWriter() {}

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  public enum RequestField { KEEP, SKIP, FORWARDED, XFF, CONTENT_LENGTH, X_PROTO, X_HOST }

  /** How a client request field is treated on its way upstream, by name (any case). */
  public static RequestField requestField(CharSequence name) {
    if (HopByHop.isName(name)) {
      return RequestField.SKIP;
    }
    switch (name.length()) {
      case 6:
        return is(name, "expect") ? RequestField.SKIP : RequestField.KEEP;
      case 9:
        return is(name, "forwarded") ? RequestField.FORWARDED : RequestField.KEEP;
      case 14:
        return is(name, "content-length") ? RequestField.CONTENT_LENGTH : RequestField.KEEP;
      case 15:
        return is(name, "x-forwarded-for") ? RequestField.XFF : RequestField.KEEP;
      case 16:
        return is(name, "x-forwarded-host") ? RequestField.X_HOST : RequestField.KEEP;
      case 17:
        return is(name, "x-forwarded-proto") ? RequestField.X_PROTO : RequestField.KEEP;
      default:
        return RequestField.KEEP;
    }
  }

  private static boolean is(CharSequence name, String lower) {
    return AsciiString.contentEqualsIgnoreCase(name, lower);
  }

  /**
   * The upstream request's head.
   *
   * @param host the request's Host, or null
   * @param forFor this hop's client address as text (X-Forwarded-For's entry)
   * @param forwarded this hop's Forwarded element
   * @param chunked whether the body goes up chunked (it came chunked)
   * @param bodyLength the length of a body sent whole (a vend call's), or -1 to keep the client's framing
   * @param upgrade the Upgrade protocols to ask the upstream for, or null for an ordinary request
   * @param secure whether the client connection is TLS (X-Forwarded-Proto: https)
   */
  public static ByteBuf head(HttpRequest request, String host, String forFor, String forwarded, boolean chunked,
      int bodyLength, String upgrade, boolean secure, ByteBufAllocator alloc) {
    HttpHeaders h = request.headers();
    Set<String> listed = HopByHop.connectionListed(h);
    String prior = null;
    String xff = null;
    boolean xProto = false;
    boolean xHost = false;
    HeadBytes b = HeadBytes.begin();
    b.latin1(request.method().name());
    b.writeByte(' ');
    b.latin1(request.uri());
    b.writeBytes(SP_HTTP_1_1);
    b.writeShort(CRLF);
    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence(); it.hasNext(); ) {
      Map.Entry<CharSequence, CharSequence> e = it.next();
      CharSequence name = e.getKey();
      switch (requestField(name)) {
        case SKIP:
          continue;
        case FORWARDED:
          prior = prior == null ? e.getValue().toString() : prior + ", " + e.getValue();
          continue;
        case XFF:
          xff = xff == null ? e.getValue().toString() : xff + ", " + e.getValue();
          continue;
        case CONTENT_LENGTH:
          if (chunked || bodyLength >= 0) {
            continue;
          }
          break;
        case X_PROTO:
          xProto = true;
          break;
        case X_HOST:
          xHost = true;
          break;
        default:
          break;
      }
      if (listed != null && listed.contains(name.toString().toLowerCase(Locale.ROOT))) {
        continue;
      }
      b.field(name, e.getValue());
    }
    if (bodyLength >= 0) {
      b.field("content-length", Integer.toString(bodyLength));
    }
    if (chunked) {
      b.field("transfer-encoding", "chunked");
    }
    if (upgrade != null) {
      b.writeBytes(CONNECTION_UPGRADE);
      b.field(UPGRADE_, upgrade);
    }
    b.field(FORWARDED_, prior == null ? forwarded : prior + ", " + forwarded);
    b.field(X_FORWARDED_FOR_, xff == null ? forFor : xff + ", " + forFor);
    if (!xProto) {
      b.writeBytes(secure ? X_FORWARDED_PROTO_HTTPS : X_FORWARDED_PROTO_HTTP);
    }
    if (host != null && !xHost) {
      b.field(X_FORWARDED_HOST_, host);
    }
    b.writeShort(CRLF);
    return b.toBuffer(alloc, 0);
  }

  /** A piece of the request body as it goes upstream: in a chunk when chunked, else as it is. */
  public static ByteBuf body(HttpContent c, boolean last, boolean chunked, ByteBufAllocator alloc) {
    ByteBuf data = c.content();
    if (!chunked) {
      return data;
    }
    int n = data.readableBytes();
    if (n == 0) {
      data.release();
      return last ? Unpooled.wrappedBuffer(LAST_CHUNK) : Unpooled.EMPTY_BUFFER;
    }
    ByteBuf size = alloc.buffer(12);
    size.writeCharSequence(Integer.toHexString(n), StandardCharsets.US_ASCII);
    size.writeShort(CRLF);
    return Unpooled.wrappedUnmodifiableBuffer(size, data,
        Unpooled.wrappedBuffer(last ? CRLF_LAST_CHUNK : HeadBytes.CRLF_BYTES));
  }
}
