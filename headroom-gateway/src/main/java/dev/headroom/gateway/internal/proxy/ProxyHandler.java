package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.partition.PeerKeys;
import dev.headroom.gateway.config.Timeouts;
import dev.headroom.gateway.internal.LingeringClose;
import dev.headroom.gateway.internal.Timers;
import dev.headroom.gateway.internal.wire.UpstreamRequestWriter;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection: its channel events, the requests pipelined on it, and its timers. Each
 * request becomes an {@link ProxyExchange}, served one at a time; the request path, in calls:
 *
 * <pre>
 *   ProxyHandler (this connection: reads, pipelining, timers)
 *     -> ProxyExchange (Triage.of, pure: Local | Forward | Vend) .begin
 *     -> GateStep (headroom-http's Gate) | VendCall (the store) -> UpstreamLeg + UpstreamRequestWriter (head and body upstream)
 *     -> ResponseRelay (RawRelay | ReframedRelay | VendRelay | NormalisedErrorRelay) -> client
 *     -> ProxyExchange.end -> ProxyHandler.finished: the next request, or LingeringClose
 * </pre>
 *
 * <p>Closing: a connection that ends after a response (one sent with {@code Connection: close}:
 * every 400, 408, 413, 431...) or after {@code timeouts.idle} closes through {@link LingeringClose}
 * (RFC 9112 section 9.6): write side shut down first, what the client still sends dropped, then
 * closed, so that the client can read the response before any reset.
 *
 * <p>Flow control: the client channel and the upstream channel both run with auto-read off. A
 * channel is read again only when the channel its data goes to is writable, so neither side ever
 * buffers more than one read's worth: a slow client slows the upstream and a slow upstream slows
 * the client (back-pressure, as in Netty's proxy examples). Pipelined requests wait in
 * {@link #pending} (at most one read's worth) while an exchange is in progress.
 *
 * <p>Timers: one per connection, on the gateway's {@link Timers} (whose time is its ticker),
 * re-armed lazily; see {@link #ensureTimer}.
 *
 * <p>Thread-safety: confined to the client channel's event loop; the upstream channel is opened on
 * the same loop, so its events arrive on the same thread.
 */
public final class ProxyHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(ProxyHandler.class);

  final GatewayState state;
  private final Timers timers;
  private final ArrayDeque<Object> pending = new ArrayDeque<>();
  ChannelHandlerContext ctx;
  /**
   * The name of the client pipeline's HTTP encoder, which the server installs before this handler:
   * proxied bytes are written through its context and so skip it.
   */
  public static final String CODEC = "codec";
  /** Writes that bypass the HTTP encoder: the codec's own context ({@link #CODEC}). */
  ChannelHandlerContext rawOut;
  /** The exchange in progress; null between requests. */
  private ProxyExchange current;
  /** Whether the connection takes no more requests (it is closing, lingering or closed). */
  private boolean closing;
  /**
   * Whether the gateway is draining ({@link #retire}): the exchange in progress, or the next one to
   * start, is the connection's last.
   */
  private boolean retiring;
  /** Whether {@link #drain} is on the stack (it is re-entered from the exchange it starts). */
  private boolean draining;
  /** Whether writes to the client wait for a flush at the end of the upstream's read batch. */
  private boolean flushDeferred;

  /** What is derived from the connection's peer: this handler's own, or its HTTP/2 connection's. */
  private ConnectionPeer peer;

  /** What the connection's transport says: TLS or not, and the client certificate's subject. */
  private final ClientTransport transport;

  /**
   * Whether this handler serves one HTTP/2 stream ({@link #stream}): responses of known length and
   * the gateway's own answers are written to it as frames, the rest as HTTP/1.1 bytes its adapter parses.
   */
  final boolean stream;

  /** The handler of one cleartext client connection, sharing {@code state} with every other. */
  public ProxyHandler(GatewayState state) {
    this(state, ClientTransport.PLAIN, null);
  }

  /** The handler of one client connection over {@code transport}, sharing {@code state} with every other. */
  public ProxyHandler(GatewayState state, ClientTransport transport) {
    this(state, transport, null);
  }

  /**
   * The handler of one client connection, or of one HTTP/2 stream of a connection, over
   * {@code transport}; {@code peer} is what is derived from the connection's peer, once for all
   * the connection's streams, or null to derive it from this handler's channel.
   */
  public ProxyHandler(GatewayState state, ClientTransport transport, ConnectionPeer peer) {
    this(state, transport, peer, state.timers, false);
  }

  private ProxyHandler(GatewayState state, ClientTransport transport, ConnectionPeer peer, Timers timers,
      boolean stream) {
    this.state = state;
    this.timers = timers;
    this.transport = transport;
    this.peer = peer;
    this.stream = stream;
  }

  /**
   * The handler of one HTTP/2 stream of a connection over {@code transport}: {@code peer} is what is
   * derived from the connection's peer, and {@code timers} the connection's timers for its streams,
   * both shared by the connection's streams. Its responses are written as frames where they can be
   * ({@link StreamRelay}, {@link LocalResponse#writeFrames}).
   */
  public static ProxyHandler stream(GatewayState state, ClientTransport transport, ConnectionPeer peer,
      Timers timers) {
    return new ProxyHandler(state, transport, peer, timers, true);
  }

  /** The connection's transport: TLS or not, and the client certificate's subject, decided once. */
  ClientTransport transport() {
    return transport;
  }

  InetAddress peerAddress() {
    return peer.address();
  }

  String peerText() {
    return peer.text();
  }

  /** The peer's address as an IP literal, for the gate ({@code RequestView.remoteAddress}); per connection. */
  Optional<String> peerLiteral() {
    return peer.literal();
  }

  /** The partition keys derived from this connection's peer alone (headroom-enforcement's {@link PeerKeys}). */
  PeerKeys peerKeys() {
    return peer.peerKeys();
  }

  /**
   * This hop's Forwarded element (RFC 7239 section 4): for, proto and host. Requests on one
   * connection nearly always carry the same Host, so the element is kept per connection with it.
   */
  String forwardedElement(String forFor, String host) {
    return peer.forwardedElement(forFor, host, transport.secure());
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.rawOut = ctx.pipeline().context(CODEC);
    if (peer == null) {
      peer = new ConnectionPeer(ctx.channel().remoteAddress());
    }
  }

  /** Taken out of the pipeline (the connection switched to HTTP/2): its timer stops, it takes no more requests. */
  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    closing = true;
    if (timer != null) {
      timer.cancel();
      timer = null;
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    lastActivity = timers.now();
    Timeouts t = state.snapshot().config().timeouts();
    ensureTimer(lastActivity + Math.min(t.idle().toNanos(), t.response().toNanos()));
    ctx.read();
  }

  // ---- timeouts: one timer per connection, re-armed lazily ----

  private Timers.Timer timer;
  private long timerAt;
  /** When the connection last finished an exchange (or opened), for the idle timeout. */
  private long lastActivity;

  /**
   * Makes sure the connection's timer fires no later than {@code deadline} (the timers' time). A
   * timer already due earlier is kept: when it fires it re-checks and re-arms. The timer never
   * sleeps longer than the shorter of the idle and response timeouts, so a new exchange's response
   * deadline always finds a timer due before it: scheduling costs nothing per request, where a
   * scheduled task per request (and its cancellation) cost a priority-queue insert and removal.
   */
  void ensureTimer(long deadline) {
    if (timer != null) {
      if (timerAt - deadline <= 0) {
        return;
      }
      timer.cancel();
    }
    timerAt = deadline;
    timer = timers.schedule(ctx.executor(), deadline, this::timerFired);
  }

  private void timerFired() {
    timer = null;
    if (closing || !ctx.channel().isActive()) {
      return;
    }
    long now = timers.now();
    Timeouts t = state.snapshot().config().timeouts();
    long step = Math.min(t.idle().toNanos(), t.response().toNanos());
    if (current != null) {
      // an exchange in progress is never idle, but its request body may stall (timeouts.idle)
      // and its response head may be overdue (timeouts.response)
      ProxyExchange ex = current;
      if (ex.requestStalled(now, t.idle().toNanos())) {
        ex.requestTimedOut();
        return;
      }
      boolean awaiting = ex.checkResponseDeadline(now);
      if (timer == null && !closing && ctx.channel().isActive()) {
        long next = now + step;
        ensureTimer(awaiting && ex.responseDeadline() - next < 0 ? ex.responseDeadline() : next);
      }
      return;
    }
    long idleDeadline = lastActivity + t.idle().toNanos();
    if (now - idleDeadline >= 0) {
      RequestDecoder decoder = ctx.pipeline().get(RequestDecoder.class);
      if (decoder != null && decoder.holdsPartialRequest()) {
        headTimedOut(t.idle()); // a head trickling in (slowloris) is bounded by timeouts.idle too
        return;
      }
      // idle keep-alive connection (timeouts.idle): a request may be on its way, so linger
      closing = true;
      LingeringClose.close(ctx.channel(), timers);
      return;
    }
    // times are compared by their difference only: Math.min would pick the wrong one when
    // exactly one of them has wrapped past Long.MAX_VALUE
    long nextCheck = now + step;
    ensureTimer(idleDeadline - nextCheck < 0 ? idleDeadline : nextCheck);
  }

  /**
   * The connection's next request head was not complete within {@code timeouts.idle} of the
   * connection's opening or its last exchange: 408 and the connection closes (RFC 9110 section
   * 15.5.9), answered as an exchange of a request that failed to decode, so it is written, counted
   * and closed as every other refused request is.
   */
  private void headTimedOut(Duration idle) {
    DefaultFullHttpRequest r = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/",
        Unpooled.EMPTY_BUFFER);
    r.setDecoderResult(DecoderResult.failure(new RequestDecoder.Refusal(GatewayMessages.requestHeadTimedOut(idle))));
    start(r);
  }

  // ---- channel events ----

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (closing) {
      ReferenceCountUtil.release(msg);
      return;
    }
    pending.addLast(msg);
    eventStarts();
    try {
      drain();
    } finally {
      inEvent = false;
    }
  }

  // ---- one clock reading per event ----

  /** The timers' time when the event being handled (a read from either side) was first timed. */
  private long eventNanos;
  private boolean inEvent;
  private boolean eventTimed;

  /**
   * Marks the start of an inbound event: what happens while handling it (activity, the time a
   * request went upstream, when its response head arrived) is stamped with one clock reading,
   * taken when first needed, instead of one each. A reading costs tens of nanoseconds on a
   * virtual machine's clock source, and a forwarded exchange took about ten.
   */
  private void eventStarts() {
    inEvent = true;
    eventTimed = false;
  }

  /** Starts an event unless one is in progress; returns whether it did (pass it to {@link #exitEvent}). */
  boolean enterEvent() {
    if (inEvent) {
      return false;
    }
    eventStarts();
    return true;
  }

  void exitEvent(boolean entered) {
    if (entered) {
      inEvent = false;
    }
  }

  /** The current event's time, or the clock outside an event (write completions, timers). */
  long now() {
    if (!inEvent) {
      return timers.now();
    }
    if (!eventTimed) {
      eventNanos = timers.now();
      eventTimed = true;
    }
    return eventNanos;
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    maybeRead();
  }

  // ---- flushes: one per upstream read batch ----

  /** A write to the client waits for the flush at the end of the upstream's read batch. */
  void deferFlush() {
    flushDeferred = true;
  }

  /** The upstream's read batch is over: flushes what waited, once. */
  void flushDeferred() {
    if (flushDeferred) {
      flushDeferred = false;
      ctx.flush();
    }
  }

  /** A write and flush is under way that takes what waited with it. */
  void cancelDeferredFlush() {
    flushDeferred = false;
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (ctx.channel().isWritable() && current != null) {
      current.clientWritable();
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    closing = true;
    if (timer != null) {
      timer.cancel();
      timer = null;
    }
    Object m;
    while ((m = pending.pollFirst()) != null) {
      ReferenceCountUtil.release(m);
    }
    if (current != null) {
      current.abort("client closed the connection");
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.debug("client connection {} failed", ctx.channel(), cause);
    ctx.close();
  }

  // ---- pipelining ----

  /** Processes queued messages while the current state can take them. */
  void drain() {
    if (draining) {
      return; // the outer loop re-checks the state after each message
    }
    draining = true;
    try {
      drainLoop();
    } finally {
      draining = false;
    }
  }

  private void drainLoop() {
    while (!pending.isEmpty() && !closing) {
      Object m = pending.peekFirst();
      if (m instanceof HttpRequest) {
        if (current != null) {
          return; // pipelined: wait for the exchange in progress
        }
        pending.pollFirst();
        start((HttpRequest) m);
      } else if (m instanceof HttpContent) {
        if (current == null) {
          pending.pollFirst();
          ReferenceCountUtil.release(m); // content of a request already answered and closed
        } else if (!current.acceptsBody()) {
          return;
        } else {
          pending.pollFirst();
          current.requestContent((HttpContent) m);
        }
      } else {
        pending.pollFirst();
        ReferenceCountUtil.release(m);
      }
    }
  }

  /** Asks the client for more when the state can use it. */
  void maybeRead() {
    if (!pending.isEmpty()) {
      drain();
    }
    if (closing || !ctx.channel().isActive() || !pending.isEmpty()) {
      return;
    }
    // With the request read, keep a read pending for the next one: the socket stays registered
    // for reading (no epoll_ctl per exchange), and a pipelined request waits in `pending`, which
    // stops further reads until it is served (bounded at one read's worth).
    if (current == null || current.wantsRequestData() || current.requestComplete()) {
      ctx.read();
    }
  }

  private void start(HttpRequest request) {
    ProxyExchange ex = new ProxyExchange(this, state.snapshot(), request);
    current = ex;
    if (retiring) {
      ex.closeAfter(); // the gateway drains: this response says Connection: close (RFC 9112 section 9.6)
    }
    ex.begin();
  }

  /**
   * The gateway drains: the connection takes no new exchange. The exchange in progress finishes and
   * its response, unless its head is already out, carries {@code Connection: close}; a request head
   * still arriving is served the same way; an idle keep-alive connection closes now, lingering. A
   * server that will close says so in the response (RFC 9112 section 9.6), and a client whose idle
   * connection closes retries on a new one (RFC 9112 section 9.3.1). Runs on the connection's loop.
   */
  public void retire() {
    if (retiring || closing || !ctx.channel().isActive()) {
      retiring = true;
      return;
    }
    retiring = true;
    if (current != null) {
      current.closeAfter();
      return;
    }
    RequestDecoder decoder = ctx.pipeline().get(RequestDecoder.class);
    if (!pending.isEmpty() || decoder != null && decoder.holdsPartialRequest()) {
      return; // a request is on its way: start() marks it the last
    }
    closing = true;
    LingeringClose.close(ctx.channel(), timers);
  }

  /**
   * The exchange in progress switched the connection to another protocol (a 101 it asked for, RFC
   * 9110 section 7.8): the connection leaves HTTP for good. Its timer stops, anything queued after
   * the request is dropped (a client sends nothing after an upgrade request until it reads the
   * 101, RFC 6455 section 4.1), and this handler and the HTTP encoder come out of the pipeline,
   * so that the tunnel's end added after this call is the last handler; call
   * {@link #dropDecoder} once it is in place. From here on the tunnel owns the connection, and the
   * exchange ends when it closes; a drain leaves it running until {@code shutdown.drainTimeout}.
   */
  void handOver(ProxyExchange ex) {
    if (current == ex) {
      current = null;
    }
    closing = true;
    if (timer != null) {
      timer.cancel();
      timer = null;
    }
    Object m;
    while ((m = pending.pollFirst()) != null) {
      ReferenceCountUtil.release(m);
    }
    ctx.pipeline().remove(this);
    ctx.pipeline().remove(CODEC);
  }

  /** Removes the request decoder, which hands the bytes it holds after the request on to the tunnel's end. */
  void dropDecoder() {
    RequestDecoder decoder = ctx.pipeline().get(RequestDecoder.class);
    if (decoder != null) {
      ctx.pipeline().remove(decoder);
    }
  }

  /** Called by an exchange once its response is written and its request fully read. */
  void finished(ProxyExchange ex, boolean keepAlive) {
    if (current != ex) {
      return;
    }
    current = null;
    lastActivity = now();
    if (!keepAlive) {
      closing = true;
      LingeringClose.close(ctx.channel(), timers);
      return;
    }
    drain();
    maybeRead();
  }
}
