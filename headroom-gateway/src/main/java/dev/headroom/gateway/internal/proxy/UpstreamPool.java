package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.ThrottledWarning;
import dev.headroom.gateway.config.UpstreamTls;
import dev.headroom.gateway.internal.wire.UpstreamHandler;
import dev.headroom.gateway.internal.wire.UpstreamResponseDecoder;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.LoggerFactory;

/**
 * Keep-alive connections to one upstream, pooled per event loop: a client connection served by an
 * event loop takes its upstream connection from the same loop, so a request never crosses threads.
 * Each loop keeps at most {@code maxIdle} idle connections; an idle connection that the upstream
 * closes leaves the pool on its own.
 *
 * <p>An {@code https://} upstream's connections carry TLS ({@link UpstreamTlsContext}): a new
 * connection is handed out only once its handshake has succeeded, and is pooled and reused like a
 * plain one afterwards, so a keep-alive connection pays for one handshake however many exchanges
 * it carries. A failed handshake fails the acquisition with an {@link UpstreamHandshakeException}.
 *
 * <p>Thread-safety: the deque of each loop is only touched from that loop.
 */
public final class UpstreamPool {
  /** The pool a channel goes back to, set on every channel this pool opens. */
  static final AttributeKey<UpstreamPool> POOL = AttributeKey.valueOf("headroom.pool");
  /** Pipeline names of the response decoder and the exchange's handler on every upstream channel. */
  static final String DECODER = "decoder";
  /** Pipeline name of the TLS handler on the channels of an {@code https://} upstream. */
  static final String TLS = "tls";
  static final String EXCHANGE = "exchange";
  /** Longest response head accepted from an upstream: status line and fields. */
  static final int MAX_RESPONSE_HEAD = 4096 + 65536;
  /** The least time between two log lines about this upstream's failed TLS handshakes. */
  static final Duration TLS_WARNING_INTERVAL = Duration.ofSeconds(10);

  private final String name;
  private final String host;
  private final int port;
  private final int maxIdle;
  private final Duration connectTimeout;
  private final Class<? extends Channel> channelClass;
  /** The TLS settings (present for an https upstream), kept to tell whether a reload may keep this pool. */
  private final Optional<UpstreamTls> tlsSettings;
  /** TLS to the upstream; null for an http upstream. */
  private final UpstreamTlsContext tls;
  /**
   * This upstream's failed TLS handshakes, logged at most once per {@link #TLS_WARNING_INTERVAL}
   * with a count of the others: an upstream whose certificate expired fails every request alike.
   */
  final ThrottledWarning tlsWarning = new ThrottledWarning(TLS_WARNING_INTERVAL,
      LoggerFactory.getLogger(UpstreamPool.class)::warn);
  private final Map<EventLoop, ArrayDeque<Channel>> idle = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * A pool of connections to {@code host:port}, keeping at most {@code maxIdle} idle per event loop.
   *
   * @param name the upstream's name in the configuration
   * @param tls how TLS is spoken to the upstream; empty for plain HTTP
   * @param connectTimeout bounds the TCP connect, and then the TLS handshake
   * @param channelClass the socket channel type of the event loops
   * @throws IllegalArgumentException when the JDK refuses the TLS settings' certificates or key
   */
  public UpstreamPool(String name, String host, int port, Optional<UpstreamTls> tls, int maxIdle,
      Duration connectTimeout, Class<? extends Channel> channelClass) {
    this.name = name;
    this.host = host;
    this.port = port;
    this.maxIdle = maxIdle;
    this.connectTimeout = connectTimeout;
    this.channelClass = channelClass;
    this.tlsSettings = tls;
    this.tls = tls.map(UpstreamTlsContext::of).orElse(null);
  }

  String name() {
    return name;
  }

  String authority() {
    return host + ":" + port;
  }

  /** Whether this pool connects to {@code host:port} with the same TLS settings, so that a reload can keep it. */
  public boolean sameOrigin(String host, int port, Optional<UpstreamTls> tls) {
    return this.host.equals(host) && this.port == port && tlsSettings.equals(tls);
  }

  /** An open connection on the given loop: an idle one, or a new one. Call on {@code loop}. */
  Future<Channel> acquire(EventLoop loop) {
    Promise<Channel> promise = loop.newPromise();
    ArrayDeque<Channel> q = idle.get(loop);
    if (q != null) {
      Channel c;
      while ((c = q.pollLast()) != null) {
        if (c.isActive()) {
          return promise.setSuccess(c); // auto-read is off and a read is already pending (release)
        }
      }
    }
    Bootstrap b = new Bootstrap().group(loop).channel(channelClass)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()))
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.AUTO_READ, false)
        .handler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            if (tls != null) {
              ch.pipeline().addLast(TLS, tls.newHandler(ch.alloc(), host, port, connectTimeout));
            }
            // no encoder: the exchange writes request heads and bodies as bytes (ProxyHandler)
            ch.pipeline().addLast(DECODER, new UpstreamResponseDecoder(MAX_RESPONSE_HEAD));
            ch.pipeline().addLast(EXCHANGE, new UpstreamHandler());
          }
        });
    ChannelFuture f = b.connect(host, port);
    f.addListener(done -> {
      if (done.isSuccess()) {
        Channel c = f.channel();
        c.attr(POOL).set(this);
        c.closeFuture().addListener(x -> {
          ArrayDeque<Channel> q2 = idle.get(c.eventLoop());
          if (q2 != null) {
            c.eventLoop().execute(() -> q2.remove(c));
          }
        });
        if (tls == null) {
          promise.setSuccess(c);
        } else {
          handshake(c, promise);
        }
      } else {
        promise.setFailure(done.cause());
      }
    });
    return promise;
  }

  /**
   * Hands {@code c} out once its TLS handshake succeeded. Auto-read is off, so the first read is
   * asked for here; the TLS handler asks for more itself until the handshake is done.
   */
  private void handshake(Channel c, Promise<Channel> promise) {
    SslHandler ssl = (SslHandler) c.pipeline().get(TLS);
    ssl.handshakeFuture().addListener(h -> {
      if (h.isSuccess()) {
        promise.setSuccess(c);
      } else {
        c.close();
        promise.setFailure(new UpstreamHandshakeException(UpstreamTlsFailure.of(h.cause()), h.cause()));
      }
    });
    c.read();
  }

  /** Returns a connection whose exchange completed cleanly. Call on the channel's loop. */
  void release(Channel c) {
    if (closed || !c.isActive()) {
      c.close();
      return;
    }
    ArrayDeque<Channel> q = idle.computeIfAbsent(c.eventLoop(), l -> new ArrayDeque<>());
    if (q.size() >= maxIdle) {
      c.close();
      return;
    }
    // An idle connection must notice the upstream closing it, so a read stays pending. Auto-read
    // stays off: toggling it cost two epoll_ctl calls per exchange (see headroom-gateway/README.md, "Performance notes").
    c.read();
    q.addLast(c);
  }

  /** Closes idle connections; connections in use close when their exchange ends. */
  public void close() {
    closed = true;
    idle.forEach((loop, q) -> loop.execute(() -> {
      Channel c;
      while ((c = q.pollFirst()) != null) {
        c.close();
      }
    }));
  }
}
