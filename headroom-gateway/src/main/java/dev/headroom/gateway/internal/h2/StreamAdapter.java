package dev.headroom.gateway.internal.h2;

import dev.headroom.gateway.internal.admin.GatewayMetrics;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.HttpConversionUtil;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.PromiseCombiner;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One HTTP/2 stream as one exchange of the gateway's HTTP/1.1 path: the first handler of a stream's
 * child channel, in front of the response encoder and the {@code ProxyHandler} an HTTP/1.1 connection
 * runs, so that routes, policies, fields, refusals, discovery, the dashboard and the access log are the
 * same code for both.
 *
 * <p>Inbound, frames become HTTP/1.1 messages (RFC 9113 section 8.3): the request's HEADERS a request
 * head, DATA its content, END_STREAM its end, trailing HEADERS its trailer section. On the way the
 * request is checked as RFC 9113 section 8.1.1 asks, because its fields are written to an HTTP/1.1
 * upstream byte for byte and a value the HTTP/2 framing let through could otherwise split that
 * request (smuggling):
 * <ul>
 *   <li>{@code :method}, {@code :scheme} and {@code :path} present (CONNECT: {@code :authority} alone),
 *       {@code :path} beginning with {@code /} (or {@code *} for OPTIONS), no SP, CR, LF or NUL in any
 *       field value or the path (section 8.2.1);
 *   <li>no connection-specific field ({@code Connection}, {@code Keep-Alive}, {@code Proxy-Connection},
 *       {@code Transfer-Encoding}, {@code Upgrade}), {@code TE} only as {@code trailers} (section
 *       8.2.2), which is then dropped, being hop-by-hop;
 *   <li>{@code :authority} becomes {@code Host}; a {@code Host} beside it that names another
 *       authority is malformed (section 8.3.1);
 *   <li>{@code Cookie} fields, split by the client into crumbs, are joined with "; " (section 8.2.3).
 * </ul>
 * A malformed request is reset with {@code PROTOCOL_ERROR} (section 8.1.1) before it becomes an
 * exchange. A body's end is END_STREAM: a request with no {@code Content-Length} that does not end with
 * its HEADERS is handed on as chunked, which the exchange re-frames for the upstream as it does an
 * HTTP/1.1 chunked body; Netty checks a {@code Content-Length} against the DATA received.
 *
 * <p>Outbound, the common responses arrive as frames already and pass through, their DATA counted
 * for the guard: an upstream response of known length ({@code StreamRelay}) and the gateway's own
 * answers (refusals, errors, health, discovery: {@code LocalResponse}) are written by the exchange as
 * HEADERS and DATA directly. The rest arrive as HTTP/1.1 bytes (chunked and until-close bodies,
 * trailers, the vend rewrite, an interim {@code 100 Continue}) and are parsed again by an HTTP/1.1
 * response decoder, made for the stream when its first bytes come, and written as frames: the head
 * as HEADERS (connection-specific fields dropped by Netty's conversion, {@code :status} from the
 * status line), the content as DATA, the end as END_STREAM (with trailing HEADERS when the upstream
 * sent trailers), an interim 1xx as HEADERS of its own. A response to HEAD has no content whatever
 * its {@code Content-Length} says.
 *
 * <p>State: whether the request head was read (what a second HEADERS is), whether it was HEAD, whether
 * the interim response's end is to be skipped, and the decoder's own once there is one. Bounded: the
 * exchange reads the stream only when its upstream can take the data, so at most one flow-control
 * window waits in the stream channel.
 *
 * <p>Thread-safety: confined to the connection's event loop.
 */
final class StreamAdapter extends ChannelDuplexHandler {
  private static final AsciiString TRAILERS = AsciiString.cached("trailers");
  /** A response head the gateway sends or relays is bounded before it gets here; this bound only guards the parse. */
  private static final int MAX_RESPONSE_HEAD = 1 << 20;

  private final GatewayMetrics metrics;
  private final ConnectionGuard guard;
  /** Whether this stream is the one an {@code Upgrade: h2c} request became (its fields were HTTP/1.1's). */
  private final boolean upgraded;
  private boolean headRead;
  private boolean headRequest;
  private boolean skipInterimEnd;
  /** The HTTP/1.1 response decoder, made when the stream's first response bytes come (most streams have none). */
  private ResponseParser parser;

  StreamAdapter(GatewayMetrics metrics, ConnectionGuard guard, boolean upgraded) {
    this.metrics = metrics;
    this.guard = guard;
    this.upgraded = upgraded;
  }

  // ---- inbound: frames to an HTTP/1.1 request ----

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof Http2HeadersFrame h) {
      if (!headRead) {
        headRead = true;
        Object request = ExtendedConnect.asked(h.headers())
            ? ExtendedConnect.request(ctx, this, guard, h.headers(), h.isEndStream()) // RFC 8441
            : request(h.headers(), h.isEndStream());
        if (request == null) {
          reset(ctx, Http2Error.PROTOCOL_ERROR);
          return;
        }
        metrics.http2Stream();
        ctx.fireChannelRead(request);
      } else if (h.isEndStream()) {
        DefaultLastHttpContent last = new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER);
        if (!trailers(h.headers(), last.trailingHeaders())) {
          reset(ctx, Http2Error.PROTOCOL_ERROR);
          return;
        }
        ctx.fireChannelRead(last);
      } else {
        reset(ctx, Http2Error.PROTOCOL_ERROR); // a second HEADERS must end the stream (section 8.1)
      }
    } else if (msg instanceof Http2DataFrame d) {
      if (!headRead) {
        d.release();
        reset(ctx, Http2Error.PROTOCOL_ERROR);
        return;
      }
      ByteBuf content = d.content().retain();
      boolean end = d.isEndStream();
      d.release();
      ctx.fireChannelRead(end ? new DefaultLastHttpContent(content) : new DefaultHttpContent(content));
    } else {
      ReferenceCountUtil.release(msg); // RST_STREAM closes the channel itself; nothing else concerns the exchange
    }
  }

  private void reset(ChannelHandlerContext ctx, Http2Error error) {
    ctx.writeAndFlush(new DefaultHttp2ResetFrame(error)).addListener(f -> ctx.close());
  }

  /** The request head, or null when the fields are malformed (RFC 9113 section 8.1.1). */
  Object request(Http2Headers in, boolean endStream) {
    CharSequence method = in.method();
    CharSequence path = in.path();
    CharSequence authority = in.authority();
    boolean connect = method != null && HttpMethod.CONNECT.asciiName().contentEquals(method);
    if (method == null || (!connect && (in.scheme() == null || path == null))) {
      return null;
    }
    String uri;
    if (connect) {
      if (authority == null || path != null) {
        return null;
      }
      uri = authority.toString();
    } else {
      uri = path.toString();
      if (!(uri.startsWith("/") || uri.equals("*") && HttpMethod.OPTIONS.asciiName().contentEquals(method))) {
        return null;
      }
    }
    if (!clean(uri, true) || !token(method)) {
      return null;
    }
    HttpHeaders headers = new DefaultHttpHeaders(false);
    StringBuilder cookie = null;
    CharSequence host = null;
    for (Map.Entry<CharSequence, CharSequence> e : in) {
      CharSequence name = e.getKey();
      CharSequence value = e.getValue();
      if (name.length() > 0 && name.charAt(0) == ':') {
        continue; // pseudo-header fields: read above; Netty refuses unknown ones and misplaced ones
      }
      if (!clean(value, false) || connectionSpecific(name, value)) {
        return null;
      }
      if (HttpHeaderNames.TE.contentEqualsIgnoreCase(name)) {
        continue;
      }
      if (upgraded && (HttpConversionUtil.ExtensionHeaderNames.STREAM_ID.text().contentEqualsIgnoreCase(name)
          || HttpConversionUtil.ExtensionHeaderNames.SCHEME.text().contentEqualsIgnoreCase(name))) {
        continue; // Netty's marks on the request an Upgrade turned into stream 1
      }
      if (HttpHeaderNames.HOST.contentEqualsIgnoreCase(name)) {
        if (host != null && !AsciiString.contentEqualsIgnoreCase(host, value)) {
          return null;
        }
        host = value;
        continue;
      }
      if (HttpHeaderNames.COOKIE.contentEqualsIgnoreCase(name)) {
        cookie = cookie == null ? new StringBuilder(value) : cookie.append("; ").append(value);
        continue;
      }
      headers.add(name, value);
    }
    if (authority != null) {
      if (!clean(authority, true) || host != null && !AsciiString.contentEqualsIgnoreCase(host, authority)) {
        return null;
      }
      host = authority;
    }
    if (host != null) {
      headers.set(HttpHeaderNames.HOST, host);
    }
    if (cookie != null) {
      headers.set(HttpHeaderNames.COOKIE, cookie.toString());
    }
    HttpMethod m = HttpMethod.valueOf(method.toString());
    headRequest = m.equals(HttpMethod.HEAD);
    if (endStream) {
      return new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, m, uri, Unpooled.EMPTY_BUFFER, headers,
          new DefaultHttpHeaders(false));
    }
    if (!headers.contains(HttpHeaderNames.CONTENT_LENGTH)) {
      headers.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED); // the body ends with the stream
    }
    return new DefaultHttpRequest(HttpVersion.HTTP_1_1, m, uri, headers);
  }

  /** Copies a trailer section; false when it is malformed (pseudo-header fields, unclean values). */
  private static boolean trailers(Http2Headers in, HttpHeaders out) {
    for (Map.Entry<CharSequence, CharSequence> e : in) {
      CharSequence name = e.getKey();
      if (name.length() > 0 && name.charAt(0) == ':' || !clean(e.getValue(), false)
          || connectionSpecific(name, e.getValue())) {
        return false;
      }
      out.add(name, e.getValue());
    }
    return true;
  }

  /** Whether a field is connection-specific (RFC 9113 section 8.2.2): a malformed request. */
  private static boolean connectionSpecific(CharSequence name, CharSequence value) {
    return HttpHeaderNames.CONNECTION.contentEqualsIgnoreCase(name)
        || HttpHeaderNames.KEEP_ALIVE.contentEqualsIgnoreCase(name)
        || HttpHeaderNames.PROXY_CONNECTION.contentEqualsIgnoreCase(name)
        || HttpHeaderNames.TRANSFER_ENCODING.contentEqualsIgnoreCase(name)
        || HttpHeaderNames.UPGRADE.contentEqualsIgnoreCase(name)
        || HttpHeaderNames.TE.contentEqualsIgnoreCase(name) && !TRAILERS.contentEqualsIgnoreCase(value);
  }

  /**
   * Whether a value can be written into an HTTP/1.1 head as it is: no NUL, CR or LF (RFC 9113 section
   * 8.2.1), nor, in a request target or authority ({@code noSpace}), a space or other control.
   */
  private static boolean clean(CharSequence v, boolean noSpace) {
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c == 0 || c == '\r' || c == '\n' || noSpace && (c <= ' ' || c == 0x7f)) {
        return false;
      }
    }
    return true;
  }

  /** Whether a method is a token (RFC 9110 section 9.1). */
  static boolean token(CharSequence m) {
    if (m.length() == 0) {
      return false;
    }
    for (int i = 0; i < m.length(); i++) {
      char c = m.charAt(i);
      boolean ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  // ---- outbound: HTTP/1.1 response bytes to frames ----

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    if (!(msg instanceof ByteBuf b)) {
      if (msg instanceof Http2DataFrame d) {
        guard.dataSent(d.content().readableBytes());
      }
      ctx.write(msg, promise); // frames the exchange wrote directly, or this adapter's own (RST_STREAM)
      return;
    }
    if (parser == null) {
      parser = new ResponseParser();
    }
    List<Object> parsed = new ArrayList<>(4);
    try {
      parser.feed(ctx, b, parsed);
    } catch (Exception e) {
      parsed.forEach(ReferenceCountUtil::release);
      promise.setFailure(e);
      reset(ctx, Http2Error.INTERNAL_ERROR);
      return;
    } finally {
      b.release();
    }
    List<Object> frames = new ArrayList<>(parsed.size());
    for (int i = 0; i < parsed.size(); i++) {
      Object o = parsed.get(i);
      if (o instanceof HttpMessage m && !m.decoderResult().isSuccess()) {
        parsed.subList(i, parsed.size()).forEach(ReferenceCountUtil::release);
        frames.forEach(ReferenceCountUtil::release);
        promise.setFailure(m.decoderResult().cause());
        reset(ctx, Http2Error.INTERNAL_ERROR);
        return;
      }
      if (o instanceof HttpResponse r) {
        boolean interim = r.status().codeClass() == HttpStatusClass.INFORMATIONAL;
        boolean endsHere = !interim && i + 1 < parsed.size() && parsed.get(i + 1) instanceof LastHttpContent l
            && !l.content().isReadable() && l.trailingHeaders().isEmpty();
        Http2Headers h = HttpConversionUtil.toHttp2Headers(r, false);
        h.remove(HttpConversionUtil.ExtensionHeaderNames.STREAM_ID.text());
        frames.add(new DefaultHttp2HeadersFrame(h, endsHere));
        if (endsHere) {
          ((LastHttpContent) parsed.get(i + 1)).release();
          i++;
        } else if (interim) {
          skipInterimEnd = true;
        }
      }
      if (o instanceof HttpContent c) {
        if (skipInterimEnd && c instanceof LastHttpContent) {
          skipInterimEnd = false;
          c.release();
          continue;
        }
        if (c instanceof LastHttpContent l && !l.trailingHeaders().isEmpty()) {
          if (l.content().isReadable()) {
            guard.dataSent(l.content().readableBytes());
            frames.add(new DefaultHttp2DataFrame(l.content(), false));
          } else {
            l.release();
          }
          frames.add(new DefaultHttp2HeadersFrame(HttpConversionUtil.toHttp2Headers(l.trailingHeaders(), false), true));
        } else if (c instanceof LastHttpContent || c.content().isReadable()) {
          guard.dataSent(c.content().readableBytes());
          frames.add(new DefaultHttp2DataFrame(c.content(), c instanceof LastHttpContent));
        } else {
          c.release();
        }
      }
    }
    if (frames.isEmpty()) {
      promise.setSuccess();
      return;
    }
    if (frames.size() == 1) {
      ctx.write(frames.get(0), promise);
      return;
    }
    PromiseCombiner all = new PromiseCombiner(ctx.executor());
    for (Object f : frames) {
      all.add(ctx.write(f));
    }
    all.finish(promise);
  }

  /**
   * Netty's HTTP/1.1 response decoder, fed the exchange's bytes as they are written: its cumulation is
   * this parser's own, its output the messages of the bytes fed so far.
   */
  private final class ResponseParser extends HttpResponseDecoder {
    private ByteBuf cumulation;

    ResponseParser() {
      super(4096, MAX_RESPONSE_HEAD, 1 << 16);
    }

    @Override
    protected boolean isContentAlwaysEmpty(HttpMessage msg) {
      return headRequest || super.isContentAlwaysEmpty(msg);
    }

    void feed(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
      ByteBuf buf;
      if (cumulation == null) {
        buf = in.retain();
      } else {
        buf = ctx.alloc().buffer(cumulation.readableBytes() + in.readableBytes());
        buf.writeBytes(cumulation).writeBytes(in);
        cumulation.release();
        cumulation = null;
      }
      try {
        while (buf.isReadable()) {
          int before = buf.readableBytes();
          int produced = out.size();
          decode(ctx, buf, out);
          if (out.size() == produced && buf.readableBytes() == before) {
            break;
          }
        }
      } finally {
        if (buf.isReadable()) {
          cumulation = ctx.alloc().buffer(buf.readableBytes()).writeBytes(buf);
        }
        buf.release();
      }
    }

    void discard() {
      if (cumulation != null) {
        cumulation.release();
        cumulation = null;
      }
    }
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    if (parser != null) {
      parser.discard();
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (parser != null) {
      parser.discard();
    }
    ctx.fireChannelInactive();
  }
}
