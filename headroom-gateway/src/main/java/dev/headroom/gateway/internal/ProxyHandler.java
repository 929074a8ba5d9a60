package dev.headroom.gateway.internal;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.StoreException;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.GatewayConfig.Policy;
import dev.headroom.gateway.internal.HttpSpeech.GatewayError;
import dev.headroom.gateway.internal.HttpSpeech.LimitRefusal;
import dev.headroom.gateway.internal.HttpSpeech.RefusalKind;
import dev.headroom.gateway.internal.HttpSpeech.RequestFacts;
import dev.headroom.http.body.ProblemType;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.discovery.EntityTag;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.redis.StoreOverloadedException;
import dev.headroom.vend.CallIdentity;
import dev.headroom.vend.VendDecision;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.format.VendRequest;
import dev.headroom.vend.format.VendRequestException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection: routes each request, decides it against its policies, and either answers
 * itself (refusals, errors, discovery) or streams it to an upstream connection and streams the
 * response back.
 *
 * <p>Flow control: the client channel and the upstream channel both run with auto-read off. A
 * channel is read again only when the channel its data goes to is writable, so neither side ever
 * buffers more than one read's worth: a slow client slows the upstream and a slow upstream slows
 * the client (back-pressure, as in Netty's proxy examples). Requests on one connection are served
 * one at a time; pipelined requests wait in {@link #pending} (at most one read's worth).
 *
 * <p>Accounting: a request's concurrency leases are released and its content bytes charged exactly
 * once, when its exchange ends, whether it completes or either connection dies.
 *
 * <p>Thread-safety: confined to the client channel's event loop; the upstream channel is opened on
 * the same loop, so its events arrive on the same thread.
 */
final class ProxyHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(ProxyHandler.class);


  private static final String DISCOVERY_WELL_KNOWN = "/.well-known/limits";

  /** Retry-After of a 503 when the store cannot decide: long enough for a reconnect, short enough to retry soon. */
  static final long STORE_RETRY_AFTER_SECONDS = 2;
  /** Retry-After of a 503 when the gateway's own queue to the store is full (StoreOverloadedException). */
  static final long OVERLOAD_RETRY_AFTER_SECONDS = 1;
  private static final String DISCOVERY_API = "/api/limits";

  static final byte[] HTTP_1_1_SP = "HTTP/1.1 ".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] SP_HTTP_1_1 = " HTTP/1.1".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] LAST_CHUNK = "0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] CRLF_LAST_CHUNK = "\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  static final byte[] CRLF_BYTES = "\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int CRLF = ('\r' << 8) | '\n';
  private static final int COLON_SP = (':' << 8) | ' ';

  private final GatewayState state;
  private final ArrayDeque<Object> pending = new ArrayDeque<>();
  private ChannelHandlerContext ctx;
  /** Writes that bypass the HTTP encoder: the codec's own context (see GatewayServer). */
  private ChannelHandlerContext rawOut;
  private Exchange current;
  private boolean closing;
  private boolean draining;
  private boolean lingering;

  /**
   * Partition keys that depend on nothing but the peer's address (client-ip partitioning, with
   * the peer not a trusted proxy), derived once per connection and policy: the address of a
   * connection never changes. Keyed by the policy object, so a reload's new policies derive anew.
   */
  private Snapshot peerKeySnapshot;
  private Policy[] peerKeyPolicies = new Policy[0];
  private PartitionKey[] peerKeys = new PartitionKey[0];

  /** The peer's address as text (the node of Forwarded's "for", and X-Forwarded-For's entry); per connection. */
  private String peerText;
  /** The Forwarded element last sent for this connection, and the Host it was made with. */
  private String forwardedHost;
  private String forwardedElement;

  private InetAddress peerAddress() {
    return ctx.channel().remoteAddress() instanceof InetSocketAddress isa ? isa.getAddress() : null;
  }

  private String peerText() {
    String t = peerText;
    if (t == null) {
      InetAddress peer = peerAddress();
      t = peer == null ? "unknown" : peer.getHostAddress();
      peerText = t;
    }
    return t;
  }

  /**
   * This hop's Forwarded element (RFC 7239 section 4): for, proto and host. Requests on one
   * connection nearly always carry the same Host, so the element is kept per connection with it.
   */
  private String forwardedElement(String forFor, String host) {
    if (forwardedElement != null && java.util.Objects.equals(host, forwardedHost)) {
      return forwardedElement;
    }
    String fwd = "for=" + (forFor.indexOf(':') >= 0 ? "\"[" + forFor + "]\"" : forFor) + ";proto=http"
        + (host == null ? "" : ";host=\"" + host.replace("\"", "") + "\"");
    forwardedHost = host;
    forwardedElement = fwd;
    return fwd;
  }

  private PartitionKey peerKey(Snapshot snap, Policy p, RequestFacts facts) {
    if (peerKeySnapshot != snap) {
      peerKeySnapshot = snap;
      peerKeyPolicies = new Policy[0];
      peerKeys = new PartitionKey[0];
    }
    for (int i = 0; i < peerKeyPolicies.length; i++) {
      if (peerKeyPolicies[i] == p) {
        return peerKeys[i];
      }
    }
    HttpSpeech.Derived d = snap.speech().derive(p, facts);
    if (d.peerOnly() && peerKeyPolicies.length < 16) {
      peerKeyPolicies = java.util.Arrays.copyOf(peerKeyPolicies, peerKeyPolicies.length + 1);
      peerKeys = java.util.Arrays.copyOf(peerKeys, peerKeys.length + 1);
      peerKeyPolicies[peerKeyPolicies.length - 1] = p;
      peerKeys[peerKeys.length - 1] = d.key();
    }
    return d.key();
  }

  /** Longest a connection is kept half-closed after a response that ends it. */
  static final java.time.Duration LINGER = java.time.Duration.ofSeconds(2);

  ProxyHandler(GatewayState state) {
    this.state = state;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    lastActivity = System.nanoTime();
    GatewayConfig.Timeouts t = state.snapshot().config().timeouts();
    ensureTimer(lastActivity + Math.min(t.idle().toNanos(), t.response().toNanos()));
    ctx.read();
  }

  // ---- timeouts: one scheduled task per connection, re-armed lazily ----

  private ScheduledFuture<?> timer;
  private long timerAt;
  /** When the connection last finished an exchange (or opened), for the idle timeout. */
  private long lastActivity;

  /**
   * Makes sure the connection's timer fires no later than {@code deadline} (nanoTime). A timer
   * already due earlier is kept: when it fires it re-checks and re-arms. The timer never sleeps
   * longer than the shorter of the idle and response timeouts, so a new exchange's response
   * deadline always finds a timer due before it: scheduling costs nothing per request, where a
   * scheduled task per request (and its cancellation) cost a priority-queue insert and removal.
   */
  private void ensureTimer(long deadline) {
    if (timer != null) {
      if (timerAt - deadline <= 0) {
        return;
      }
      timer.cancel(false);
    }
    timerAt = deadline;
    timer = ctx.executor().schedule(this::timerFired, Math.max(0, deadline - System.nanoTime()),
        TimeUnit.NANOSECONDS);
  }

  private void timerFired() {
    timer = null;
    if (closing || lingering || !ctx.channel().isActive()) {
      return;
    }
    long now = System.nanoTime();
    GatewayConfig.Timeouts t = state.snapshot().config().timeouts();
    long step = Math.min(t.idle().toNanos(), t.response().toNanos());
    if (current != null) {
      // an exchange in progress is never idle, but its request body may stall (timeouts.idle)
      // and its response head may be overdue (timeouts.response)
      Exchange ex = current;
      if (ex.requestStalled(now, t.idle().toNanos())) {
        ex.requestTimedOut();
        return;
      }
      boolean awaiting = ex.checkResponseDeadline(now);
      if (timer == null && !closing && ctx.channel().isActive()) {
        long next = now + step;
        ensureTimer(awaiting && ex.responseDeadline - next < 0 ? ex.responseDeadline : next);
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
      ctx.close(); // idle keep-alive connection (timeouts.idle)
      return;
    }
    // nanoTime values are compared by their difference only: Math.min would pick the wrong one
    // when exactly one of them has wrapped past Long.MAX_VALUE
    long nextCheck = now + step;
    ensureTimer(idleDeadline - nextCheck < 0 ? idleDeadline : nextCheck);
  }

  /**
   * The connection's next request head was not complete within {@code timeouts.idle} of the
   * connection's opening or its last exchange: 408 and the connection closes (RFC 9110 section
   * 15.5.9), answered as an exchange of a request that failed to decode, so it is written, counted
   * and closed as every other refused request is.
   */
  private void headTimedOut(java.time.Duration idle) {
    io.netty.handler.codec.http.DefaultFullHttpRequest r = new io.netty.handler.codec.http.DefaultFullHttpRequest(
        HttpVersion.HTTP_1_1, HttpMethod.GET, "/", Unpooled.EMPTY_BUFFER);
    r.setDecoderResult(DecoderResult.failure(new RequestDecoder.Refusal(new GatewayError(408, "request_timeout",
        "The request head was not complete within " + spoken(idle) + ". Send the request again.",
        "A connection is held open only while its request makes progress, so that slow senders cannot tie up the"
            + " gateway.",
        Map.of("timeoutSeconds", seconds(idle))))));
    start(r);
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.rawOut = ctx.pipeline().context(GatewayServer.CODEC);
  }

  /**
   * One field line of a head the gateway writes. Characters go out as ISO-8859-1 bytes: the
   * request decoder read each byte as one such character, so forwarded values keep their bytes.
   */
  /** Field lines and name prefixes the gateway writes on every exchange, encoded once. */
  private static final byte[] FORWARDED_ = ascii("forwarded: ");
  private static final byte[] X_FORWARDED_FOR_ = ascii("x-forwarded-for: ");
  private static final byte[] X_FORWARDED_HOST_ = ascii("x-forwarded-host: ");
  private static final byte[] X_FORWARDED_PROTO_HTTP = ascii("x-forwarded-proto: http\r\n");
  private static final byte[] CONNECTION_CLOSE = ascii("connection: close\r\n");
  private static final byte[] CONNECTION_KEEP_ALIVE = ascii("connection: keep-alive\r\n");

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /** A field line whose name (with its colon and space) is encoded already. */
  static void field(HeadBytes b, byte[] nameColonSp, CharSequence value) {
    b.writeBytes(nameColonSp);
    b.latin1(value);
    b.writeShort(CRLF);
  }

  static void field(HeadBytes b, CharSequence name, CharSequence value) {
    b.latin1(name);
    b.writeShort(COLON_SP);
    b.latin1(value);
    b.writeShort(CRLF);
  }

  private enum RequestField { KEEP, SKIP, FORWARDED, XFF, CONTENT_LENGTH, X_PROTO, X_HOST }

  /** How a client request field is treated on its way upstream, by name (any case). */
  static RequestField requestField(CharSequence name) {
    for (String hop : ResponseHead.HOP_BY_HOP_NAMES) {
      if (hop.length() == name.length() && is(name, hop)) {
        return RequestField.SKIP;
      }
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
    return io.netty.util.AsciiString.contentEqualsIgnoreCase(name, lower);
  }

  /** Field names listed in Connection (lower case), which are hop-by-hop too; null when none. */
  private static java.util.Set<String> connectionListed(HttpHeaders h) {
    if (!h.contains(HttpHeaderNames.CONNECTION)) {
      return null;
    }
    List<String> values = h.getAll(HttpHeaderNames.CONNECTION);
    if (values.isEmpty()) {
      return null;
    }
    java.util.Set<String> names = new java.util.HashSet<>();
    for (String v : values) {
      for (String token : v.split(",")) {
        String t = token.trim().toLowerCase(Locale.ROOT);
        if (!t.isEmpty() && !t.equals("close") && !t.equals("keep-alive")) {
          names.add(t);
        }
      }
    }
    return names.isEmpty() ? null : names;
  }

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

  /** System.nanoTime() when the event being handled (a read from either side) was first timed. */
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

  /** The current event's time, or the clock outside an event (write completions, timers). */
  private long now() {
    if (!inEvent) {
      return System.nanoTime();
    }
    if (!eventTimed) {
      eventNanos = System.nanoTime();
      eventTimed = true;
    }
    return eventNanos;
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (lingering) {
      ctx.read(); // dropping what arrives until the client closes
      return;
    }
    maybeRead();
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
      timer.cancel(false);
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

  /** Processes queued messages while the current state can take them. */
  private void drain() {
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
  private void maybeRead() {
    if (!pending.isEmpty()) {
      drain();
    }
    if (closing || !ctx.channel().isActive() || !pending.isEmpty()) {
      return;
    }
    // With the request read, keep a read pending for the next one: the socket stays registered
    // for reading (no epoll_ctl per exchange), and a pipelined request waits in `pending`, which
    // stops further reads until it is served (bounded at one read's worth).
    if (current == null || current.wantsRequestData() || current.requestComplete) {
      ctx.read();
    }
  }

  private void start(HttpRequest request) {
    Snapshot snap = state.snapshot();
    Exchange ex = new Exchange(snap, request);
    current = ex;
    ex.begin();
  }

  /** Called by an exchange once its response is written and its request fully read. */
  private void finished(Exchange ex, boolean keepAlive) {
    if (current != ex) {
      return;
    }
    current = null;
    lastActivity = now();
    if (!keepAlive) {
      closing = true;
      lingeringClose();
      return;
    }
    drain();
    maybeRead();
  }

  /**
   * Closes after a response that ends the connection. Closing a socket with unread request bytes
   * (a body refused with 413 unread) makes the kernel send a reset, which can destroy the response
   * before the client reads it; so the gateway sends its FIN first, reads and drops whatever still
   * arrives, and closes when the client does or after {@link #LINGER}, as servers do with a
   * lingering close.
   */
  private void lingeringClose() {
    if (!(ctx.channel() instanceof io.netty.channel.socket.DuplexChannel duplex) || !ctx.channel().isActive()) {
      ctx.close();
      return;
    }
    lingering = true;
    duplex.shutdownOutput().addListener(f -> {
      if (!f.isSuccess()) {
        ctx.close();
      }
    });
    ctx.executor().schedule(() -> {
      ctx.close();
    }, LINGER.toMillis(), TimeUnit.MILLISECONDS);
    ctx.read();
  }


  /** One request and its response. */
  private final class Exchange {
    private final Snapshot snap;
    private final HttpRequest request;
    private final boolean keepAliveRequested;
    private final RefusalFormat format;
    private CompiledRoute route;
    private Decision decision;
    private final List<PolicyOutcome> byteOutcomes = new ArrayList<>();
    private UpstreamPool pool;
    private Channel upstream;
    private UpstreamHandler upstreamHandler;
    private long upstreamSentNanos;
    private UpstreamResponseDecoder decoder;
    /** Whether the response is forwarded as received (see upstreamHead), not re-encoded. */
    private boolean rawResponse;
    /** Whether the upstream's response head is awaited, and until when (nanoTime). */
    private boolean awaitingResponse;
    private long responseDeadline;

    private boolean requestComplete;
    private boolean requestSent;
    private boolean discarding; // request body read and dropped (answered locally or early)
    private boolean forwarding; // request body goes upstream
    private boolean responseStarted;
    private boolean responseComplete;
    private boolean normalising;
    private boolean keepAlive;
    private boolean upstreamReusable = true;
    private boolean ended;
    private long requestBytes;
    private long responseBytes;
    private final long maxBody;

    Exchange(Snapshot snap, HttpRequest request) {
      this.snap = snap;
      this.request = request;
      this.keepAliveRequested = HttpUtil.isKeepAlive(request);
      this.keepAlive = keepAliveRequested;
      this.format = snap.speech().format(request.headers().get(HttpHeaderNames.ACCEPT));
      this.maxBody = snap.config().limits().maxBodyBytes();
    }

    boolean acceptsBody() {
      return discarding || vendCollecting || (forwarding && requestSent == false && upstream != null && upstream.isActive());
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

    void begin() {
      DecoderResult dr = request.decoderResult();
      if (dr.isFailure()) {
        Throwable cause = dr.cause();
        keepAlive = false;
        requestComplete = true;
        if (cause instanceof TooLongHttpHeaderException) {
          local(snap.speech().error(new GatewayError(431, "request_header_fields_too_large",
              "The request's header fields are larger than " + snap.config().limits().maxHeaderBytes()
                  + " bytes in total.",
              "Header size is bounded so that every connection costs the gateway a bounded amount of memory.",
              Map.of("maxHeaderBytes", snap.config().limits().maxHeaderBytes(), "field", "headers",
                  "expected", "Header fields of at most " + snap.config().limits().maxHeaderBytes() + " bytes in total.")), format, path()));
        } else if (cause instanceof TooLongHttpLineException || cause instanceof TooLongFrameException) {
          local(snap.speech().error(new GatewayError(414, "uri_too_long",
              "The request line is longer than " + snap.config().limits().maxRequestLineBytes() + " bytes.",
              "The request line is bounded so that every connection costs the gateway a bounded amount of memory.",
              Map.of("maxRequestLineBytes", snap.config().limits().maxRequestLineBytes(), "field", "request-line",
                  "expected", "A request line of at most " + snap.config().limits().maxRequestLineBytes() + " bytes.")), format, path()));
        } else if (cause instanceof RequestDecoder.Refusal refusal) {
          local(snap.speech().error(refusal.error(), format, path()));
        } else {
          local(snap.speech().error(new GatewayError(400, "malformed_request",
              "The request could not be parsed as HTTP/1.1: " + cause.getMessage(),
              "Only well-formed requests are forwarded, so that the upstream never sees ambiguous framing.",
              Map.of("expected", "A well-formed HTTP/1.1 request (RFC 9112).")), format, path()));
        }
        return;
      }
      requestComplete = request instanceof LastHttpContent;
      String uri = request.uri();
      int q = uri.indexOf('?');
      String path = q < 0 ? uri : uri.substring(0, q);
      HttpMethod method = request.method();
      if ((path.equals(DISCOVERY_WELL_KNOWN) || path.equals(DISCOVERY_API))
          && (method.equals(HttpMethod.GET) || method.equals(HttpMethod.HEAD))) {
        discardBody();
        discovery(method.equals(HttpMethod.HEAD));
        return;
      }
      RouteTable.Match m = snap.routes().match(method.name(), path);
      if (m instanceof RouteTable.NotFound) {
        discardBody();
        local(snap.speech().error(new GatewayError(404, "not_found",
            "No route of this service matches " + method.name() + " " + path + ".",
            "The gateway only forwards the routes it is configured for; the discovery document at "
                + DISCOVERY_WELL_KNOWN + " lists them.",
            Map.of("discoveryUrl", DISCOVERY_WELL_KNOWN)), format, path()));
        return;
      }
      if (m instanceof RouteTable.WrongMethod w) {
        discardBody();
        LocalResponse r = snap.speech().error(new GatewayError(405, "method_not_allowed",
            "The route " + path + " accepts " + String.join(", ", w.allowed()) + ", not " + method.name() + ".",
            "Each route accepts only the methods its service implements.",
            Map.of("allowedMethods", List.copyOf(w.allowed()))), format, path());
        r.headers().set(HttpHeaderNames.ALLOW, String.join(", ", w.allowed()));
        local(r);
        return;
      }
      route = ((RouteTable.Found) m).route();
      vend = snap.vend().get(route.route());
      long declared = HttpUtil.getContentLength(request, -1L);
      if (vend != null && declared > vendMaxBytes()) {
        vendTooLarge(OptionalLong.of(declared));
        return;
      }
      if (declared > maxBody) {
        keepAlive = false; // the body is not read: the connection cannot be reused
        requestComplete = true;
        local(tooLarge());
        return;
      }
      if (vend != null) {
        if (HttpUtil.is100ContinueExpected(request)) {
          ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
        }
        vendCollecting = true;
        vendBody = ctx.alloc().heapBuffer((int) Math.min(Math.max(declared, 256), vendMaxBytes()));
        if (requestComplete) {
          vendRequestComplete();
        }
        return;
      }
      decide();
    }

    private LocalResponse tooLarge() {
      return snap.speech().error(new GatewayError(413, "content_too_large",
          "The request body is larger than " + maxBody + " bytes.",
          "Request bodies are bounded so that one caller cannot tie up the service with an unbounded upload.",
          Map.of("maxBodyBytes", maxBody, "field", "body",
              "expected", "A request body of at most " + maxBody + " bytes.")), format, path());
    }

    private void discardBody() {
      discarding = true;
      forwarding = false;
    }

    // ---- decision ----

    private void decide() {
      List<Policy> policies = route.policies();
      if (policies.isEmpty()) {
        connect();
        return;
      }
      long now = Long.MIN_VALUE; // read once, and only for a policy that escalates
      RequestFacts facts = new RequestFacts(peerAddress(), request.method().name(), path(), request.headers(),
          route.route().path());
      List<Acquisition> acquisitions = new ArrayList<>(policies.size());
      List<PartitionKey> keys = new ArrayList<>(policies.size());
      for (Policy p : policies) {
        PartitionKey key = peerKey(snap, p, facts);
        keys.add(key);
        // only a policy with escalation can have blocked a partition (onRefused below)
        long blocked = 0;
        if (p.escalation().isPresent()) {
          if (now == Long.MIN_VALUE) {
            now = state.ticker.read();
          }
          blocked = state.escalations.blockedFor(p.name(), key, now);
        }
        if (blocked > 0) {
          state.metrics.decision(p.name(), "blocked");
          discardBody();
          long seconds = Math.max(1, (blocked + 999_999_999L) / 1_000_000_000L);
          local(snap.speech().refusal(new LimitRefusal(RefusalKind.ABNORMAL_USAGE_DETECTED, p, null, seconds,
              route.route(), path()), format));
          return;
        }
        QuotaPolicy effective = state.capacity.effective(p.quota());
        // content-bytes: admit while not in debt, charge the bytes transferred when the exchange ends
        long cost = effective.unit() == QuotaUnit.CONTENT_BYTES ? 0 : 1;
        acquisitions.add(Acquisition.of(effective, key, cost));
      }
      long t0 = System.nanoTime();
      CompletionStage<Decision> stage;
      try {
        stage = state.limiter.acquireAsync(acquisitions);
      } catch (StoreException | IllegalArgumentException e) {
        stage = CompletableFuture.failedFuture(e);
      }
      CompletableFuture<Decision> f = stage.toCompletableFuture();
      if (f.isDone()) {
        decided(f, t0, policies, keys);
      } else {
        f.whenComplete((d, e) -> ctx.executor().execute(() -> decided(f, t0, policies, keys)));
      }
    }

    private void decided(CompletableFuture<Decision> f, long t0, List<Policy> policies, List<PartitionKey> keys) {
      state.metrics.storeLatency(System.nanoTime() - t0);
      Decision d;
      try {
        d = f.join();
      } catch (RuntimeException e) {
        storeFailed(e);
        return;
      }
      if (ended) {
        state.limiter.release(d); // the client left while the store was deciding
        return;
      }
      decision = d;
      List<PolicyOutcome> outcomes = d.outcomes();
      for (int i = 0; i < outcomes.size(); i++) {
        PolicyOutcome o = outcomes.get(i);
        state.metrics.decision(o.policy().name(),
            o.allowed() ? "allowed" : state.capacity.isReduced(o.policy().name()) ? "reduced" : "refused");
        if (d.allowed() && o.policy().unit() == QuotaUnit.CONTENT_BYTES) {
          byteOutcomes.add(o);
        }
      }
      if (d.allowed()) {
        connect();
        return;
      }
      refuse(d, policies, keys);
    }

    /**
     * The store could not decide (a Redis store failing closed): 503 temporary-reduced-capacity
     * (draft-ietf-httpapi-ratelimit-headers-09 section 5.2) with a short Retry-After.
     */
    private void storeFailed(Throwable e) {
      Throwable why = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
      state.storeWarning.warn(state.ticker, "store failed to decide a request on route " + route.route().name()
          + ": " + why);
      discardBody();
      // the gateway's own overload (its queue to Redis full, Redis possibly healthy): shorter wait
      boolean overloaded = why instanceof StoreOverloadedException;
      long retry = overloaded ? OVERLOAD_RETRY_AFTER_SECONDS : STORE_RETRY_AFTER_SECONDS;
      LocalResponse r = snap.speech().error(new GatewayError(503, ProblemType.TEMPORARY_REDUCED_CAPACITY.error(),
          (overloaded ? "The gateway has more requests than it can check right now, so this one is not forwarded."
              : "Quotas cannot be checked right now, so requests are not forwarded.")
              + " Try again in " + retry + (retry == 1 ? " second." : " seconds."),
          "Requests are not forwarded when their quota cannot be checked, so that the service is never overrun.",
          Map.of("type", ProblemType.TEMPORARY_REDUCED_CAPACITY, "retryAfterSeconds", retry)),
          format, path());
      r.headers().set(HttpHeaderNames.RETRY_AFTER, Long.toString(retry));
      local(r);
    }

    private void refuse(Decision d, List<Policy> policies, List<PartitionKey> keys) {
      discardBody();
      PolicyOutcome worst = d.mostConstraining();
      int index = d.outcomes().indexOf(worst);
      Policy policy = policies.get(index);
      long now = Long.MIN_VALUE; // read once, and only for a policy that escalates
      RefusalKind kind = state.capacity.isReduced(policy.name())
          ? RefusalKind.TEMPORARY_REDUCED_CAPACITY : RefusalKind.QUOTA_EXCEEDED;
      long retryAfter = d.retryAfterSeconds();
      for (PolicyOutcome o : d.violated()) {
        int i = d.outcomes().indexOf(o);
        Policy p = policies.get(i);
        if (p.escalation().isPresent()) {
          if (now == Long.MIN_VALUE) {
            now = state.ticker.read();
          }
          long block = state.escalations.onRefused(p.name(), p.escalation().get(), keys.get(i), now,
              o.retryAfter().toNanos());
          if (block > 0) {
            kind = RefusalKind.ABNORMAL_USAGE_DETECTED;
            policy = p;
            retryAfter = Math.max(retryAfter, (block + 999_999_999L) / 1_000_000_000L);
          }
        }
      }
      LocalResponse r = snap.speech().refusal(
          new LimitRefusal(kind, policy, d, retryAfter, route.route(), path()), format);
      local(r);
    }

    // ---- forwarding ----

    private void connect() {
      pool = snap.pools().get(route.route().upstream());
      if (vend == null && HttpUtil.is100ContinueExpected(request)) {
        ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
      }
      Future<Channel> f = pool.acquire(ctx.channel().eventLoop());
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
      if (vendBody != null) {
        // a vend call: its body was read whole to be decided; it goes up in one piece
        upstream.write(upstreamRequestHead(), upstream.voidPromise());
        ByteBuf body = vendBody;
        vendBody = null;
        requestSent = true;
        upstreamSentNanos = now();
        awaitResponse();
        upstream.writeAndFlush(body, upstream.voidPromise());
        upstream.read();
        return;
      }
      upstream.write(upstreamRequestHead(), upstream.voidPromise());
      upstreamSentNanos = now();
      awaitResponse();
      if (requestComplete) {
        requestSent = true;
        if (chunkedUp) {
          upstream.write(Unpooled.wrappedBuffer(LAST_CHUNK), upstream.voidPromise());
        }
        upstream.flush();
      } else {
        upstream.flush();
      }
      upstream.read();
      drain();
      maybeRead();
    }

    /**
     * Starts the response timeout. A failed write to the upstream needs no listener: the void
     * promise fires exceptionCaught on the upstream channel, which ends its reuse (onUpstream ERROR).
     */
    private void awaitResponse() {
      awaitingResponse = true;
      responseDeadline = upstreamSentNanos + snap.config().timeouts().response().toNanos();
      ensureTimer(responseDeadline);
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

    /** Whether the request body goes upstream in chunks (it came in chunks). */
    private boolean chunkedUp;

    /**
     * The upstream request's head, written as bytes: the client's fields as received minus
     * hop-by-hop ones (RFC 9110 section 7.6.1) and Expect, with Forwarded and X-Forwarded-*
     * (RFC 7239) added, and the body's framing: chunked when it came chunked, else its
     * Content-Length. Values go out byte for byte as they came (ISO-8859-1 both ways).
     */
    private ByteBuf upstreamRequestHead() {
      HttpHeaders h = request.headers();
      chunkedUp = vendBody == null && HttpUtil.isTransferEncodingChunked(request);
      java.util.Set<String> listed = connectionListed(h);
      String forFor = peerText();
      String host = h.get(HttpHeaderNames.HOST);
      String fwd = forwardedElement(forFor, host);
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
      for (java.util.Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence(); it.hasNext(); ) {
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
            if (chunkedUp || vendBody != null) {
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
        field(b, name, e.getValue());
      }
      if (vendBody != null) {
        field(b, "content-length", Integer.toString(vendBody.readableBytes()));
      }
      if (chunkedUp) {
        field(b, "transfer-encoding", "chunked");
      }
      field(b, FORWARDED_, prior == null ? fwd : prior + ", " + fwd);
      field(b, X_FORWARDED_FOR_, xff == null ? forFor : xff + ", " + forFor);
      if (!xProto) {
        b.writeBytes(X_FORWARDED_PROTO_HTTP);
      }
      if (host != null && !xHost) {
        field(b, X_FORWARDED_HOST_, host);
      }
      b.writeShort(CRLF);
      return b.toBuffer(ctx.alloc(), 0);
    }

    /** A piece of the request body as it goes upstream: in a chunk when chunked, else as it is. */
    private ByteBuf upstreamBody(HttpContent c, boolean last) {
      ByteBuf data = c.content();
      if (!chunkedUp) {
        return data;
      }
      int n = data.readableBytes();
      if (n == 0) {
        data.release();
        return last ? Unpooled.wrappedBuffer(LAST_CHUNK) : Unpooled.EMPTY_BUFFER;
      }
      ByteBuf size = ctx.alloc().buffer(12);
      size.writeCharSequence(Integer.toHexString(n), StandardCharsets.US_ASCII);
      size.writeShort(CRLF);
      return Unpooled.wrappedUnmodifiableBuffer(size, data,
          Unpooled.wrappedBuffer(last ? CRLF_LAST_CHUNK : CRLF_BYTES));
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
          local(tooLarge());
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
      ByteBuf piece = upstreamBody(c, last);
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
      local(snap.speech().error(new GatewayError(400, "malformed_request",
          "The request body's chunked framing is invalid: a chunk-size line, chunk or trailer could not be read.",
          "Only complete, well-formed request bodies are forwarded, so that the service never takes part of a body"
              + " for all of it.",
          Map.of("field", "body", "expected", "A chunked body of hexadecimal chunk sizes, each chunk followed by CRLF,"
              + " ended by a zero-size chunk (RFC 9112 section 7.1).")), format, path()));
    }

    void upstreamWritable() {
      maybeRead();
    }

    void clientWritable() {
      if (upstream != null && responseStarted && !responseComplete && upstream.isActive()) {
        upstream.read();
      }
    }

    private void onUpstream(UpstreamHandler.Event e, Object msg) {
      if (ended) {
        ReferenceCountUtil.release(msg);
        return;
      }
      boolean outer = !inEvent;
      if (outer) {
        eventStarts();
      }
      try {
        switch (e) {
          case READ -> upstreamRead(msg);
          case WRITABLE -> upstreamWritable();
          case READ_COMPLETE -> upstreamReadComplete();
          case INACTIVE -> upstreamClosed();
          case ERROR -> {
            upstreamReusable = false;
            upstream.close();
          }
        }
      } finally {
        if (outer) {
          inEvent = false;
        }
      }
    }

    private void upstreamRead(Object msg) {
      if (msg instanceof ResponseHead h) {
        upstreamHead(h);
        return;
      }
      ResponseBody piece = (ResponseBody) msg;
      if (rawResponse) {
        forwardRaw(piece);
      } else {
        forwardContent(piece.last() ? new DefaultLastHttpContent(piece.bytes()) : new DefaultHttpContent(piece.bytes()));
      }
    }

    private void upstreamHead(ResponseHead h) {
      if (h.failure() != null) {
        LOG.warn("upstream {} sent an invalid response to {} {}: {}", pool.name(), request.method(), path(),
            h.failure());
        upstreamReusable = false;
        closeUpstream();
        if (!responseStarted || nothingSentYet()) {
          // the head was valid but its body broke before any of it reached the client (an
          // invalid first chunk-size line): what was kept back is dropped and 502 said instead
          if (pendingHead != null) {
            pendingHead.release();
            pendingHead = null;
          }
          pendingResponse = null;
          vendHead = null;
          normalising = false;
          clientUnflushed = false;
          badGateway("The upstream sent a response that is not valid HTTP/1.1.");
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
      state.metrics.upstreamLatency(pool.name(), now() - upstreamSentNanos);
      responseStarted = true;
      if (!h.keepAlive()) {
        upstreamReusable = false;
      }
      if (route.route().normaliseErrors() && code >= 400 && isBare(h.get("content-type"))
          && normalisable(code, h.get("allow"))) {
        normalising = true;
        normalisedStatus = code;
        normalisedReason = h.reason();
        normalisedAllow = h.get("allow");
        upstream.read(); // the body is read and dropped (forwardContent)
        return;
      }
      if (vendTransforms(h)) {
        decoder.dechunk(true);
        vendHead = h.toHttpResponse();
        vendResponse = ctx.alloc().heapBuffer();
        upstream.read();
        return;
      }
      ResponseHead.Framing framing = h.framing();
      rawResponse = framing == ResponseHead.Framing.NONE || framing == ResponseHead.Framing.FIXED
          || framing == ResponseHead.Framing.CHUNKED && !request.protocolVersion().equals(HttpVersion.HTTP_1_0);
      if (rawResponse) {
        // forwarded as received: the head's fields copied as byte ranges, the body's bytes (chunk
        // framing included) written past the HTTP encoder. The head waits for the body's first
        // piece, which usually came in the same read: a small one joins it in one buffer.
        pendingHead = rawHead(h);
      } else {
        // until-close bodies, and chunked ones for an HTTP/1.0 client, are re-framed by the encoder
        HttpResponse response = h.toHttpResponse();
        String codings = codingsBeforeChunked(response.headers());
        if (codings != null && request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
          untransferable(codings);
          return;
        }
        decoder.dechunk(true);
        // kept back until the body's first piece, like the raw head, so that a body broken from
        // its start can still be answered with 502
        pendingResponse = clientResponse(response);
      }
      // not flushed alone: the head leaves with the body in one write (see upstreamReadComplete)
      clientUnflushed = true;
      pullUpstream();
    }

    /**
     * Whether a started response has put nothing on the client connection: its raw head still
     * waits for the body (see {@link #pendingHead}), or the body is being read to be rewritten
     * (a vend response, a normalised error).
     */
    private boolean nothingSentYet() {
      return pendingHead != null || pendingResponse != null || vendHead != null || normalising;
    }

    /** The client's response head from the upstream's: its fields minus hop-by-hop ones, plus ours. */
    private ByteBuf rawHead(ResponseHead h) {
      byte[] raw = h.raw();
      HeadBytes b = HeadBytes.begin();
      // Lines that go out exactly as they came (an HTTP/1.1 status line with its reason, field
      // lines ending in CRLF) are copied in runs, one copy per run of kept lines, rather than
      // one per line; a hop-by-hop line ends a run.
      int runStart = -1;
      int runEnd = -1;
      int re = h.reasonEnd();
      if (raw[7] == '1' && h.reasonStart() == 13 && re + 1 < raw.length && raw[re] == '\r' && raw[re + 1] == '\n') {
        runStart = 0;
        runEnd = re + 2;
      } else {
        b.writeBytes(HTTP_1_1_SP);
        b.writeBytes(raw, 9, 3); // the status code, validated by the decoder
        b.writeByte(' ');
        b.writeBytes(raw, h.reasonStart(), re - h.reasonStart());
        b.writeShort(CRLF);
      }
      boolean chunked = h.framing() == ResponseHead.Framing.CHUNKED;
      for (int i = 0; i < h.size(); i++) {
        // Transfer-Encoding stays when the chunked framing is forwarded as it is
        if (h.hopByHop(i) && !(chunked && h.nameIs(i, ResponseHead.TRANSFER_ENCODING))) {
          if (runStart >= 0) {
            b.writeBytes(raw, runStart, runEnd - runStart);
            runStart = -1;
          }
          continue;
        }
        int ls = h.lineStart(i);
        int le = h.lineEnd(i);
        if (le + 1 < raw.length && raw[le] == '\r' && raw[le + 1] == '\n') {
          if (runStart < 0) {
            runStart = ls;
          } else if (ls != runEnd) {
            b.writeBytes(raw, runStart, runEnd - runStart);
            runStart = ls;
          }
          runEnd = le + 2;
          continue;
        }
        if (runStart >= 0) {
          b.writeBytes(raw, runStart, runEnd - runStart);
          runStart = -1;
        }
        b.writeBytes(raw, ls, le - ls); // a line ended by a bare LF goes out ended by CRLF
        b.writeShort(CRLF);
      }
      if (runStart >= 0) {
        b.writeBytes(raw, runStart, runEnd - runStart);
      }
      if (decision != null) {
        route.headers().write(decision, h.status(), (name, value) -> field(b, name, value));
      }
      if (!keepAlive) {
        b.writeBytes(CONNECTION_CLOSE);
      } else if (request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
        b.writeBytes(CONNECTION_KEEP_ALIVE);
      }
      b.writeShort(CRLF);
      return b.toBuffer(ctx.alloc(), 256);
    }

    /** The raw head not yet written, waiting for the first body piece (or the read's end). */
    private ByteBuf pendingHead;
    /** Body pieces up to this size are copied into the head's buffer rather than written apart. */
    private static final int JOIN_BYTES = 4096;

    /** The re-encoded response head not yet written, waiting as {@link #pendingHead} does. */
    private HttpResponse pendingResponse;

    private void writePendingHead() {
      if (pendingHead != null) {
        ByteBuf head = pendingHead;
        pendingHead = null;
        rawOut.write(head, rawOut.voidPromise());
      }
      if (pendingResponse != null) {
        HttpResponse r = pendingResponse;
        pendingResponse = null;
        ctx.write(r);
      }
    }

    private void forwardRaw(ResponseBody piece) {
      responseBytes += piece.data();
      if (pendingHead != null && piece.bytes().readableBytes() <= JOIN_BYTES) {
        ByteBuf head = pendingHead;
        pendingHead = null;
        head.writeBytes(piece.bytes());
        piece.release();
        piece = new ResponseBody(head, 0, piece.last());
      } else {
        writePendingHead();
      }
      if (piece.last()) {
        responseComplete = true;
        awaitingResponse = false;
        clientUnflushed = false;
        whenWritten(rawOut.writeAndFlush(piece.bytes()));
      } else {
        rawOut.write(piece.bytes(), rawOut.voidPromise());
        clientUnflushed = true;
        pullUpstream();
      }
    }

    private void forwardContent(HttpContent c) {
      if (vendHead != null) {
        vendCollect(c);
        return;
      }
      boolean last = c instanceof LastHttpContent;
      if (normalising) {
        c.release();
        if (last) {
          normalisedEnd(0, null);
        } else {
          upstream.read();
        }
        return;
      }
      writePendingHead();
      responseBytes += c.content().readableBytes();
      if (last) {
        responseComplete = true;
        awaitingResponse = false;
        clientUnflushed = false;
        whenWritten(ctx.writeAndFlush(c));
      } else {
        ctx.write(c);
        clientUnflushed = true;
        pullUpstream();
      }
    }

    /** The upstream's read batch is over: flush what it produced to the client, once. */
    void upstreamReadComplete() {
      writePendingHead();
      if (clientUnflushed) {
        clientUnflushed = false;
        ctx.flush();
      }
    }

    private boolean clientUnflushed;
    private String normalisedAllow;
    private int normalisedStatus;
    private String normalisedReason;

    private void normalisedEnd(int code, String reason) {
      if (code != 0) {
        normalisedStatus = code;
        normalisedReason = reason;
      }
      responseComplete = true;
      // the registered reason phrase, not the upstream's: the body never quotes upstream text
      String phrase = HttpResponseStatus.valueOf(normalisedStatus).reasonPhrase();
      LocalResponse r = snap.speech().error(new GatewayError(normalisedStatus,
          snakeCase(phrase),
          "The upstream service answered " + normalisedStatus + " " + phrase + ".",
          normalisedStatus >= 500
              ? "The service behind this gateway failed to complete the request; it is reported in a structured form so that callers can decide whether to retry."
              : "The service behind this gateway refused the request; it is reported in a structured form so that callers can correct it.",
          normalisedAllow == null ? Map.of("upstreamStatus", normalisedStatus)
              : Map.of("upstreamStatus", normalisedStatus, "allowedMethods", allowList(normalisedAllow))),
          format, path());
      if (normalisedAllow != null) {
        r.headers().set(HttpHeaderNames.ALLOW, normalisedAllow);
      }
      if (decision != null) {
        snap.speech().rateLimitHeaders(route.route(), decision, normalisedStatus, r.headers());
      }
      writeLocal(r);
    }

    private void pullUpstream() {
      if (ctx.channel().isWritable()) {
        upstream.read();
      }
      // else: channelWritabilityChanged -> clientWritable() reads again
    }

    private HttpResponse clientResponse(HttpResponse r) {
      HttpHeaders h = r.headers(); // the upstream's response is ours: edited in place, not copied
      boolean chunked = HttpUtil.isTransferEncodingChunked(r);
      String codings = codingsBeforeChunked(h);
      if (h.contains(HttpHeaderNames.TRANSFER_ENCODING)) {
        // not the body's length: the decoder framed it by Transfer-Encoding (RFC 9112 section 6.3, item 3)
        h.remove(HttpHeaderNames.CONTENT_LENGTH);
      }
      stripHopByHop(h);
      int code = r.status().code();
      boolean bodyless = request.method().equals(HttpMethod.HEAD) || code == 204 || code == 304;
      if (!bodyless && (chunked || !h.contains(HttpHeaderNames.CONTENT_LENGTH))) {
        if (request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
          keepAlive = false; // HTTP/1.0 has no chunking: the body ends with the connection
        } else {
          // codings such as gzip stay on the data, so the client is told of them before chunked
          h.set(HttpHeaderNames.TRANSFER_ENCODING, codings == null ? HttpHeaderValues.CHUNKED : codings + ", chunked");
        }
      }
      if (decision != null) {
        snap.speech().rateLimitHeaders(route.route(), decision, code, h);
      }
      connectionHeader(h);
      r.setProtocolVersion(HttpVersion.HTTP_1_1);
      return r;
    }

    private void connectionHeader(HttpHeaders h) {
      if (!keepAlive) {
        h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      } else if (request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
        h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
      }
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
      state.metrics.upstreamLatency(pool.name(), System.nanoTime() - upstreamSentNanos);
      java.time.Duration timeout = snap.config().timeouts().response();
      local(snap.speech().error(new GatewayError(504, "upstream_timeout",
          "The upstream service did not answer within " + spoken(timeout) + ". Try again later.",
          "The gateway bounds how long a request may wait so that callers are never left hanging on a stalled service.",
          Map.of("timeoutSeconds", seconds(timeout))), format, path()));
    }

    private long progressSeen = -1;
    private long progressSince;

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
      java.time.Duration idle = snap.config().timeouts().idle();
      local(snap.speech().error(new GatewayError(408, "request_timeout",
          "The request body stopped arriving: no bytes for " + spoken(idle) + ". Send the request again.",
          "A connection is held open only while its request makes progress, so that stalled uploads cannot tie up the gateway.",
          Map.of("timeoutSeconds", seconds(idle))), format, path()));
    }

    private void upstreamFailed(Throwable cause) {
      if (!requestComplete) {
        discardBody();
      }
      badGateway("The upstream service could not be reached (" + cause.getClass().getSimpleName() + ").");
    }

    /**
     * 502 for an HTTP/1.0 client whose response carries a transfer coding such as gzip: HTTP/1.0
     * has no Transfer-Encoding (RFC 9112 section 6.1), and the data re-framed without it would
     * reach the client still coded and unlabelled. The upstream connection is dropped unread.
     */
    private void untransferable(String codings) {
      upstreamReusable = false;
      closeUpstream();
      if (!requestComplete) {
        discardBody();
      }
      local(snap.speech().error(new GatewayError(502, "upstream_response_undeliverable",
          "The upstream answered with the transfer coding " + codings + ", which an HTTP/1.0 request cannot receive.",
          "An HTTP/1.0 request cannot receive an answer sent with a transfer coding, so this answer cannot reach"
              + " this client unchanged; the same request in HTTP/1.1 receives it.",
          Map.of()), format, path()));
    }

    private void badGateway(String detail) {
      if (!requestComplete) {
        discardBody();
      }
      local(snap.speech().error(new GatewayError(502, "upstream_unavailable", detail + " Try again later.",
          "The gateway forwards requests to the service behind it; when that service is down the gateway says so instead of guessing.",
          Map.of()), format, path()));
    }

    private void upstreamClosed() {
      if (ended || responseComplete) {
        return;
      }
      upstreamReusable = false;
      if (!responseStarted) {
        awaitingResponse = false;
        badGateway("The upstream service closed the connection before answering.");
      } else {
        // mid-body: the client cannot be told anything else; close so it sees a truncated body
        abort("upstream closed mid-response");
      }
    }

    // ---- local responses and the end ----

    // ---- vend routes (seed 003; the gateway part of the vend rate-limit extension) ----

    private VendRoutes vend;
    private boolean vendCollecting;
    private ByteBuf vendBody;
    private VendRequest vendCall;
    private VendDecision vendDecision;
    private HttpResponse vendHead;
    private ByteBuf vendResponse;

    /** The envelope is read whole: parse it (400 on a bad one), then decide every scope at once. */
    private void vendRequestComplete() {
      vendCollecting = false;
      try {
        vendCall = vend.reader().parse(ByteBufUtil.getBytes(vendBody));
      } catch (VendRequestException e) {
        vendError(e);
        return;
      }
      String user = vend.settings().userHeader().map(h -> request.headers().get(h)).orElse(null);
      CallIdentity identity;
      try {
        identity = CallIdentity.of(request.headers().get(VendRateLimiter.CALLER_HEADER), user);
      } catch (IllegalArgumentException e) {
        // a user header that is no identifier counts as no user: the shared anonymous partition
        identity = CallIdentity.of(request.headers().get(VendRateLimiter.CALLER_HEADER), null);
      }
      long t0 = System.nanoTime();
      CompletableFuture<VendDecision> f = vend.limiter().decideAsync(vendCall, identity).toCompletableFuture();
      if (f.isDone()) {
        vendDecided(f, t0);
      } else {
        f.whenComplete((d, e) -> ctx.executor().execute(() -> vendDecided(f, t0)));
      }
    }

    private void vendDecided(CompletableFuture<VendDecision> f, long t0) {
      state.metrics.storeLatency(System.nanoTime() - t0);
      VendDecision d;
      try {
        d = f.join();
      } catch (java.util.concurrent.CompletionException e) {
        if (e.getCause() instanceof VendRequestException v) {
          vendError(v); // X-Vend-Caller is not a caller name
          return;
        }
        storeFailed(e.getCause() == null ? e : e.getCause());
        return;
      }
      if (ended) {
        return;
      }
      vendDecision = d;
      decision = d.decision().orElse(null);
      if (decision != null) {
        for (PolicyOutcome o : decision.outcomes()) {
          state.metrics.decision(o.policy().name(), o.allowed() ? "allowed" : "refused");
        }
      }
      RateLimitHeaders headers = snap.speech().headers(route.route());
      if (!d.allowed()) {
        // RATE_LIMITED, 429, Retry-After equal to details.retry_after.value (seed 003, HTTP Mapping)
        LocalResponse r = new LocalResponse(HttpResponseStatus.valueOf(d.httpStatus()), "application/json",
            new byte[0]);
        byte[] body = d.refuse(headers, r.headers()::add);
        local(new LocalResponse(r.status(), r.contentType(), body, r.headers()));
        return;
      }
      if (vendCall.isCapabilities() && !vend.settings().mergeCapabilities()) {
        LocalResponse r = new LocalResponse(HttpResponseStatus.OK, "application/json",
            d.successResponse(vend.limiter().capabilities()));
        d.writeHeaders(headers, 200, r.headers()::add);
        local(r);
        return;
      }
      connect();
    }

    /**
     * The most a vend call's body may be: the route's {@code maxRequestBytes}, or
     * {@code limits.maxBodyBytes} when that is smaller.
     */
    private long vendMaxBytes() {
      return Math.min(maxBody, vend.reader().maxBytes());
    }

    /**
     * A vend call's body over {@link #vendMaxBytes()}, declared by Content-Length or found while
     * collecting it: answered as headroom-vend's reader answers an oversized envelope
     * ({@code INVALID_REQUEST}, 400, id {@code null}; the vend transport maps no code to 413), not
     * with the gateway's 413 problem, which a vend client cannot read. The rest of the body is not
     * read, so the connection closes after the answer.
     */
    private void vendTooLarge(OptionalLong length) {
      keepAlive = false;
      requestComplete = true;
      vendError(VendRequestException.bodyTooLarge(vendMaxBytes(), length));
    }

    private void vendError(VendRequestException e) {
      local(new LocalResponse(HttpResponseStatus.valueOf(e.httpStatus()), "application/json", e.responseBody()));
    }

    /**
     * Whether the upstream's response is read whole to be rewritten: when the call declared the
     * extension (data goes in) or is a merged vend.capabilities, and the response is small enough
     * by its Content-Length (chunked ones are collected until they prove too large).
     */
    private boolean vendTransforms(ResponseHead h) {
      if (vendDecision == null || request.method().equals(HttpMethod.HEAD)) {
        return false;
      }
      boolean wanted = vendCall.declaresRateLimit()
          || (vendCall.isCapabilities() && vend.settings().mergeCapabilities());
      long declared = h.framing() == ResponseHead.Framing.FIXED ? h.contentLength()
          : h.framing() == ResponseHead.Framing.NONE ? 0 : -1;
      return wanted && declared <= vend.settings().maxResponseBytes() && h.status() != 204
          && h.status() != 304;
    }

    private void vendCollect(HttpContent c) {
      boolean last = c instanceof LastHttpContent;
      int n = c.content().readableBytes();
      if (vendResponse.readableBytes() + (long) n > vend.settings().maxResponseBytes()) {
        // larger than the bound: passed through unchanged, with the RateLimit fields only
        HttpResponse head = vendHead;
        ByteBuf sofar = vendResponse;
        vendHead = null;
        vendResponse = null;
        responseBytes += sofar.readableBytes();
        ctx.write(clientResponse(head));
        ctx.write(new DefaultHttpContent(sofar));
        clientUnflushed = true;
        forwardContent(c);
        return;
      }
      vendResponse.writeBytes(c.content());
      c.release();
      if (!last) {
        upstream.read();
        return;
      }
      byte[] bytes = ByteBufUtil.getBytes(vendResponse);
      vendResponse.release();
      vendResponse = null;
      if (vendCall.isCapabilities() && vend.settings().mergeCapabilities()) {
        bytes = vend.limiter().mergeCapabilities(bytes);
      }
      bytes = vendDecision.decorate(bytes);
      HttpResponse head = vendHead;
      vendHead = null;
      head.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
      head.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
      responseBytes += bytes.length;
      responseComplete = true;
      awaitingResponse = false;
      ctx.write(clientResponse(head));
      clientUnflushed = false;
      ctx.writeAndFlush(new DefaultLastHttpContent(Unpooled.wrappedBuffer(bytes)))
          .addListener(x -> responseWritten(x.isSuccess()));
    }

    private void releaseVendBuffers() {
      if (vendBody != null) {
        vendBody.release();
        vendBody = null;
      }
      if (vendResponse != null) {
        vendResponse.release();
        vendResponse = null;
      }
      vendCollecting = false;
    }

    /** Answers locally; the request body, if any, is read and dropped. */
    private void local(LocalResponse r) {
      if (vendCollecting && !requestComplete) {
        discardBody();
      }
      releaseVendBuffers();
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
    private void writeLocal(LocalResponse r) {
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
      ByteBuf b = ctx.alloc().buffer(fields.length + 48 + (head ? 0 : body.length));
      b.writeBytes(fields);
      if (!keepAlive) {
        b.writeBytes(CONNECTION_CLOSE);
      } else if (request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
        b.writeBytes(CONNECTION_KEEP_ALIVE);
      }
      b.writeShort(CRLF);
      if (!head) {
        b.writeBytes(body);
      }
      whenWritten(rawOut.writeAndFlush(b));
      maybeRead();
    }

    private void discovery(boolean head) {
      HttpSpeech.Discovery doc = state.discovery();
      String inm = request.headers().get(HttpHeaderNames.IF_NONE_MATCH);
      HttpHeaders h = LocalResponse.ownHeaders();
      h.set(HttpHeaderNames.CACHE_CONTROL, doc.cacheControl());
      h.set(HttpHeaderNames.ETAG, doc.etag());
      h.set(HttpHeaderNames.VARY, HttpHeaderNames.ACCEPT_ENCODING);
      if (EntityTag.matchesIfNoneMatch(inm, doc.etag())) {
        local(new LocalResponse(HttpResponseStatus.NOT_MODIFIED, null, new byte[0], h));
        return;
      }
      local(new LocalResponse(HttpResponseStatus.OK, "application/json", doc.json(), h));
    }

    /**
     * Ends the response when its last write is done: at once when the flush wrote it all (the
     * usual case, so no listener is allocated or notified), else when the socket takes the rest.
     */
    private void whenWritten(io.netty.channel.ChannelFuture f) {
      if (f.isDone()) {
        responseWritten(f.isSuccess());
      } else {
        f.addListener(x -> responseWritten(x.isSuccess()));
      }
    }

    private void responseWritten(boolean ok) {
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
        maybeRead();
        return;
      }
      if (upstream != null && (!requestSent || !upstreamReusable || normalising && !responseComplete)) {
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
      releaseVendBuffers();
      if (pendingHead != null) {
        pendingHead.release(); // the exchange died between the head and its body
        pendingHead = null;
      }
      pendingResponse = null;
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
      finished(this, clean && keepAlive);
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

    private String path() {
      String uri = request.uri();
      int q = uri.indexOf('?');
      return q < 0 ? uri : uri.substring(0, q);
    }
  }

  static void stripHopByHop(HttpHeaders h) {
    for (String listed : h.getAll(HttpHeaderNames.CONNECTION)) {
      for (String token : listed.split(",")) {
        String t = token.trim();
        if (!t.isEmpty()) {
          h.remove(t);
        }
      }
    }
    for (String name : ResponseHead.HOP_BY_HOP_NAMES) {
      h.remove(name);
    }
  }

  /**
   * The transfer codings of a response other than a final chunked (RFC 9112 section 6.1), which
   * are still applied to its data when the chunked framing is removed; null when there are none.
   */
  static String codingsBeforeChunked(HttpHeaders h) {
    List<String> codings = new ArrayList<>();
    for (String v : h.getAll(HttpHeaderNames.TRANSFER_ENCODING)) {
      for (String coding : v.split(",")) {
        if (!coding.isBlank()) {
          codings.add(coding.strip());
        }
      }
    }
    if (!codings.isEmpty() && codings.get(codings.size() - 1).equalsIgnoreCase("chunked")) {
      codings.remove(codings.size() - 1);
    }
    return codings.isEmpty() ? null : String.join(", ", codings);
  }

  /**
   * Whether the gateway can state what Graceful Boundaries requires of the status: a 429 needs the
   * limit and the wait, which only the upstream knows, and a 405 its methods, known only from its
   * {@code Allow} field; those pass through as they are otherwise.
   */
  static boolean normalisable(int code, String allow) {
    return code != 429 && (code != 405 || allow != null);
  }

  /** A bare response is one without a JSON body: nothing a caller could parse for error, detail, why. */
  static boolean isBare(String ct) {
    if (ct == null) {
      return true;
    }
    String base = ct.toLowerCase(Locale.ROOT);
    return !(base.startsWith("application/json") || base.startsWith("application/problem+json"));
  }

  static List<String> allowList(String allow) {
    List<String> methods = new ArrayList<>();
    for (String m : allow.split(",")) {
      if (!m.isBlank()) {
        methods.add(m.strip());
      }
    }
    return methods;
  }

    /** A duration as a caller reads it: "400 milliseconds", "1 second", "30 seconds". */
  static String spoken(java.time.Duration d) {
    long ms = d.toMillis();
    if (ms < 1000 || ms % 1000 != 0) {
      return ms + (ms == 1 ? " millisecond" : " milliseconds");
    }
    long s = ms / 1000;
    return s + (s == 1 ? " second" : " seconds");
  }

  /** A duration in seconds for a JSON body: whole seconds as an integer, else a decimal. */
  static Number seconds(java.time.Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? (Number) (ms / 1000) : (Number) (ms / 1000.0);
  }

  static String snakeCase(String reason) {
    String s = reason == null ? "upstream_error" : reason.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_");
    s = s.replaceAll("^_+|_+$", "");
    return s.isEmpty() ? "upstream_error" : s.length() > 64 ? s.substring(0, 64) : s;
  }

  static Map<String, Object> map(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }
}
