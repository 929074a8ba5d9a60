package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.GateResponse;
import dev.headroom.gateway.internal.wire.HeadBytes;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2Headers;
import java.util.Iterator;
import java.util.Map;

/**
 * A response the gateway produces itself (refusals, errors, discovery). Small, fully in memory.
 *
 * <p>Its head (status line, fields, {@code Content-Type}, {@code Content-Length}; not the fields
 * about the connection, which depend on the exchange) is serialised once, when first written, and
 * kept: a refusal shared by every caller refused in the same second
 * ({@link GatewayMessages}) is serialised once for all of them. So the fields must not change once the
 * response has been written; the code that adds a field (405's {@code Allow}, a 503's
 * {@code Retry-After}) does so on a response just built, before writing it.
 */
final class LocalResponse {
  private final HttpResponseStatus status;
  private final String contentType;
  private final byte[] body;
  private final HttpHeaders headers;
  /** The serialised head, once written; racing writers build equal copies. */
  private volatile byte[] head;
  /**
   * The head as an HTTP/2 stream's HEADERS frame carries it, once written to a stream; racing
   * writers build equal copies. Shared by the streams it is written to, on any event loop: a
   * frame's headers are only read once built (HPACK encodes them), never changed.
   */
  private volatile Http2Headers frameHead;

  LocalResponse(HttpResponseStatus status, String contentType, byte[] body, HttpHeaders headers) {
    this.status = status;
    this.contentType = contentType;
    this.body = body;
    this.headers = headers;
  }

  LocalResponse(HttpResponseStatus status, String contentType, byte[] body) {
    this(status, contentType, body, ownHeaders());
  }

  /**
   * The gate's own answer (a refusal, 400 for a bad cost, 401 for an invalid credential, 503 for a
   * store that cannot decide) as the gateway writes it; every field in it comes from headroom-http.
   */
  static LocalResponse of(GateResponse answer) {
    HttpHeaders h = ownHeaders();
    for (Map.Entry<String, String> f : answer.fields()) {
      h.add(f.getKey(), f.getValue());
    }
    return new LocalResponse(HttpResponseStatus.valueOf(answer.status()), answer.contentType().orElse(null),
        answer.body(), h);
  }

  HttpResponseStatus status() {
    return status;
  }

  /** The media type, or null for none (a 304). */
  String contentType() {
    return contentType;
  }

  /** The body; shared, never written to. */
  byte[] body() {
    return body;
  }

  /** The fields set for this response, besides Content-Type, Content-Length and the connection's. */
  HttpHeaders headers() {
    return headers;
  }

  /**
   * The status line and fields as sent, each line ending in CRLF, without the connection's fields
   * and without the empty line that ends the head.
   */
  byte[] head() {
    byte[] h = head;
    if (h == null) {
      HeadBytes b = HeadBytes.begin();
      b.writeBytes(HeadBytes.HTTP_1_1_SP);
      b.latin1(status.codeAsText());
      b.writeByte(' ');
      b.latin1(status.reasonPhrase());
      b.writeBytes(HeadBytes.CRLF_BYTES);
      for (Iterator<Map.Entry<CharSequence, CharSequence>> it = headers.iteratorCharSequence(); it.hasNext(); ) {
        Map.Entry<CharSequence, CharSequence> e = it.next();
        b.field(e.getKey(), e.getValue());
      }
      if (contentType != null && !headers.contains(HttpHeaderNames.CONTENT_TYPE)) {
        b.field("content-type", contentType);
      }
      if (status.code() != 304 && !headers.contains(HttpHeaderNames.CONTENT_LENGTH)) {
        b.field("content-length", Integer.toString(body.length));
      }
      h = b.toArray();
      head = h;
    }
    return h;
  }

  /**
   * The response as bytes on the wire: its {@link #head()}, the connection's fate (close, or
   * keep-alive said to an HTTP/1.0 client), the empty line, and the body unless it answers a HEAD
   * request.
   */
  ByteBuf encode(ByteBufAllocator alloc, boolean keepAlive, boolean http10, boolean headRequest) {
    byte[] fields = head();
    ByteBuf b = alloc.buffer(fields.length + 48 + (headRequest ? 0 : body.length));
    b.writeBytes(fields);
    if (!keepAlive) {
      b.writeBytes(HeadBytes.CONNECTION_CLOSE);
    } else if (http10) {
      b.writeBytes(HeadBytes.CONNECTION_KEEP_ALIVE);
    }
    b.writeBytes(HeadBytes.CRLF_BYTES);
    if (!headRequest) {
      b.writeBytes(body);
    }
    return b;
  }

  /**
   * Writes the response to an HTTP/2 stream ({@code out}, the stream's channel past its HTTP
   * encoder) as frames, and flushes: HEADERS with the fields of {@link #head()} (names in lower case,
   * {@link StreamHead}), then the body as one DATA frame ending the stream; HEADERS alone ends it when
   * there is no body to send (a HEAD request, an empty body). The connection's fields have no place in
   * HTTP/2 (RFC 9113 section 8.2.2). Returns the last write.
   */
  ChannelFuture writeFrames(ChannelHandlerContext out, boolean headRequest) {
    Http2Headers h = frameHead;
    if (h == null) {
      h = StreamHead.of(status.code(), headers.size() + 2);
      for (Iterator<Map.Entry<CharSequence, CharSequence>> it = headers.iteratorCharSequence(); it.hasNext(); ) {
        Map.Entry<CharSequence, CharSequence> e = it.next();
        StreamHead.add(h, e.getKey(), e.getValue());
      }
      if (contentType != null && !headers.contains(HttpHeaderNames.CONTENT_TYPE)) {
        h.add(HttpHeaderNames.CONTENT_TYPE, contentType);
      }
      if (status.code() != 304 && !headers.contains(HttpHeaderNames.CONTENT_LENGTH)) {
        h.add(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(body.length));
      }
      frameHead = h;
    }
    if (headRequest || body.length == 0) {
      return out.writeAndFlush(new DefaultHttp2HeadersFrame(h, true));
    }
    out.write(new DefaultHttp2HeadersFrame(h, false), out.voidPromise());
    return out.writeAndFlush(new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(body), true));
  }

  /**
   * Header fields the gateway writes itself, without Netty's per-character validation: every
   * name is a constant and every value comes from headroom-http's emitters (Structured Fields,
   * integers) or from this module's constants, valid by construction. The validation was 18% of
   * the event loop's time on the refusal path (JFR, 1 ms sampling). Fields copied from a request
   * or an upstream response never go into these.
   */
  static HttpHeaders ownHeaders() {
    return DefaultHttpHeadersFactory.headersFactory().withValidation(false).newHeaders();
  }

  /** Collects header lines, then renders a refusal in the negotiated format. Not thread-safe. */
  static final class Builder {
    private final HttpHeaders headers = ownHeaders();

    void header(String name, String value) {
      headers.add(name, value);
    }

    void set(String name, String value) {
      headers.set(name, value);
    }

    HttpHeaders headers() {
      return headers;
    }

    /**
     * The response, with the fields every refusal carries ({@link RefusalFormat#refusalFields}).
     * For HTML the page links to {@code path}, where the same refusal is served as
     * JSON to a caller that asks for JSON (Graceful Boundaries section 2, HTML 429 responses).
     */
    LocalResponse build(HttpResponseStatus status, RefusalFormat format, Refusal refusal, String path) {
      RefusalFormat.refusalFields(headers::set); // Cache-Control: no-store, Vary: Accept (SC-7)
      return new LocalResponse(status, format.mediaType(), format.body(refusal, path), headers);
    }
  }
}
