package dev.headroom.gateway.internal;

import dev.headroom.gateway.internal.h2.Http2Front;
import dev.headroom.gateway.internal.proxy.ProxyHandler;
import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's graceful stop: the proxy listener closes (new connections are refused), every open
 * client connection is told ({@link ProxyHandler#retire}: its next response says {@code Connection:
 * close}, RFC 9112 section 9.6, and an idle keep-alive connection closes at once), and the drain is
 * over when the last client connection has closed, or when {@code shutdown.drainTimeout} has passed
 * on the gateway's {@link Timers}, whichever is first; connections still open then are closed, which
 * cuts their exchanges. A connection that became a tunnel (an upgrade, such as a WebSocket) has no
 * response left to say {@code Connection: close} with, so it is not retired: it runs until it
 * closes or is cut, and its exchange then settles (its leases given back) as any other.
 *
 * <p>State: the open client connections (a channel group, each removed as it closes), whether the
 * drain has begun, and its outcome ({@code true} when every exchange finished in time). A connection
 * accepted while the drain begins is either in the group when it is walked or sees {@link #begun}
 * when it is tracked, so none is missed. Thread-safe.
 */
final class Drain {
  private static final Logger LOG = LoggerFactory.getLogger(Drain.class);

  private final ChannelGroup clients = new DefaultChannelGroup("clients", ImmediateEventExecutor.INSTANCE);
  private final CompletableFuture<Boolean> done = new CompletableFuture<>();
  private volatile boolean begun;
  /** Whether the timeout passed: the connections closing now were cut, not finished. */
  private volatile boolean cutting;

  /** Tracks a client connection from its start; one accepted during a drain is retired at once. */
  void track(Channel ch) {
    clients.add(ch);
    ch.closeFuture().addListener(f -> overIfIdle());
    if (begun) {
      retire(ch);
    }
  }

  /** Whether a drain has begun. */
  boolean begun() {
    return begun;
  }

  /** Completes once the drain is over: {@code true} when no exchange had to be cut. */
  CompletionStage<Boolean> over() {
    return done.minimalCompletionStage();
  }

  /**
   * Begins the drain (once; a second call finds it under way): closes {@code listener}, retires
   * every client connection, and cuts what is left at {@code timeout} on {@code timers}, on
   * {@code loop}. Never blocks, so the admin listener's loop may call it.
   */
  synchronized CompletableFuture<Boolean> begin(Channel listener, Duration timeout, Timers timers, EventExecutor loop) {
    if (begun || done.isDone()) {
      return done; // under way, or the gateway is closed (its loops may be gone)
    }
    begun = true;
    LOG.info("draining: no new connections; {} open, exchanges in flight have up to {} to finish",
        clients.size(), timeout);
    if (listener != null) {
      listener.close();
    }
    clients.forEach(Drain::retire);
    Timers.Timer cut = timers.schedule(loop, timers.now() + timeout.toNanos(), () -> cut(timeout));
    done.whenComplete((all, e) -> cut.cancel());
    overIfIdle();
    return done;
  }

  /** The gateway closes without (or before the end of) a drain: what is open is cut with it. */
  void closing() {
    done.complete(clients.isEmpty());
  }

  private void cut(Duration timeout) {
    if (done.isDone()) {
      return;
    }
    LOG.warn("drain: {} connections still busy after shutdown.drainTimeout ({}); closing them", clients.size(), timeout);
    cutting = true;
    clients.close().addListener(f -> done.complete(false));
  }

  private void overIfIdle() {
    if (begun && !cutting && clients.isEmpty()) {
      done.complete(true);
    }
  }

  private static void retire(Channel ch) {
    ProxyHandler h = ch.pipeline().get(ProxyHandler.class);
    if (h != null) {
      ch.eventLoop().execute(h::retire);
    } else {
      Http2Front.retire(ch); // GOAWAY; its streams' exchanges finish
    }
  }
}
