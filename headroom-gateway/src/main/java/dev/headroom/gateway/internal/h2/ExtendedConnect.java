package dev.headroom.gateway.internal.h2;

import dev.headroom.gateway.internal.proxy.TunnelRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.util.Map;

/**
 * WebSocket over HTTP/2, by RFC 8441 ("Bootstrapping WebSockets with HTTP/2"): an extended CONNECT
 * stream becomes the HTTP/1.1 WebSocket handshake its upstream understands, and once the upstream
 * switches, the stream's DATA frames are the tunnel's bytes.
 *
 * <p>How a stream gets here. Every HTTP/2 connection advertises {@code SETTINGS_ENABLE_CONNECT_PROTOCOL
 * = 1} ({@link #advertise}, section 3): the setting says the gateway understands the method, and
 * whether a route allows a tunnel is for the route to say, per request, as it is for an HTTP/1.1
 * {@code Upgrade} (which the gateway reads on every route). It is sent whether or not a route
 * allows {@code websocket} now, because a reload may add one to connections already open and the
 * setting cannot be withdrawn once sent (section 3). A request whose HEADERS carry {@code :protocol}
 * is handed here by {@link StreamAdapter} ({@link #request}): section 4 asks for {@code :method
 * CONNECT} with {@code :scheme}, {@code :path} and {@code :authority}; anything else is malformed
 * (reset with {@code PROTOCOL_ERROR}), and so is a CONNECT that ends its stream with its HEADERS
 * (a tunnel that can carry nothing from its client). The request is checked as any other
 * ({@link StreamAdapter#request}) and becomes a {@link TunnelRequest}: a GET of {@code :path}
 * offering {@code Upgrade: PROTOCOL}, which the exchange path runs as it runs an HTTP/1.1
 * handshake: the route's match (as the GET it is), its {@code upgrade} list (the ordinary 400
 * {@code upgrade_not_allowed} when the protocol is not there), its policies (the ordinary 429
 * with its RateLimit fields and Graceful Boundaries body), then the upstream. For {@code
 * websocket} the fields of section 5 pass as they came ({@code Sec-WebSocket-Protocol}, {@code
 * Sec-WebSocket-Extensions}, {@code Origin}) and the key and version the HTTP/2 client does not
 * send are added. Plain CONNECT, without {@code :protocol}, does not come here.
 *
 * <p>The answer. The upstream's 101 reaches the stream as an interim response head; this handler,
 * in front of the adapter, makes it {@code :status 200} (section 5: a 2xx opens the tunnel; {@code
 * Sec-WebSocket-Accept} is not used over HTTP/2, and connection-specific fields such as {@code
 * Upgrade} have no place in HTTP/2, RFC 9113 section 8.2.2) and takes the adapter out of the
 * stream: from then on the stream is not HTTP. The exchange hands the stream to a {@code Tunnel}
 * whose end sits after this handler: a DATA frame's payload is read as bytes, bytes written
 * become DATA frames. Anything else (a refusal, a relayed 4xx, a 502 for an upstream that did not
 * switch) is an ordinary response and passes as it came.
 *
 * <p>Ends (section 5: an orderly TCP close is END_STREAM, a reset is RST_STREAM {@code CANCEL}):
 * <ul>
 *   <li>the client's END_STREAM (on DATA or trailing HEADERS) closes the client side of the
 *       tunnel: what came before it is written to the upstream, then the upstream connection
 *       closes (the tunnel has no half-close) and the stream ends with END_STREAM;
 *   <li>the client's RST_STREAM closes the stream channel (Netty), which closes the tunnel and the
 *       upstream connection;
 *   <li>the upstream's close, a drain's cut, and {@code timeouts.tunnelIdle} close the stream
 *       channel: END_STREAM is sent first ({@link #close}), then Netty resets the stream with
 *       {@code CANCEL} if the client has not ended its side;
 *   <li>DATA or HEADERS from the client before the 200 are reset with {@code PROTOCOL_ERROR}: a
 *       WebSocket client sends nothing until the handshake is answered (RFC 6455 section 4.1);
 *       after a refusal has ended the stream's response, they are dropped.
 * </ul>
 *
 * <p>Back-pressure and flow control: the stream channel reads only when the tunnel asks for it
 * (the upstream can take more), and Netty returns the stream's window to the client as frames are
 * read, so the client can send at most a window beyond what the upstream took; the stream channel
 * is writable only while the stream's and the connection's windows are open and its buffer below
 * the high-water mark, so the tunnel reads the upstream only as fast as the client's windows allow.
 *
 * <p>State: whether the tunnel is open (the 200 sent), whether END_STREAM was sent.
 *
 * <p>Thread-safety: confined to the connection's event loop.
 */
final class ExtendedConnect extends ChannelDuplexHandler {
  /** The handler's name in a stream's pipeline. */
  static final String NAME = "h2-extended-connect";
  /** {@code SETTINGS_ENABLE_CONNECT_PROTOCOL} (RFC 8441 section 3, IANA registry value 0x8). */
  static final char SETTINGS_ENABLE_CONNECT_PROTOCOL = 0x8;
  private static final AsciiString PROTOCOL = Http2Headers.PseudoHeaderName.PROTOCOL.value();
  private static final AsciiString OK = AsciiString.cached("200");

  private final ConnectionGuard guard;
  /** Whether the 200 was sent: the stream carries the tunnel's bytes from then on. */
  private boolean open;
  /** Whether the stream's END_STREAM was sent. */
  private boolean ended;

  private ExtendedConnect(ConnectionGuard guard) {
    this.guard = guard;
  }

  /** Adds {@code SETTINGS_ENABLE_CONNECT_PROTOCOL = 1} (RFC 8441 section 3) to the settings a connection sends. */
  static void advertise(Http2Settings settings) {
    settings.put(SETTINGS_ENABLE_CONNECT_PROTOCOL, Long.valueOf(1));
  }

  /** Whether a request's HEADERS are an extended CONNECT: they carry {@code :protocol} (RFC 8441 section 4). */
  static boolean asked(Http2Headers h) {
    return h.contains(PROTOCOL);
  }

  /**
   * The request an extended CONNECT's HEADERS {@code in} become, with this handler put in front of
   * {@code adapter} (whose context is {@code ctx}); null when they are malformed (RFC 8441 section 4).
   */
  static FullHttpRequest request(ChannelHandlerContext ctx, StreamAdapter adapter, ConnectionGuard guard,
      Http2Headers in, boolean endStream) {
    CharSequence protocol = in.get(PROTOCOL);
    if (endStream || in.method() == null || !HttpMethod.CONNECT.asciiName().contentEquals(in.method())
        || in.scheme() == null || in.path() == null || in.authority() == null || !token(protocol)) {
      return null;
    }
    Http2Headers get = new DefaultHttp2Headers(false);
    for (Map.Entry<CharSequence, CharSequence> e : in) {
      CharSequence name = e.getKey();
      if (!PROTOCOL.contentEquals(name) && !Http2Headers.PseudoHeaderName.METHOD.value().contentEquals(name)) {
        get.add(name, e.getValue());
      }
    }
    get.method(HttpMethod.GET.asciiName());
    if (!(adapter.request(get, true) instanceof FullHttpRequest checked)) {
      return null;
    }
    TunnelRequest r = TunnelRequest.upgrade(protocol.toString(), checked.uri(), checked.headers());
    ctx.pipeline().addBefore(ctx.name(), NAME, new ExtendedConnect(guard));
    return r;
  }

  private static boolean token(CharSequence protocol) {
    return protocol != null && StreamAdapter.token(protocol);
  }

  // ---- inbound: DATA frames to the tunnel's bytes ----

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof Http2ResetFrame) {
      ReferenceCountUtil.release(msg); // Netty closes the stream channel, which ends the tunnel
      return;
    }
    if (!open) {
      if (ended && (msg instanceof Http2DataFrame || msg instanceof Http2HeadersFrame)) {
        ReferenceCountUtil.release(msg); // after a refusal's end: the client ends its side, nothing to do
        return;
      }
      if (msg instanceof Http2DataFrame || msg instanceof Http2HeadersFrame) {
        ReferenceCountUtil.release(msg);
        ctx.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.PROTOCOL_ERROR)).addListener(f -> ctx.close());
        return;
      }
      ctx.fireChannelRead(msg);
      return;
    }
    if (msg instanceof Http2DataFrame d) {
      ByteBuf payload = d.content().retain();
      boolean end = d.isEndStream();
      d.release();
      ctx.fireChannelRead(payload);
      if (end) {
        ctx.channel().close();
      }
    } else if (msg instanceof Http2HeadersFrame h) {
      if (h.isEndStream()) {
        ctx.channel().close(); // trailers end the client's side; there is nothing in them to forward
      } else {
        ctx.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.PROTOCOL_ERROR)).addListener(f -> ctx.close());
      }
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  // ---- outbound: the 101 to a 200, then the tunnel's bytes to DATA frames ----

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    if (open && msg instanceof ByteBuf b) {
      if (!b.isReadable() || ended) {
        b.release(); // the tunnel's flush before it closes; the end is sent by close()
        promise.setSuccess();
        return;
      }
      guard.dataSent(b.readableBytes());
      ctx.write(new DefaultHttp2DataFrame(b, false), promise);
      return;
    }
    if (!open && msg instanceof Http2HeadersFrame h && AsciiString.contentEquals("101", h.headers().status())) {
      Http2Headers headers = h.headers();
      headers.status(OK);
      headers.remove(HttpHeaderNames.SEC_WEBSOCKET_ACCEPT);
      headers.remove(HttpHeaderNames.UPGRADE);
      headers.remove(HttpHeaderNames.CONNECTION);
      open = true;
      ctx.pipeline().remove(StreamAdapter.class); // the stream is no longer HTTP: this handler translates it
      ctx.write(h, promise);
      return;
    }
    if (msg instanceof Http2DataFrame d && d.isEndStream() || msg instanceof Http2HeadersFrame f && f.isEndStream()) {
      ended = true;
    }
    ctx.write(msg, promise);
  }

  /** A tunnel's end closes the stream: END_STREAM first, the orderly end of RFC 8441 section 5. */
  @Override
  public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
    if (!open || ended || !ctx.channel().isActive()) {
      ctx.close(promise);
      return;
    }
    ended = true;
    ctx.writeAndFlush(new DefaultHttp2DataFrame(Unpooled.EMPTY_BUFFER, true)).addListener(f -> ctx.close(promise));
  }
}
