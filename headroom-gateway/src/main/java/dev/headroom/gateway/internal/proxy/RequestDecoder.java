package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.admin.GatewayMetrics;
import dev.headroom.gateway.internal.proxy.HttpVocabulary.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Netty's request decoder, with two additions.
 *
 * <p>A request without a body is handed on as one message. For such a request (most GETs) the
 * decoder emits the head and then an empty last content; each message costs a pass through the
 * pipeline and the proxy's queue. Here the two become one {@link FullHttpRequest} with no content,
 * sharing the decoded head's fields, so the proxy sees a request that is complete when it starts
 * (it already treats a {@link LastHttpContent} request so).
 *
 * <p>A request whose body length the gateway and an upstream could read differently is failed
 * (its decoder result carries a {@link Refusal}), so the proxy answers it and closes the
 * connection instead of forwarding it (RFC 9112 sections 6.1 and 6.3). Netty reads a
 * {@code Transfer-Encoding} as chunked when any of its list members is {@code chunked}, and drops a
 * {@code Content-Length} beside it; what it would let through and the RFC does not:
 * <ul>
 *   <li>a final coding that is not {@code chunked} ({@code xchunked}, {@code chunked, identity}):
 *       the body length cannot be determined, 400 (section 6.3, item 4);
 *   <li>{@code chunked} more than once, across lines too: 400 (section 6.1 forbids it);
 *   <li>a {@code Content-Length} beside {@code Transfer-Encoding}: a smuggling attempt, refused
 *       with 400 as section 6.1 allows (it requires the connection to close either way);
 *   <li>{@code Transfer-Encoding} in an HTTP/1.0 request: faulty framing (section 6.1), 400;
 *   <li>codings before {@code chunked} ({@code gzip, chunked}): the gateway re-frames request
 *       bodies and would drop the label, so they are not understood: 501 (section 6.1).
 * </ul>
 * Field values reach this check with their surrounding whitespace trimmed by Netty, and list
 * members are split on commas with optional whitespace (RFC 9110 section 5.6.1), so
 * {@code " chunked"} and {@code "\tchunked"} are {@code chunked}. A request that passes has exactly
 * one body boundary, which the gateway re-frames for the upstream itself.
 */
public final class RequestDecoder extends HttpRequestDecoder {

  /** A request refused before it becomes an exchange: what the proxy answers, then it closes. */
  static final class Refusal extends Exception {
    private static final long serialVersionUID = 1L;
    private final transient GatewayError error;

    Refusal(GatewayError error) {
      super(error.detail(), null, false, false);
      this.error = error;
    }

    GatewayError error() {
      return error;
    }
  }

  /** Set when Netty dropped a Content-Length beside Transfer-Encoding in the head being decoded. */
  private boolean contentLengthBesideTransferEncoding;

  private final GatewayMetrics metrics;

  /** A decoder with Netty's limits ({@code limits} of the configuration), counting reads in {@code metrics}. */
  public RequestDecoder(int maxInitialLineLength, int maxHeaderSize, int maxChunkSize, GatewayMetrics metrics) {
    super(maxInitialLineLength, maxHeaderSize, maxChunkSize);
    this.metrics = metrics;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (msg instanceof ByteBuf b) {
      metrics.clientBytes(b.readableBytes());
    }
    super.channelRead(ctx, msg);
  }

  @Override
  protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
    contentLengthBesideTransferEncoding = true;
    super.handleTransferEncodingChunkedWithContentLength(message);
  }

  /**
   * Whether bytes of a request arrived since the last request was handed on whole. Netty consumes
   * a head's complete lines as it parses them (keeping only an incomplete line in its buffer), so
   * a head sent up to a line's end and then stalled leaves no bytes behind, but a request begun.
   */
  private boolean requestBegun;

  /** Whether bytes of a request not yet decoded whole were read (a head still arriving, say). */
  boolean holdsPartialRequest() {
    return requestBegun || actualReadableBytes() > 0;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
    int before = out.size();
    int readable = buffer.readableBytes();
    super.decode(ctx, buffer, out);
    if (out.size() > before) {
      // a message's end is always the last thing one decode call hands on
      requestBegun = !(out.get(out.size() - 1) instanceof LastHttpContent);
    } else if (buffer.readableBytes() != readable || readable > 0) {
      requestBegun = true;
    }
    for (int i = before; i < out.size(); i++) {
      if (out.get(i) instanceof HttpRequest r) {
        boolean clBesideTe = contentLengthBesideTransferEncoding;
        contentLengthBesideTransferEncoding = false;
        GatewayError refused = r.decoderResult().isSuccess() ? framingRefusal(r, clBesideTe) : null;
        if (refused != null) {
          r.setDecoderResult(DecoderResult.failure(new Refusal(refused)));
          return;
        }
      }
    }
    if (out.size() == before + 2
        && out.get(before + 1) == LastHttpContent.EMPTY_LAST_CONTENT
        && out.get(before) instanceof HttpRequest r
        && !(r instanceof FullHttpRequest)
        && r.decoderResult().isSuccess()) {
      DefaultFullHttpRequest full = new DefaultFullHttpRequest(r.protocolVersion(), r.method(), r.uri(),
          Unpooled.EMPTY_BUFFER, r.headers(), EmptyHttpHeaders.INSTANCE);
      full.setDecoderResult(r.decoderResult());
      out.set(before, full);
      out.remove(before + 1);
    }
  }

  /** Why the request's framing is refused (RFC 9112 sections 6.1 and 6.3), or null when it is sound. */
  static GatewayError framingRefusal(HttpRequest r, boolean contentLengthBesideTransferEncoding) {
    if (!r.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)) {
      return null; // most requests: one lookup, no list
    }
    List<String> lines = r.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING);
    String joined = String.join(", ", lines);
    // quoted in the answer, bounded: the field may be as long as the head
    String value = joined.length() <= 80 ? joined : joined.substring(0, 80) + "...";
    if (r.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
      return GatewayMessages.transferEncodingInHttp10(value);
    }
    if (contentLengthBesideTransferEncoding) {
      return GatewayMessages.contentLengthBesideTransferEncoding(value);
    }
    List<String> codings = new ArrayList<>();
    for (String line : lines) {
      for (String member : line.split(",")) {
        String c = member.strip();
        if (!c.isEmpty()) {
          codings.add(c.toLowerCase(Locale.ROOT));
        }
      }
    }
    if (codings.isEmpty() || !codings.get(codings.size() - 1).equals("chunked")) {
      return GatewayMessages.transferEncodingNotChunked(value);
    }
    if (codings.indexOf("chunked") != codings.size() - 1) {
      return GatewayMessages.chunkedTwice(value);
    }
    if (codings.size() > 1) {
      return GatewayMessages.codingsBeforeChunked(value);
    }
    return null;
  }
}
