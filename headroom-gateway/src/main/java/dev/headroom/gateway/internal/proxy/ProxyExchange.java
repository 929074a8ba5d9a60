package dev.headroom.gateway.internal.proxy;

import dev.headroom.Decision;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.Verdict;
import dev.headroom.gateway.internal.wire.ResponseBody;
import dev.headroom.gateway.internal.wire.ResponseHead;
import dev.headroom.gateway.internal.wire.UpstreamHandler;
import dev.headroom.gateway.internal.wire.UpstreamRequestWriter;
import dev.headroom.http.body.RefusalFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request and its response, on a {@link ProxyHandler client connection}. Its life, in calls:
 * the constructor asks {@link Triage} what becomes of the request (a pure step on the head);
 * {@link #begin()} acts on the answer: a local answer goes out through {@link #local}; a forwarded
 * request is decided against its policies by headroom-http's {@link Gate} (a vend call by {@link VendCall}),
 * then written upstream on an {@link UpstreamLeg} ({@link #connected}); the response head picks the
 * {@link ResponseRelay} that carries the body back ({@link #upstreamHead}); {@link #end} settles the
 * accounting once, whichever way the exchange ends.
 *
 * <p>State: two explicit lifecycles rather than flags, because the request and its response move
 * independently (a response can be complete while the body is still arriving, and a body can go
 * upstream while the response head is awaited). {@link ExchangePhase} is where the response stands and
 * only moves forward; {@link BodyFate} is what becomes of the request body's bytes. The exchange ends
 * once the phase is {@link ExchangePhase#RESPONDED} and the body {@link BodyFate#complete() complete}. What
 * belongs to one path lives there: the upstream connection in the {@link UpstreamLeg}, the
 * response's bytes in its relay, a vend call's decision in a {@link VendCall.Allowed} value.
 *
 * <p>Accounting: the decision's concurrency leases are released and its content bytes charged
 * exactly once, when the exchange ends, whether it completes or either connection dies.
 *
 * <p>Confined to the client channel's event loop; the upstream channel is on the same loop.
 */
final class ProxyExchange implements ClientSink {
  private static final Logger LOG = LoggerFactory.getLogger(ProxyExchange.class);

  final ProxyHandler conn;
  final GatewayState state;
  final Snapshot snap;
  final HttpRequest request;
  final RefusalFormat format;
  private final long maxBody;
  /** What becomes of the request, decided from its head when the exchange is made. */
  private final Triage triage;
  /** The matched route; null for a request answered from its head alone. */
  final CompiledRoute route;
  /** A vend route's settings (seed 003); null for any other request. */
  final VendRoutes vend;
  /** The Upgrade protocols asked of the upstream (RFC 9110 section 7.8); null for an ordinary request. */
  final String upgrade;

  // Mutable, each for the reason given: the rest of the exchange's state lives in the upstream
  // leg, the relay, and the values the decision steps return.
  /** The response's lifecycle: changes as the exchange moves on (forward only). */
  private ExchangePhase phase = ExchangePhase.DECIDING;
  /** The request body's fate: changes as the request is decided, forwarded, answered or cut. */
  private BodyFate body;
  /** Whether the client connection outlives the exchange: cleared by a cut body, a response that ends with the connection, an abort. */
  private boolean keepAlive;
  /** What the request's decision owes at the end, and its fields (null while deciding, for an answer, without policies). */
  private Accounting accounting;
  /** The upstream connection, from acquisition until {@link #end} releases it (null before, and once given up). */
  UpstreamLeg upstream;
  /** The response's path to the client, from its head on (a vend relay swaps in a re-framed one midway). */
  ResponseRelay relay;
  /** A vend call's decision once it is allowed, for the relay that decorates its response. */
  VendCall.Allowed vendCall;
  /** A vend call's envelope while it is read whole, until it goes upstream in one piece. */
  private VendEnvelope envelope;
  /** Request body bytes read so far: the content-bytes charge, the body bound, the stall check. */
  long requestBytes;
  /** Response body bytes relayed so far: the content-bytes charge. */
  long responseBytes;
  /** {@link #requestBytes} at the connection timer's last look: a stalled body shows no change between looks. */
  private long progressSeen = -1;
  /** When {@link #progressSeen} last changed (the timers' time): a stall lasts from then. */
  private long progressSince;
  /**
   * What the access log line of the exchange will say ({@link ExchangeLog#NONE} when it is off),
   * and its span too when telemetry is on ({@link ExchangeTrace}).
   */
  private final ExchangeLog log;

  ProxyExchange(ProxyHandler conn, Snapshot snap, HttpRequest request) {
    this.conn = conn;
    this.state = conn.state;
    this.snap = snap;
    this.request = request;
    this.keepAlive = HttpUtil.isKeepAlive(request);
    this.format = snap.vocabulary().format(request.headers().get(HttpHeaderNames.ACCEPT));
    this.maxBody = snap.config().limits().maxBodyBytes();
    this.body = request.decoderResult().isFailure() || request instanceof LastHttpContent ? BodyFate.READ : BodyFate.HELD;
    this.triage = Triage.of(snap, request, format);
    if (triage instanceof Triage.Forward f) {
      this.route = f.route();
      this.vend = null;
      this.upgrade = f.upgrade();
    } else if (triage instanceof Triage.Vend v) {
      this.route = v.route();
      this.vend = v.vend();
      this.upgrade = null;
    } else {
      this.route = null;
      this.vend = null;
      this.upgrade = null;
    }
    ExchangeLog accessLog = state.accessLog.open(conn.now());
    // the one check tracing costs when it is off: no span, no OpenTelemetry class touched
    this.log = state.telemetry == null ? accessLog
        : ExchangeTrace.open(state.telemetry, accessLog, conn, request, route);
  }

  private void enter(ExchangePhase next) {
    if (next.compareTo(phase) > 0) {
      phase = next;
    }
  }

  private boolean responseStarted() {
    return phase.compareTo(ExchangePhase.RELAYING) >= 0;
  }

  boolean ended() {
    return phase == ExchangePhase.ENDED;
  }

  boolean requestComplete() {
    return body.complete();
  }

  @Override
  public boolean keepAlive() {
    return keepAlive;
  }

  /** The response ends with the connection (an HTTP/1.0 client's body of unknown length). */
  @Override
  public void closeAfter() {
    keepAlive = false;
  }

  /** Writes the RateLimit fields of the request's decision for a response of {@code status}, if it has one. */
  @Override
  public void writeFields(int status, BiConsumer<String, String> sink) {
    if (accounting != null) {
      accounting.writeFields(status, sink);
    }
  }

  /**
   * Whether a body message can be taken now; one that cannot waits in the connection's queue,
   * which stops further reads (a CUT body's rest is left there for the lingering close to drop).
   */
  boolean acceptsBody() {
    return switch (body) {
      case DISCARDING, COLLECTING -> true;
      case FORWARDING -> upstream.isActive();
      default -> false;
    };
  }

  boolean wantsRequestData() {
    return switch (body) {
      case DISCARDING, COLLECTING -> true;
      case FORWARDING -> upstream.isWritable();
      default -> false;
    };
  }

  @Override
  public boolean http10() {
    return request.protocolVersion().equals(HttpVersion.HTTP_1_0);
  }

  // ---- admission ----

  void begin() {
    if (triage instanceof Triage.Local l) {
      if (l.body() == Triage.Body.UNREAD) {
        cut(); // the body is not read: the connection cannot be reused
      } else {
        discardBody();
      }
      local(l.response());
    } else if (vend != null) {
      if (HttpUtil.is100ContinueExpected(request)) {
        continue100();
      }
      envelope = new VendEnvelope(conn.ctx.alloc(), request, vend, maxBody);
      if (body.complete()) {
        vendRequestComplete();
      } else {
        body = BodyFate.COLLECTING;
      }
    } else if (route.rules() == null) {
      connect(); // a route without policies: forwarded undecided
    } else {
      decide();
    }
  }

  private void continue100() {
    conn.ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
  }

  /** The rest of the body is read and dropped. */
  private void discardBody() {
    if (!body.complete()) {
      body = BodyFate.DISCARDING;
    }
  }

  /** The rest of the body is not read: the connection ends after the answer. */
  private void cut() {
    body = BodyFate.CUT;
    keepAlive = false;
  }

  // ---- the decision (the gate, or VendCall), and its two ends ----

  /** The route's policies decide ({@link GateStep}): a verdict given at once is acted on now, a later one on this loop. */
  private void decide() {
    long t0 = System.nanoTime();
    CompletableFuture<Verdict> f = GateStep.decide(snap, route, request, path(), conn);
    if (f.isDone()) {
      decided(f, t0);
    } else {
      f.whenComplete((v, e) -> conn.ctx.executor().execute(() -> decided(f, t0)));
    }
  }

  /**
   * The gate's verdict; the gate has recorded the decision and the store's latency in the gateway's
   * registry. {@code took}, from the decision's start to its verdict, is the trace's decision span.
   */
  private void decided(CompletableFuture<Verdict> f, long t0) {
    long took = System.nanoTime() - t0;
    Verdict v;
    try {
      v = f.join();
    } catch (RuntimeException e) {
      LOG.error("the gate failed to decide {} {}", request.method(), path(), e); // a bug: the gate answers failures
      if (!ended()) {
        refused(GateStep.failed(snap, request, path(), conn));
      }
      return;
    }
    if (ended()) {
      if (v.kind() == Verdict.Kind.ADMIT) {
        v.admission().unansweredAsync(0); // the client left while the store was deciding
      }
      return;
    }
    log.verdict(v);
    log.decisionTook(took);
    if (v.kind() == Verdict.Kind.ANSWER) {
      refused(route.refusal().of(v.answer()));
    } else {
      accounting = v.kind() == Verdict.Kind.ADMIT ? Accounting.admitted(v) : null;
      connect();
    }
  }

  /** Holds a vend call's decision for the rest of the exchange: its leases are released at the end. */
  void hold(Decision d) {
    accounting = d == null ? null : Accounting.vend(d, route.headers());
  }

  /** The request is answered without going upstream (a refusal, the store failing); its body is dropped. */
  void refused(LocalResponse r) {
    discardBody();
    local(r);
  }

  // ---- the request upstream ----

  private void connect() {
    enter(ExchangePhase.CONNECTING);
    UpstreamPool pool = snap.pools().get(route.route().upstream());
    if (vend == null && HttpUtil.is100ContinueExpected(request)) {
      continue100();
    }
    Future<Channel> f = pool.acquire(conn.ctx.channel().eventLoop());
    if (f.isDone()) {
      connected(pool, f);
    } else {
      f.addListener(x -> connected(pool, f));
    }
  }

  private void connected(UpstreamPool pool, Future<Channel> f) {
    if (ended()) {
      if (f.isSuccess()) {
        f.getNow().close();
      }
      return;
    }
    if (!f.isSuccess()) {
      if (f.cause() instanceof UpstreamHandshakeException h) {
        notSecure(pool, h.failure(), h.getCause());
      } else {
        badGateway(GatewayMessages.upstreamUnreachable(f.cause()));
      }
      return;
    }
    boolean whole = envelope != null; // a vend call: its body was read whole to be decided
    upstream = new UpstreamLeg(pool, f.getNow(), this::onUpstream, request.method().equals(HttpMethod.HEAD),
        !whole && HttpUtil.isTransferEncodingChunked(request), conn.now());
    String forFor = conn.peerText();
    String host = request.headers().get(HttpHeaderNames.HOST);
    String forwarded = conn.forwardedElement(forFor, host);
    log.forwarding(request);
    if (whole) {
      ByteBuf call = envelope.take();
      envelope = null;
      upstream.write(UpstreamRequestWriter.head(request, host, forFor, forwarded, false, call.readableBytes(),
          null, conn.transport().secure(), conn.ctx.alloc()));
      body = BodyFate.SENT;
      awaitResponse();
      upstream.writeAndFlush(call);
      upstream.read();
      return;
    }
    if (upgrade != null) {
      upstream.expectUpgrade();
    }
    upstream.write(UpstreamRequestWriter.head(request, host, forFor, forwarded, upstream.chunked, -1, upgrade,
        conn.transport().secure(), conn.ctx.alloc()));
    awaitResponse();
    if (body.complete()) {
      body = BodyFate.SENT;
      if (upstream.chunked) {
        upstream.write(Unpooled.wrappedBuffer(UpstreamRequestWriter.LAST_CHUNK));
      }
    } else {
      body = BodyFate.FORWARDING;
    }
    upstream.flush();
    upstream.read();
    conn.drain();
    conn.maybeRead();
  }

  /** Starts the response timeout (a failed write upstream is heard as an ERROR event). */
  private void awaitResponse() {
    enter(ExchangePhase.AWAITING_HEAD);
    conn.ensureTimer(responseDeadline());
  }

  /** When the response head is due: {@code timeouts.response} after the request head went up. */
  long responseDeadline() {
    return upstream.sentNanos + snap.config().timeouts().response().toNanos();
  }

  /**
   * Called by the connection's timer: times the exchange out if its response head is overdue.
   * Returns whether a head is still awaited (its deadline is then {@link #responseDeadline()}).
   */
  boolean checkResponseDeadline(long now) {
    if (phase != ExchangePhase.AWAITING_HEAD || upstream == null) {
      return false;
    }
    if (now - responseDeadline() >= 0) {
      responseTimedOut();
      return false;
    }
    return true;
  }

  void requestContent(HttpContent c) {
    if (c.decoderResult().isFailure()) {
      c.release();
      requestBodyMalformed(c.decoderResult().cause());
      return;
    }
    boolean last = c instanceof LastHttpContent;
    requestBytes += c.content().readableBytes();
    switch (body) {
      case DISCARDING -> drop(c, last);
      case COLLECTING -> collect(c, last);
      case FORWARDING -> forward(c, last);
      default -> c.release(); // not asked for (acceptsBody): nothing reads it
    }
  }

  /**
   * A body answered already is read and dropped only up to the body bound; past it the connection
   * ends instead of carrying an unbounded upload nobody wants.
   */
  private void drop(HttpContent c, boolean last) {
    c.release();
    if (last) {
      body = BodyFate.READ;
    } else if (requestBytes > maxBody) {
      cut();
    } else {
      return;
    }
    maybeEnd();
  }

  private void collect(HttpContent c, boolean last) {
    if (!envelope.add(c, requestBytes)) {
      cut(); // the rest of the body is not read: the connection closes after the answer
      local(envelope.tooLarge());
      return;
    }
    if (last) {
      vendRequestComplete();
    }
  }

  private void forward(HttpContent c, boolean last) {
    if (requestBytes > maxBody) {
      c.release();
      cut();
      if (responseStarted()) {
        abort("request body over the limit after the response started");
      } else {
        closeUpstream();
        local(snap.vocabulary().error(GatewayMessages.contentTooLarge(maxBody), format, path()));
      }
      return;
    }
    if (last) {
      body = BodyFate.SENT;
    }
    ByteBuf piece = UpstreamRequestWriter.body(c, last, upstream.chunked, conn.ctx.alloc());
    if (piece.isReadable()) {
      upstream.writeAndFlush(piece);
    } else {
      piece.release();
    }
    if (last) {
      maybeEnd();
    }
  }

  /**
   * The request body's framing broke (an invalid chunk-size line, say): the decoder ends the
   * body there and drops the rest of the connection, so the part read is no complete request
   * (RFC 9112 section 7.1) and must never reach the upstream as one. The upstream connection is
   * closed mid-body, the client gets 400 if nothing was answered yet, and the connection ends.
   */
  private void requestBodyMalformed(Throwable cause) {
    boolean answered = body == BodyFate.DISCARDING;
    cut();
    if (upstream != null) {
      upstream.doNotReuse();
    }
    if (answered) {
      maybeEnd(); // nothing more can be read on this connection
      return;
    }
    closeUpstream();
    if (responseStarted()) {
      abort("request body malformed after the response started: " + cause.getMessage());
      return;
    }
    LOG.debug("request body framing invalid", cause);
    local(snap.vocabulary().error(GatewayMessages.malformedRequestBody(), format, path()));
  }

  void clientWritable() {
    if (phase == ExchangePhase.RELAYING && upstream != null && upstream.isActive()) {
      upstream.read();
    }
  }

  // ---- the response ----

  private void onUpstream(UpstreamHandler.Event e, Object msg) {
    if (ended()) {
      ReferenceCountUtil.release(msg);
      return;
    }
    boolean outer = conn.enterEvent();
    try {
      switch (e) {
        case READ -> upstreamRead(msg);
        case WRITABLE -> conn.maybeRead();
        case READ_COMPLETE -> upstreamReadComplete();
        case INACTIVE -> upstreamClosed();
        case ERROR -> upstreamFailed((Throwable) msg);
      }
    } finally {
      conn.exitEvent(outer);
    }
  }

  private void upstreamRead(Object msg) {
    if (msg instanceof ResponseHead h) {
      upstreamHead(h);
    } else {
      relay.body((ResponseBody) msg);
    }
  }

  /** The response head chooses the relay that carries the response to the client. */
  private void upstreamHead(ResponseHead h) {
    if (h.failure() != null) {
      LOG.warn("upstream {} sent an invalid response to {} {}: {}", upstream.pool.name(), request.method(), path(),
          h.failure());
      closeUpstream();
      if (!responseStarted() || relay != null && relay.nothingSent()) {
        // the head was valid but its body broke before any of it reached the client (an
        // invalid first chunk-size line): what was kept back is dropped and 502 said instead
        if (relay != null) {
          relay.release();
          relay = null;
        }
        conn.cancelDeferredFlush();
        badGateway(GatewayMessages.UPSTREAM_RESPONSE_INVALID);
      } else {
        abort("upstream response malformed: " + h.failure());
      }
      return;
    }
    if (request instanceof TunnelRequest t && upgrade != null && t.refusal(h) != null) {
      closeUpstream(); // it speaks another protocol now, or sent a response the client would misread
      badGateway(t.refusal(h));
      return;
    }
    if (h.status() == 101 && upgrade != null) {
      switchProtocols(h);
      return;
    }
    if (h.status() < 200) {
      upstream.read(); // interim responses: 100-continue was answered already
      return;
    }
    long waited = conn.now() - upstream.sentNanos;
    if (accounting != null) { // which responses count, and a charge the response states
      accounting.response(h.status(), route.route().cost().chargeHeader().map(h::get).orElse(null));
      if (accounting.learns()) { // the upstream's own time, for the route's adaptive limit
        accounting.upstreamLatency(waited, state.loopLag.of(conn.ctx.channel().eventLoop()));
      }
    }
    state.metrics.upstreamLatency(upstream.pool.name(), waited);
    log.head(h.status(), waited);
    enter(ExchangePhase.RELAYING);
    if (!h.keepAlive()) {
      upstream.doNotReuse();
    }
    relay = ResponseRelay.forHead(this, h);
    if (relay == null) {
      return; // answered instead (untransferable)
    }
    if (relay instanceof RawRelay || relay instanceof ReframedRelay) {
      // not flushed alone: the head leaves with the body in one write (see upstreamReadComplete)
      conn.deferFlush();
      pullUpstream();
    } else {
      upstream.read(); // read whole: a normalised error's body is dropped, a vend response decorated
    }
  }

  /**
   * The upstream accepted the upgrade (101, RFC 9110 section 15.2.2): its head goes to the client
   * with the protocol it switched to, and both connections become a {@link Tunnel}. The request
   * was decided as one request; the decision's leases (a {@code concurrent-requests} policy's)
   * stay held until the tunnel closes, when the exchange ends and settles as any other, its bytes
   * each way counted as request and response bytes (and charged to {@code content-bytes}
   * policies), and its access log line written with status 101. The upstream connection never
   * goes back to its pool.
   */
  private void switchProtocols(ResponseHead h) {
    if (accounting != null) {
      accounting.response(h.status(), route.route().cost().chargeHeader().map(h::get).orElse(null));
    }
    long wait = conn.now() - upstream.sentNanos;
    state.metrics.upstreamLatency(upstream.pool.name(), wait);
    log.head(h.status(), wait);
    enter(ExchangePhase.RELAYING);
    String protocol = h.get("upgrade");
    Channel client = conn.ctx.channel();
    conn.rawOut.write(RawRelay.head(h, this, true, false, protocol == null ? upgrade : protocol, conn.ctx.alloc()),
        conn.rawOut.voidPromise());
    UpstreamLeg leg = upstream;
    upstream = null; // the tunnel owns the connection now, and closes it
    Channel up = leg.switched();
    conn.handOver(this);
    Tunnel.open(client, up, conn.state.timers, snap.config().timeouts().tunnelIdle(), this::tunnelClosed);
    conn.dropDecoder(); // bytes the client sent after the request reach the tunnel
    leg.dropDecoder(); // bytes the upstream sent after its 101 reach the tunnel, after the head
    client.flush();
  }

  /** The tunnel closed: the exchange ends with the bytes it carried each way. */
  private void tunnelClosed(Tunnel.Closed c) {
    requestBytes = c.fromClient();
    responseBytes = c.fromUpstream();
    LOG.debug("tunnel closed ({}): {} bytes from the client, {} from the upstream", c.reason(), c.fromClient(),
        c.fromUpstream());
    keepAlive = false;
    enter(ExchangePhase.RESPONDED);
    end(true);
  }

  /** The upstream's read batch is over: flush what it produced to the client, once. */
  private void upstreamReadComplete() {
    if (relay != null) {
      relay.readComplete();
    }
    conn.flushDeferred();
  }

  /** Reads more of the response when the client can take it. */
  @Override
  public void pullUpstream() {
    if (conn.ctx.channel().isWritable()) {
      upstream.read();
    }
    // else: channelWritabilityChanged -> clientWritable() reads again
  }

  /** The response's last piece is being written: it is complete, and its write flushes what waited. */
  @Override
  public void lastWrite() {
    enter(ExchangePhase.RESPONDED);
    conn.cancelDeferredFlush();
  }

  private void responseTimedOut() {
    String pool = upstream.pool.name();
    long waited = conn.now() - upstream.sentNanos;
    closeUpstream();
    discardBody();
    state.metrics.upstreamLatency(pool, waited);
    Duration timeout = snap.config().timeouts().response();
    local(snap.vocabulary().error(GatewayMessages.upstreamTimedOut(timeout), format, path()));
  }

  /**
   * Whether the client owes request body bytes the gateway is ready to read and has sent none
   * for at least {@code idle} (checked by the connection's timer). Time the gateway itself holds
   * the body back (a slow upstream) does not count.
   */
  boolean requestStalled(long now, long idle) {
    if (body.complete() || ended()) {
      return false;
    }
    if (requestBytes != progressSeen || !wantsRequestData()) {
      progressSeen = requestBytes;
      progressSince = now;
      return false;
    }
    return now - progressSince >= idle;
  }

  /** The request body stopped arriving: 408 if nothing was answered yet, else the connection ends. */
  void requestTimedOut() {
    keepAlive = false;
    if (responseStarted()) {
      abort("request body stalled");
      return;
    }
    closeUpstream();
    cut(); // nothing more is read: the connection closes after the answer
    local(snap.vocabulary().error(GatewayMessages.requestBodyTimedOut(snap.config().timeouts().idle()), format, path()));
  }

  /**
   * 502 for an HTTP/1.0 client whose response carries a transfer coding such as gzip: the data
   * re-framed without it would reach the client still coded and unlabelled. The upstream
   * connection is dropped unread.
   */
  void untransferable(String codings) {
    closeUpstream();
    discardBody();
    local(snap.vocabulary().error(GatewayMessages.untransferable(codings), format, path()));
  }

  private void badGateway(String detail) {
    discardBody();
    local(snap.vocabulary().error(GatewayMessages.badGateway(detail), format, path()));
  }

  /**
   * 502 for an https upstream whose handshake failed (nothing was sent to it), with one log line
   * per {@link UpstreamPool#TLS_WARNING_INTERVAL} for the upstream, which names the reason.
   */
  private void notSecure(UpstreamPool pool, UpstreamTlsFailure failure, Throwable cause) {
    pool.tlsWarning.warn(state.ticker, "upstream " + pool.name() + " (" + pool.authority()
        + ") could not be reached securely: " + failure.words + " (" + tlsReason(cause) + ")");
    discardBody();
    local(snap.vocabulary().error(GatewayMessages.upstreamNotSecure(failure), format, path()));
  }

  /**
   * The handshake's own words for the log: the deepest message of its causes, bounded; Netty's
   * message for bytes that are not TLS (a plain HTTP server on the port) is their hex dump, so that
   * one is said in words.
   */
  private static String tlsReason(Throwable cause) {
    String reason = "no reason given";
    Throwable t = cause;
    for (int i = 0; t != null && i < 16; i++, t = t.getCause()) {
      if (t instanceof NotSslRecordException) {
        return "it answered with bytes that are not a TLS record: it does not speak TLS on this port";
      }
      if (t.getMessage() != null) {
        reason = t.getMessage();
      }
    }
    return reason.length() > 300 ? reason.substring(0, 300) + "..." : reason;
  }

  /**
   * The upstream connection failed. A TLS failure before any of the response arrived is the
   * handshake's end, not the exchange's: with TLS 1.3 the client's side of the handshake completes
   * before the upstream has checked the client certificate, so an upstream refusing it (mutual
   * TLS) says so with an alert after the request went up. That is a 502 saying the upstream
   * could not be reached securely; any other failure closes the connection (heard as INACTIVE).
   */
  private void upstreamFailed(Throwable cause) {
    if (isTls(cause) && !responseStarted() && phase.compareTo(ExchangePhase.RESPONDED) < 0) {
      UpstreamPool pool = upstream.pool;
      closeUpstream();
      notSecure(pool, UpstreamTlsFailure.of(cause), cause);
      return;
    }
    upstream.fail();
  }

  private static boolean isTls(Throwable cause) {
    Throwable t = cause;
    for (int i = 0; t != null && i < 16; i++, t = t.getCause()) {
      if (t instanceof SSLException) {
        return true;
      }
    }
    return false;
  }

  private void upstreamClosed() {
    if (phase.compareTo(ExchangePhase.RESPONDED) >= 0) {
      return;
    }
    upstream.doNotReuse();
    if (!responseStarted()) {
      badGateway(GatewayMessages.UPSTREAM_CLOSED_EARLY);
    } else {
      // mid-body: the client cannot be told anything else; close so it sees a truncated body
      abort("upstream closed mid-response");
    }
  }

  // ---- vend calls (seed 003; the gateway part of the vend rate-limit extension) ----

  /** The envelope is read whole: {@link VendCall} decides it. */
  private void vendRequestComplete() {
    body = BodyFate.READ;
    VendCall.decide(this, envelope.copy());
  }

  /** A vend call the store allowed: it goes upstream, and its response may be decorated. */
  void vendAllowed(VendCall.Allowed call) {
    vendCall = call;
    connect();
  }

  private void releaseBuffers() {
    if (envelope != null) {
      envelope.release();
      envelope = null;
    }
    if (relay != null) {
      relay.release();
    }
  }

  // ---- the client side as relays see it (ClientSink) ----

  @Override
  public ChannelHandlerContext bytesOut() {
    return conn.rawOut;
  }

  @Override
  public ChannelHandlerContext messagesOut() {
    return conn.ctx;
  }

  @Override
  public boolean frames() {
    return conn.stream;
  }

  @Override
  public boolean headRequest() {
    return request.method().equals(HttpMethod.HEAD);
  }

  @Override
  public void sent(long bytes) {
    responseBytes += bytes;
  }

  @Override
  public void deferFlush() {
    conn.deferFlush();
  }

  @Override
  public void readUpstream() {
    upstream.read();
  }

  @Override
  public void relayWith(ResponseRelay next) {
    relay = next;
  }

  // ---- local responses and the end ----

  /** Answers locally; the request body, if any, is read and dropped. */
  private void local(LocalResponse r) {
    if (body == BodyFate.COLLECTING || body == BodyFate.FORWARDING) {
      body = BodyFate.DISCARDING;
    }
    releaseBuffers();
    enter(ExchangePhase.RESPONDED);
    writeLocal(r);
  }

  /**
   * Writes a response the gateway produced, as bytes past the HTTP encoder: status line, its
   * fields, Content-Type and Content-Length, the connection's fate, the body (none for HEAD); to
   * an HTTP/2 stream as a HEADERS frame and a DATA frame instead.
   */
  @Override
  public void writeLocal(LocalResponse r) {
    state.metrics.localResponse(r.status().code());
    log.local(r, headRequest());
    if (!body.complete() && (body != BodyFate.DISCARDING || HttpUtil.is100ContinueExpected(request))) {
      // a client that expected 100-continue and got a final answer may never send its body
      // (RFC 9110 section 10.1.1): the connection ends rather than wait for it; what still
      // comes of the body is dropped by the lingering close
      cut();
    }
    if (conn.stream) {
      whenWritten(r.writeFrames(conn.rawOut, headRequest()));
    } else {
      ByteBuf b = r.encode(conn.ctx.alloc(), keepAlive, http10(), headRequest());
      whenWritten(conn.rawOut.writeAndFlush(b));
    }
    conn.maybeRead();
  }

  /**
   * Ends the response when its last write is done: at once when the flush wrote it all (the
   * usual case, so no listener is allocated or notified), else when the socket takes the rest.
   */
  @Override
  public void whenWritten(ChannelFuture f) {
    if (f.isDone()) {
      responseWritten(f.isSuccess());
    } else {
      f.addListener(x -> responseWritten(x.isSuccess()));
    }
  }

  void responseWritten(boolean ok) {
    if (!ok) {
      abort("write to client failed");
      return;
    }
    enter(ExchangePhase.RESPONDED);
    maybeEnd();
  }

  /** Ends the exchange once the response is out and the request fully read. */
  private void maybeEnd() {
    if (phase != ExchangePhase.RESPONDED || !body.complete()) {
      conn.maybeRead();
      return;
    }
    if (upstream != null && body != BodyFate.SENT) {
      upstream.doNotReuse(); // the upstream did not get the whole request: its connection is unframed
    }
    end(true);
  }

  /** Ends the exchange because a connection died: accounting still happens once. */
  void abort(String why) {
    if (ended()) {
      return;
    }
    LOG.debug("exchange aborted: {}", why);
    keepAlive = false;
    end(false);
  }

  private void end(boolean clean) {
    enter(ExchangePhase.ENDED);
    log.end(this, clean);
    releaseBuffers();
    relay = null;
    if (accounting != null) {
      accounting.settle(state.limiter, requestBytes + responseBytes);
    }
    if (upstream != null) {
      upstream.finish(clean);
      upstream = null;
    }
    conn.finished(this, clean && keepAlive);
  }

  /** Gives the upstream connection up mid-way: the body, if it was going there, is held until the answer decides. */
  private void closeUpstream() {
    if (upstream != null) {
      upstream.close();
      upstream = null;
    }
    if (body == BodyFate.FORWARDING) {
      body = BodyFate.HELD;
    }
  }

  String path() {
    return Triage.path(request.uri());
  }
}
