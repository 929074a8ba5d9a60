package dev.headroom.gateway.internal;

import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.StoreException;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.vend.VendDecision;
import dev.headroom.vend.format.VendRequest;
import dev.headroom.vend.format.VendRequestException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request and its response, on a {@link ProxyHandler client connection}. Its life, in calls:
 * {@link #begin()} asks {@link Admission} what becomes of the request; a local answer goes out
 * through {@link #local}; a forwarded request is decided against its policies by {@link QuotaCheck}
 * (a vend call by {@link VendCall}), then written upstream by {@link UpstreamRequestWriter}
 * ({@link #connected}); the
 * response head picks the {@link ResponseRelay} that carries the body back ({@link #upstreamHead});
 * {@link #end} settles the accounting once, whichever way the exchange ends.
 *
 * <p>Accounting: the decision's concurrency leases are released and its content bytes charged
 * exactly once, when the exchange ends, whether it completes or either connection dies.
 *
 * <p>Confined to the client channel's event loop; the upstream channel is on the same loop.
 */
final class Exchange {
  private static final Logger LOG = LoggerFactory.getLogger(Exchange.class);

  final ProxyHandler conn;
  final GatewayState state;
  final Snapshot snap;
  final HttpRequest request;
  final RefusalFormat format;
  private final long maxBody;
  CompiledRoute route;
  Decision decision;
  /** The allowed decision's content-bytes outcomes, charged when the exchange ends. */
  final List<PolicyOutcome> byteOutcomes = new ArrayList<>();
  private UpstreamPool pool;
  Channel upstream;
  private UpstreamHandler upstreamHandler;
  private UpstreamResponseDecoder decoder;
  /** The path the response takes to the client, once its head arrived. */
  ResponseRelay relay;
  private long upstreamSentNanos;
  /** Whether the upstream's response head is awaited, and until when (timers' time). */
  boolean awaitingResponse;
  long responseDeadline;
  /** Whether the request body goes upstream in chunks (it came in chunks). */
  private boolean chunkedUp;

  boolean requestComplete;
  private boolean requestSent;
  private boolean discarding; // request body read and dropped (answered locally or early)
  private boolean forwarding; // request body goes upstream
  private boolean responseStarted;
  boolean responseComplete;
  boolean keepAlive;
  private boolean upstreamReusable = true;
  private boolean ended;
  /** Whether the client connection holds writes not yet flushed (flushed at the read batch's end). */
  boolean clientUnflushed;
  private long requestBytes;
  long responseBytes;
  private long progressSeen = -1;
  private long progressSince;

  // vend routes (seed 003): the call's envelope, read whole, and its decision
  VendRoutes vend;
  private boolean vendCollecting;
  private ByteBuf vendBody;
  VendRequest vendCall;
  VendDecision vendDecision;

  Exchange(ProxyHandler conn, Snapshot snap, HttpRequest request) {
    this.conn = conn;
    this.state = conn.state;
    this.snap = snap;
    this.request = request;
    this.keepAlive = HttpUtil.isKeepAlive(request);
    this.format = snap.vocabulary().format(request.headers().get(HttpHeaderNames.ACCEPT));
    this.maxBody = snap.config().limits().maxBodyBytes();
  }

  boolean acceptsBody() {
    return discarding || vendCollecting || (forwarding && !requestSent && upstream != null && upstream.isActive());
  }

  boolean wantsRequestData() {
    if (requestComplete) {
      return false;
    }
    if (discarding || vendCollecting) {
      return true;
    }
    return forwarding && upstream != null && upstream.isWritable();
  }

  boolean http10() {
    return request.protocolVersion().equals(HttpVersion.HTTP_1_0);
  }

  // ---- admission ----

  void begin() {
    requestComplete = request.decoderResult().isFailure() || request instanceof LastHttpContent;
    Admission a = Admission.of(snap, request, format, state.discoveryDocument);
    if (a instanceof Admission.Local l) {
      if (l.body() == Admission.Body.UNREAD) {
        keepAlive = false; // the body is not read: the connection cannot be reused
        requestComplete = true;
      } else {
        discardBody();
      }
      local(l.response());
    } else if (a instanceof Admission.Vend v) {
      route = v.route();
      vend = v.vend();
      if (HttpUtil.is100ContinueExpected(request)) {
        conn.ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
      }
      vendCollecting = true;
      long declared = HttpUtil.getContentLength(request, -1L);
      vendBody = conn.ctx.alloc().heapBuffer((int) Math.min(Math.max(declared, 256), vendMaxBytes()));
      if (requestComplete) {
        vendRequestComplete();
      }
    } else {
      route = ((Admission.Forward) a).route();
      QuotaCheck.decide(this);
    }
  }

  private void discardBody() {
    discarding = true;
    forwarding = false;
  }

  // ---- the decision (QuotaCheck), and its two ends ----

  boolean ended() {
    return ended;
  }

  /** The request's policies allow it: it goes upstream. */
  void allowed(Decision d) {
    decision = d;
    connect();
  }

  /** The request is answered without going upstream (a refusal, the store failing); its body is dropped. */
  void refused(LocalResponse r) {
    discardBody();
    local(r);
  }

  // ---- the request upstream ----

  private void connect() {
    pool = snap.pools().get(route.route().upstream());
    if (vend == null && HttpUtil.is100ContinueExpected(request)) {
      conn.ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
    }
    Future<Channel> f = pool.acquire(conn.ctx.channel().eventLoop());
    if (f.isDone()) {
      connected(f);
    } else {
      f.addListener(x -> connected(f));
    }
  }

  private void connected(Future<Channel> f) {
    if (ended) {
      if (f.isSuccess()) {
        f.getNow().close();
      }
      return;
    }
    if (!f.isSuccess()) {
      upstreamFailed(f.cause());
      return;
    }
    upstream = f.getNow();
    upstreamHandler = (UpstreamHandler) upstream.pipeline().get(UpstreamPool.EXCHANGE);
    upstreamHandler.attach(this::onUpstream);
    decoder = (UpstreamResponseDecoder) upstream.pipeline().get(UpstreamPool.DECODER);
    decoder.expectNoBody(request.method().equals(HttpMethod.HEAD));
    decoder.dechunk(false);
    forwarding = true;
    String forFor = conn.peerText();
    String host = request.headers().get(HttpHeaderNames.HOST);
    String forwarded = conn.forwardedElement(forFor, host);
    if (vendBody != null) {
      // a vend call: its body was read whole to be decided; it goes up in one piece
      upstream.write(UpstreamRequestWriter.head(request, host, forFor, forwarded, false, vendBody.readableBytes(),
          conn.ctx.alloc()), upstream.voidPromise());
      ByteBuf body = vendBody;
      vendBody = null;
      requestSent = true;
      upstreamSentNanos = conn.now();
      awaitResponse();
      upstream.writeAndFlush(body, upstream.voidPromise());
      upstream.read();
      return;
    }
    chunkedUp = HttpUtil.isTransferEncodingChunked(request);
    upstream.write(UpstreamRequestWriter.head(request, host, forFor, forwarded, chunkedUp, -1, conn.ctx.alloc()),
        upstream.voidPromise());
    upstreamSentNanos = conn.now();
    awaitResponse();
    if (requestComplete) {
      requestSent = true;
      if (chunkedUp) {
        upstream.write(Unpooled.wrappedBuffer(UpstreamRequestWriter.LAST_CHUNK), upstream.voidPromise());
      }
    }
    upstream.flush();
    upstream.read();
    conn.drain();
    conn.maybeRead();
  }

  /**
   * Starts the response timeout. A failed write to the upstream needs no listener: the void
   * promise fires exceptionCaught on the upstream channel, which ends its reuse (onUpstream ERROR).
   */
  private void awaitResponse() {
    awaitingResponse = true;
    responseDeadline = upstreamSentNanos + snap.config().timeouts().response().toNanos();
    conn.ensureTimer(responseDeadline);
  }

  /**
   * Called by the connection's timer: times the exchange out if its response head is overdue.
   * Returns whether a head is still awaited (its deadline is then {@link #responseDeadline}).
   */
  boolean checkResponseDeadline(long now) {
    if (!awaitingResponse || ended) {
      return false;
    }
    if (now - responseDeadline >= 0) {
      awaitingResponse = false;
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
    int n = c.content().readableBytes();
    requestBytes += n;
    if (last) {
      requestComplete = true;
    }
    if (discarding) {
      c.release();
      if (!last && requestBytes > maxBody) {
        // a body answered already is read and dropped only up to the body bound; past it the
        // connection ends instead of carrying an unbounded upload nobody wants
        keepAlive = false;
        requestComplete = true;
        maybeEnd();
        return;
      }
      if (last) {
        maybeEnd();
      }
      return;
    }
    if (vendCollecting && requestBytes > vendMaxBytes()) {
      c.release();
      vendTooLarge(OptionalLong.empty());
      return;
    }
    if (requestBytes > maxBody) {
      c.release();
      upstreamReusable = false;
      keepAlive = false;
      requestComplete = true;
      if (responseStarted) {
        abort("request body over the limit after the response started");
      } else {
        closeUpstream();
        local(snap.vocabulary().error(GatewayMessages.contentTooLarge(maxBody), format, path()));
      }
      return;
    }
    if (vendCollecting) {
      vendBody.writeBytes(c.content()); // within vendMaxBytes(): checked above
      c.release();
      if (last) {
        vendRequestComplete();
      }
      return;
    }
    if (last) {
      requestSent = true;
    }
    ByteBuf piece = UpstreamRequestWriter.body(c, last, chunkedUp, conn.ctx.alloc());
    if (piece.isReadable()) {
      upstream.writeAndFlush(piece, upstream.voidPromise());
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
    keepAlive = false;
    requestComplete = true;
    upstreamReusable = false;
    if (discarding) {
      maybeEnd(); // answered already: nothing more can be read on this connection
      return;
    }
    closeUpstream();
    if (responseStarted) {
      abort("request body malformed after the response started: " + cause.getMessage());
      return;
    }
    LOG.debug("request body framing invalid", cause);
    local(snap.vocabulary().error(GatewayMessages.malformedRequestBody(), format, path()));
  }

  void clientWritable() {
    if (upstream != null && responseStarted && !responseComplete && upstream.isActive()) {
      upstream.read();
    }
  }

  // ---- the response ----

  private void onUpstream(UpstreamHandler.Event e, Object msg) {
    if (ended) {
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
        case ERROR -> {
          upstreamReusable = false;
          upstream.close();
        }
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
      LOG.warn("upstream {} sent an invalid response to {} {}: {}", pool.name(), request.method(), path(),
          h.failure());
      upstreamReusable = false;
      closeUpstream();
      if (!responseStarted || relay != null && relay.nothingSent()) {
        // the head was valid but its body broke before any of it reached the client (an
        // invalid first chunk-size line): what was kept back is dropped and 502 said instead
        if (relay != null) {
          relay.release();
          relay = null;
        }
        clientUnflushed = false;
        badGateway(GatewayMessages.UPSTREAM_RESPONSE_INVALID);
      } else {
        abort("upstream response malformed: " + h.failure());
      }
      return;
    }
    int code = h.status();
    if (code < 200) {
      upstream.read(); // interim responses: 100-continue was answered already
      return;
    }
    awaitingResponse = false;
    state.metrics.upstreamLatency(pool.name(), conn.now() - upstreamSentNanos);
    responseStarted = true;
    if (!h.keepAlive()) {
      upstreamReusable = false;
    }
    if (NormalisedErrorRelay.applies(route, h)) {
      relay = new NormalisedErrorRelay(this, code, h.get("allow"));
      upstream.read(); // the body is read and dropped
      return;
    }
    if (VendRelay.transforms(this, h)) {
      decoder.dechunk(true);
      relay = new VendRelay(this, h);
      upstream.read();
      return;
    }
    ResponseHead.Framing framing = h.framing();
    if (framing == ResponseHead.Framing.NONE || framing == ResponseHead.Framing.FIXED
        || framing == ResponseHead.Framing.CHUNKED && !http10()) {
      relay = new RawRelay(this, h);
    } else {
      // until-close bodies, and chunked ones for an HTTP/1.0 client, are re-framed by the encoder
      HttpResponse response = h.toHttpResponse();
      String codings = ReframedRelay.codingsBeforeChunked(response.headers());
      if (codings != null && http10()) {
        untransferable(codings);
        return;
      }
      decoder.dechunk(true);
      relay = new ReframedRelay(this, ReframedRelay.clientResponse(this, response));
    }
    // not flushed alone: the head leaves with the body in one write (see upstreamReadComplete)
    clientUnflushed = true;
    pullUpstream();
  }

  /** The upstream's read batch is over: flush what it produced to the client, once. */
  private void upstreamReadComplete() {
    if (relay != null) {
      relay.readComplete();
    }
    if (clientUnflushed) {
      clientUnflushed = false;
      conn.ctx.flush();
    }
  }

  /** Reads more of the response when the client can take it. */
  void pullUpstream() {
    if (conn.ctx.channel().isWritable()) {
      upstream.read();
    }
    // else: channelWritabilityChanged -> clientWritable() reads again
  }

  /** The response's last piece is being written: it is complete, and nothing waits for a flush. */
  void lastWrite() {
    responseComplete = true;
    awaitingResponse = false;
    clientUnflushed = false;
  }

  private void responseTimedOut() {
    if (ended || responseStarted) {
      return;
    }
    upstreamReusable = false;
    closeUpstream();
    if (!requestComplete) {
      discardBody();
    }
    state.metrics.upstreamLatency(pool.name(), conn.now() - upstreamSentNanos);
    Duration timeout = snap.config().timeouts().response();
    local(snap.vocabulary().error(GatewayMessages.upstreamTimedOut(timeout), format, path()));
  }

  /**
   * Whether the client owes request body bytes the gateway is ready to read and has sent none
   * for at least {@code idle} (checked by the connection's timer). Time the gateway itself holds
   * the body back (a slow upstream) does not count.
   */
  boolean requestStalled(long now, long idle) {
    if (requestComplete || ended) {
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
    upstreamReusable = false;
    if (responseStarted) {
      abort("request body stalled");
      return;
    }
    closeUpstream();
    requestComplete = true; // nothing more is read: the connection closes after the answer
    local(snap.vocabulary().error(GatewayMessages.requestBodyTimedOut(snap.config().timeouts().idle()), format, path()));
  }

  private void upstreamFailed(Throwable cause) {
    if (!requestComplete) {
      discardBody();
    }
    badGateway(GatewayMessages.upstreamUnreachable(cause));
  }

  /**
   * 502 for an HTTP/1.0 client whose response carries a transfer coding such as gzip: the data
   * re-framed without it would reach the client still coded and unlabelled. The upstream
   * connection is dropped unread.
   */
  private void untransferable(String codings) {
    upstreamReusable = false;
    closeUpstream();
    if (!requestComplete) {
      discardBody();
    }
    local(snap.vocabulary().error(GatewayMessages.untransferable(codings), format, path()));
  }

  private void badGateway(String detail) {
    if (!requestComplete) {
      discardBody();
    }
    local(snap.vocabulary().error(GatewayMessages.badGateway(detail), format, path()));
  }

  private void upstreamClosed() {
    if (ended || responseComplete) {
      return;
    }
    upstreamReusable = false;
    if (!responseStarted) {
      awaitingResponse = false;
      badGateway(GatewayMessages.UPSTREAM_CLOSED_EARLY);
    } else {
      // mid-body: the client cannot be told anything else; close so it sees a truncated body
      abort("upstream closed mid-response");
    }
  }

  // ---- vend calls (seed 003; the gateway part of the vend rate-limit extension) ----

  /** The envelope is read whole: {@link VendCall} decides it. */
  private void vendRequestComplete() {
    vendCollecting = false;
    VendCall.decide(this, ByteBufUtil.getBytes(vendBody));
  }

  /** A vend call the store allowed, or one the gateway answers itself. */
  void vendAllowed() {
    connect();
  }

  void answer(LocalResponse r) {
    local(r);
  }

  private long vendMaxBytes() {
    return Admission.vendMaxBytes(vend, maxBody);
  }

  /**
   * A vend call's body over {@link #vendMaxBytes()}, found while collecting it: answered as
   * headroom-vend's reader answers an oversized envelope (see {@link Admission}). The rest of the
   * body is not read, so the connection closes after the answer.
   */
  private void vendTooLarge(OptionalLong length) {
    keepAlive = false;
    requestComplete = true;
    local(Admission.vendError(VendRequestException.bodyTooLarge(vendMaxBytes(), length)));
  }

  private void releaseBuffers() {
    if (vendBody != null) {
      vendBody.release();
      vendBody = null;
    }
    vendCollecting = false;
    if (relay != null) {
      relay.release();
    }
  }

  // ---- local responses and the end ----

  /** Answers locally; the request body, if any, is read and dropped. */
  private void local(LocalResponse r) {
    if (vendCollecting && !requestComplete) {
      discardBody();
    }
    releaseBuffers();
    if (forwarding && !requestComplete) {
      discardBody();
    }
    responseStarted = true;
    responseComplete = true;
    writeLocal(r);
  }

  /**
   * Writes a response the gateway produced, as bytes past the HTTP encoder: status line, its
   * fields, Content-Type and Content-Length, the connection's fate, the body (none for HEAD).
   */
  void writeLocal(LocalResponse r) {
    state.metrics.localResponse(r.status().code());
    boolean head = request.method().equals(HttpMethod.HEAD);
    if (!requestComplete && (!discarding || HttpUtil.is100ContinueExpected(request))) {
      // a client that expected 100-continue and got a final answer may never send its body
      // (RFC 9110 section 10.1.1): the connection ends rather than wait for it
      keepAlive = false;
      requestComplete = true; // what still comes of the body is dropped by the lingering close
    }
    byte[] body = r.body();
    byte[] fields = r.head();
    ByteBuf b = conn.ctx.alloc().buffer(fields.length + 48 + (head ? 0 : body.length));
    b.writeBytes(fields);
    if (!keepAlive) {
      b.writeBytes(CONNECTION_CLOSE);
    } else if (http10()) {
      b.writeBytes(CONNECTION_KEEP_ALIVE);
    }
    b.writeShort(CRLF);
    if (!head) {
      b.writeBytes(body);
    }
    whenWritten(conn.rawOut.writeAndFlush(b));
    conn.maybeRead();
  }

  /**
   * Ends the response when its last write is done: at once when the flush wrote it all (the
   * usual case, so no listener is allocated or notified), else when the socket takes the rest.
   */
  void whenWritten(ChannelFuture f) {
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
    responseComplete = true;
    maybeEnd();
  }

  /** Ends the exchange once the response is out and the request fully read. */
  private void maybeEnd() {
    if (ended || !responseComplete || !requestComplete) {
      conn.maybeRead();
      return;
    }
    if (upstream != null && !requestSent) {
      upstreamReusable = false;
    }
    end(true);
  }

  /** Ends the exchange because a connection died: accounting still happens once. */
  void abort(String why) {
    if (ended) {
      return;
    }
    LOG.debug("exchange aborted: {}", why);
    upstreamReusable = false;
    keepAlive = false;
    end(false);
  }

  private void end(boolean clean) {
    ended = true;
    releaseBuffers();
    relay = null;
    awaitingResponse = false;
    if (decision != null) {
      state.limiter.release(decision);
      long bytes = requestBytes + responseBytes;
      if (bytes > 0) {
        for (PolicyOutcome o : byteOutcomes) {
          try {
            state.limiter.charge(o.policy(), o.key(), bytes);
          } catch (StoreException e) {
            LOG.warn("could not charge {} bytes to policy {}", bytes, o.policy().name(), e);
          }
        }
      }
    }
    if (upstream != null) {
      if (upstreamHandler != null) {
        upstreamHandler.detach();
      }
      if (clean && upstreamReusable && upstream.isActive() && decoder.idle()) {
        pool.release(upstream);
      } else {
        upstream.close();
      }
      upstream = null;
    }
    conn.finished(this, clean && keepAlive);
  }

  private void closeUpstream() {
    awaitingResponse = false;
    if (upstream != null) {
      if (upstreamHandler != null) {
        upstreamHandler.detach();
      }
      upstream.close();
      upstream = null;
    }
    forwarding = false;
  }

  String path() {
    return Admission.path(request.uri());
  }

  private static final byte[] CONNECTION_CLOSE = "connection: close\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] CONNECTION_KEEP_ALIVE =
      "connection: keep-alive\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int CRLF = ('\r' << 8) | '\n';
}
