package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.wire.UpstreamHandler;
import dev.headroom.gateway.internal.wire.UpstreamResponseDecoder;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Keep-alive connections to one upstream, pooled per event loop: a client connection served by an
 * event loop takes its upstream connection from the same loop, so a request never crosses threads.
 * Each loop keeps at most {@code maxIdle} idle connections; an idle connection that the upstream
 * closes leaves the pool on its own.
 *
 * <p>Thread-safety: the deque of each loop is only touched from that loop.
 */
public final class UpstreamPool {
  /** The pool a channel goes back to, set on every channel this pool opens. */
  static final AttributeKey<UpstreamPool> POOL = AttributeKey.valueOf("headroom.pool");
  /** Pipeline names of the response decoder and the exchange's handler on every upstream channel. */
  static final String DECODER = "decoder";
  static final String EXCHANGE = "exchange";
  /** Longest response head accepted from an upstream: status line and fields. */
  static final int MAX_RESPONSE_HEAD = 4096 + 65536;

  private final String name;
  private final String host;
  private final int port;
  private final int maxIdle;
  private final Duration connectTimeout;
  private final Class<? extends Channel> channelClass;
  private final Map<EventLoop, ArrayDeque<Channel>> idle = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * A pool of connections to {@code host:port}, keeping at most {@code maxIdle} idle per event loop.
   *
   * @param name the upstream's name in the configuration
   * @param channelClass the socket channel type of the event loops
   */
  public UpstreamPool(String name, String host, int port, int maxIdle, Duration connectTimeout,
      Class<? extends Channel> channelClass) {
    this.name = name;
    this.host = host;
    this.port = port;
    this.maxIdle = maxIdle;
    this.connectTimeout = connectTimeout;
    this.channelClass = channelClass;
  }

  String name() {
    return name;
  }

  String authority() {
    return host + ":" + port;
  }

  /** Whether this pool connects to {@code host:port}, so that a reload can keep it. */
  public boolean sameOrigin(String host, int port) {
    return this.host.equals(host) && this.port == port;
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
        promise.setSuccess(c);
      } else {
        promise.setFailure(done.cause());
      }
    });
    return promise;
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
