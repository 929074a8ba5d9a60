package dev.headroom.gateway.internal.h2;

import dev.headroom.gateway.config.Limits;
import dev.headroom.gateway.internal.admin.GatewayMetrics;
import dev.headroom.gateway.internal.proxy.ClientTransport;
import dev.headroom.gateway.internal.proxy.ConnectionPeer;
import dev.headroom.gateway.internal.proxy.GatewayState;
import dev.headroom.gateway.internal.proxy.ProxyHandler;
import dev.headroom.gateway.internal.proxy.RequestDecoder;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2ServerUpgradeCodec;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.HttpConversionUtil;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.function.Consumer;

/**
 * HTTP/2 towards clients: the one place that installs it on a client connection's pipeline.
 * <ul>
 *   <li>{@link #install}: the connection's next bytes are the client preface (RFC 9113 section 3.4),
 *       because the client said so by prior knowledge, or a TLS handshake chose {@code h2} by ALPN
 *       (section 3.2): the guard, Netty's frame codec and its multiplexer, one child channel per stream;
 *   <li>{@link #cleartext}: a cleartext port that speaks both: {@link PrefaceDetector} tells the preface
 *       from HTTP/1.1, and an HTTP/1.1 connection may still switch by {@code Upgrade: h2c} (RFC 7540
 *       section 3.2; RFC 9113 deprecates it, curl and the JDK client still use it);
 *   <li>{@link #retire}: a draining gateway's GOAWAY.
 * </ul>
 * Every stream runs the handlers an HTTP/1.1 connection runs, behind a {@link StreamAdapter}: the
 * same exchange path, upstreams over HTTP/1.1 from the pool; its handler writes the common responses
 * as frames ({@code ProxyHandler.stream}), and its timeouts share one timer per connection
 * ({@link StreamTimers}).
 *
 * <p>Settings sent: {@code SETTINGS_MAX_CONCURRENT_STREAMS} from {@code limits.maxConcurrentStreams},
 * {@code SETTINGS_MAX_HEADER_LIST_SIZE} from {@code limits.maxHeaderBytes} (the bound an HTTP/1.1 head
 * has), Netty's defaults otherwise (a 64 KiB stream window, 16 KiB frames, a 4 KiB HPACK table), and
 * {@code SETTINGS_ENABLE_CONNECT_PROTOCOL} (WebSocket over HTTP/2, RFC 8441: {@link ExtendedConnect}). Netty's
 * own bounds on RST_STREAM frames and empty DATA frames are off: the {@link ConnectionGuard} bounds and
 * counts both; Netty still bounds the control frames queued for a client that does not read
 * ({@code Http2ControlFrameLimitEncoder}, 10000) and the header list it decodes.
 *
 * <p>Thread-safety: stateless; what it installs is confined to each connection's event loop.
 */
public final class Http2Front {
  private Http2Front() {}

  /** How the HTTP/2 connection began, as {@code headroom_http2_connections_total{start}} counts it. */
  public static final String PRIOR_KNOWLEDGE = "prior-knowledge";
  /** A TLS handshake chose {@code h2} by ALPN. */
  public static final String ALPN = "alpn";
  private static final String UPGRADE = "upgrade";
  private static final String FLUSHES = "h2-flushes";
  /**
   * Flushes of the connection's streams written to the socket as one: at most this many stream flushes
   * before the connection's socket is written (Netty's {@link FlushConsolidationHandler} bound).
   */
  static final int FLUSHES_PER_WRITE = 256;

  /**
   * Installs HTTP/2 at the end of {@code pipeline}, whose channel's next bytes are the client preface;
   * {@code start} says how it began ({@link #PRIOR_KNOWLEDGE}, {@link #ALPN}). The channel is read from
   * then on continuously. {@code transport}: what the connection's TLS told (every stream's
   * exchange forwards its {@code proto} and partitions by its client certificate).
   */
  public static void install(ChannelPipeline pipeline, GatewayState state, String start,
      ClientTransport transport) {
    Parts parts = parts(state, transport, pipeline.channel());
    pipeline.addLast(ConnectionGuard.NAME, parts.guard);
    pipeline.addLast(FLUSHES, consolidatedFlushes());
    pipeline.addLast("h2", parts.codec);
    pipeline.addLast("h2-streams", parts.multiplex);
    state.metrics().http2Connection(start);
  }

  /**
   * Makes a cleartext connection speak HTTP/1.1 or HTTP/2: {@code http1} installs the HTTP/1.1 handlers
   * (a {@link RequestDecoder}, the {@link ProxyHandler#CODEC} encoder and a {@link ProxyHandler}) when
   * the client does not begin with the preface, and an {@code Upgrade: h2c} request switches such a
   * connection to HTTP/2, the request becoming stream 1.
   */
  public static void cleartext(ChannelPipeline pipeline, GatewayState state, ClientTransport transport,
      Consumer<ChannelPipeline> http1) {
    Runnable h1 = () -> {
      http1.accept(pipeline);
      pipeline.addAfter(ProxyHandler.CODEC, "h2c-upgrade", upgrade(pipeline, state, transport));
    };
    Runnable h2 = () -> install(pipeline, state, PRIOR_KNOWLEDGE, transport);
    pipeline.addLast("h2-preface", new PrefaceDetector(h1, h2, state.timers(),
        state.snapshot().config().timeouts().idle()));
  }

  /**
   * Begins a drain on an HTTP/2 connection: GOAWAY, and the connection closes once its open streams
   * are done. Returns false when {@code ch} does not speak HTTP/2.
   */
  public static boolean retire(Channel ch) {
    ConnectionGuard guard = ch.pipeline().get(ConnectionGuard.class);
    if (guard == null) {
      return false;
    }
    ch.eventLoop().execute(guard::retire);
    return true;
  }

  /**
   * One write to the socket for the flushes of many streams. Every stream is its own exchange and
   * flushes its child channel when its upstream's read batch ends (or its answer is written); each
   * such flush reached the connection's socket as a write system call of its own, so 32 streams
   * answered in one turn of the event loop cost 32 writes where an HTTP/1.1 connection per stream
   * costs the same, and the frames of one connection were split over them. Netty's handler, in front
   * of the codec, holds a flush while the connection's read is in progress (until its read completes)
   * and otherwise until the event loop's current turn ends (a task queued behind the reads of that
   * turn) or {@link #FLUSHES_PER_WRITE} flushes wait, so no frame waits for a timer or for another
   * read. It flushes at once when the channel stops being writable or closes.
   */
  private static FlushConsolidationHandler consolidatedFlushes() {
    return new FlushConsolidationHandler(FLUSHES_PER_WRITE, true);
  }

  /** The handlers of one HTTP/2 connection. */
  private record Parts(ConnectionGuard guard, Http2FrameCodec codec, Http2MultiplexHandler multiplex) {}

  private static Parts parts(GatewayState state, ClientTransport transport, Channel connection) {
    Limits limits = state.snapshot().config().limits();
    GatewayMetrics metrics = state.metrics();
    Http2Settings settings = Http2Settings.defaultSettings()
        .maxConcurrentStreams(limits.maxConcurrentStreams())
        .maxHeaderListSize(Math.max(limits.maxHeaderBytes(), Http2CodecUtil.MIN_HEADER_LIST_SIZE));
    ExtendedConnect.advertise(settings); // RFC 8441 section 3
    Http2FrameCodec codec = new CountingFrameCodec.Builder(metrics)
        .initialSettings(settings)
        .validateHeaders(true)
        .decoderEnforceMaxRstFramesPerWindow(0, 0)
        .decoderEnforceMaxConsecutiveEmptyDataFrames(0)
        // a close (a drain's cut, say) closes now; GOAWAY is sent by the guard or on a connection error
        .decoupleCloseAndGoAway(true)
        .build();
    ConnectionGuard guard = new ConnectionGuard(metrics, state.timers(), codec.connection(),
        limits.maxConcurrentStreams(), limits.maxHeaderBytes(), state.snapshot().config().timeouts().idle());
    ConnectionPeer peer = new ConnectionPeer(connection.remoteAddress());
    StreamTimers timers = new StreamTimers(state.timers(), connection.eventLoop());
    Http2MultiplexHandler multiplex = new Http2MultiplexHandler(
        new Streams(state, guard, peer, timers, false, transport),
        new Streams(state, guard, peer, timers, true, transport));
    return new Parts(guard, codec, multiplex);
  }

  /** The handler that switches an HTTP/1.1 connection on {@code Upgrade: h2c}. */
  private static ChannelHandler upgrade(ChannelPipeline pipeline, GatewayState state,
      ClientTransport transport) {
    HttpServerUpgradeHandler.SourceCodec from = ctx -> {
      pipeline.remove(ProxyHandler.class);
      pipeline.remove(ProxyHandler.CODEC);
      pipeline.remove(RequestDecoder.class); // what it read past the request goes on to the HTTP/2 handlers
    };
    HttpServerUpgradeHandler.UpgradeCodecFactory to = protocol -> {
      if (!AsciiString.contentEquals(Http2CodecUtil.HTTP_UPGRADE_PROTOCOL_NAME, protocol)) {
        return null;
      }
      Parts parts = parts(state, transport, pipeline.channel());
      return new Http2ServerUpgradeCodec(parts.codec, parts.multiplex) {
        @Override
        public void upgradeTo(ChannelHandlerContext ctx, FullHttpRequest request) {
          // the request becomes stream 1 through Netty's conversion, which needs the scheme
          request.headers().set(HttpConversionUtil.ExtensionHeaderNames.SCHEME.text(), "http");
          super.upgradeTo(ctx, request);
          String codecName = ctx.pipeline().context(parts.codec).name();
          ctx.pipeline().addBefore(codecName, FLUSHES, consolidatedFlushes());
          ctx.pipeline().addBefore(FLUSHES, ConnectionGuard.NAME, parts.guard);
          state.metrics().http2Connection(UPGRADE);
        }
      };
    };
    return new FirstRequestUpgrade(from, to);
  }

  /**
   * Netty's upgrade handler, on the connection's first request only and only when it has no body: the
   * gateway's request decoder hands such a request on whole, which Netty's aggregator would pass by, and a
   * request with a body is served over HTTP/1.1 (a server may ignore {@code Upgrade}, RFC 9110 section
   * 7.8) rather than held in memory until the switch. After the first request the handler leaves the
   * pipeline.
   */
  private static final class FirstRequestUpgrade extends HttpServerUpgradeHandler {
    FirstRequestUpgrade(SourceCodec from, UpgradeCodecFactory to) {
      super(from, to, 0);
    }

    @Override
    public boolean acceptInboundMessage(Object msg) {
      return msg instanceof HttpObject;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, HttpObject msg, List<Object> out) throws Exception {
      if (msg instanceof FullHttpRequest r && r.headers().contains(HttpHeaderNames.UPGRADE)
          && !r.content().isReadable()) {
        super.decode(ctx, msg, out); // upgrades (and leaves the pipeline), or hands the request on
      } else {
        out.add(ReferenceCountUtil.retain(msg));
      }
      if (msg instanceof HttpRequest && !ctx.isRemoved()) {
        ctx.pipeline().remove(this);
      }
    }
  }

  /**
   * Builds a stream's child channel: the adapter, then what an HTTP/1.1 connection runs, its handler
   * sharing what is derived from the connection's peer ({@link ConnectionPeer}) and the connection's
   * timers ({@link StreamTimers}) with the connection's other streams. One instance serves every stream
   * of the connection: it is added to each new child pipeline by Netty's multiplexer and puts the
   * stream's own handlers in its place. Not a {@link io.netty.channel.ChannelInitializer}, which keeps
   * the contexts it initialises in a concurrent set and queues a task per channel to forget each
   * (a stream lives a few hundred microseconds under load, so both were paid per request).
   */
  @ChannelHandler.Sharable
  private static final class Streams extends ChannelHandlerAdapter {
    private final GatewayState state;
    private final ConnectionGuard guard;
    private final ConnectionPeer peer;
    private final StreamTimers timers;
    private final boolean upgraded;
    private final ClientTransport transport;

    Streams(GatewayState state, ConnectionGuard guard, ConnectionPeer peer, StreamTimers timers, boolean upgraded,
        ClientTransport transport) {
      this.state = state;
      this.guard = guard;
      this.peer = peer;
      this.timers = timers;
      this.upgraded = upgraded;
      this.transport = transport;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      Channel ch = ctx.channel();
      ch.config().setAutoRead(false); // the exchange reads the stream as its upstream takes the data
      ChannelPipeline p = ctx.pipeline();
      // added behind this handler, which then leaves: Netty calls this as the stream's channel registers,
      // before any event reaches its pipeline
      String self = ctx.name();
      p.addAfter(self, "h2-stream", new StreamAdapter(state.metrics(), guard, upgraded));
      p.addAfter("h2-stream", ProxyHandler.CODEC, new HttpResponseEncoder());
      p.addAfter(ProxyHandler.CODEC, "proxy", ProxyHandler.stream(state, transport, peer, timers));
      p.remove(this);
    }
  }
}
