package dev.headroom.gateway.internal;

import dev.headroom.redis.ServingLoops;
import io.lettuce.core.resource.ClientResources;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's event loops: one that accepts connections, {@code threads} that serve them, their
 * upstream connections and, for a store on Redis, the store's Redis connection.
 *
 * <p><b>Redis on the serving loops.</b> A Lettuce client on its own event loop costs each decision
 * a hop to that thread and one back, and that thread sleeps in {@code epoll_wait} between replies:
 * on a busy gateway most of its time went to the kernel (being woken, going back to sleep, being
 * preempted). {@link #lettuce()} gives the store's client Lettuce resources whose event loops are
 * the serving loops, so that the Redis connection is one more channel of a loop that is awake
 * anyway: a decision taken on the connection's loop is written without a hop, its reply is read
 * in the same {@code epoll_wait} as the HTTP traffic, and the request it answers resumes on its
 * own loop (a task queued on the running loop needs no wake-up when it is that loop).
 *
 * <p>Ownership: the loops are this object's; the Lettuce resources are this object's too, and the
 * store using them must be closed before {@link #close()} (its connection's channel is closed on
 * one of these loops).
 */
public final class EventLoops implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EventLoops.class);
  /** How long each group's shutdown may take: their tasks get no quiet period, this at most. */
  private static final long CLOSE_WAIT_SECONDS = 2;

  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final Class<? extends ServerChannel> serverChannel;
  private final Class<? extends Channel> clientChannel;
  private ClientResources lettuce;
  private boolean closed;

  private EventLoops(int threads) {
    boolean epoll = Epoll.isAvailable();
    this.boss = epoll ? new EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
    this.workers = epoll ? new EpollEventLoopGroup(threads) : new NioEventLoopGroup(threads);
    this.serverChannel = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    this.clientChannel = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /** One accepting loop and {@code threads} serving loops, on epoll where the platform has it. */
  public static EventLoops start(int threads) {
    return new EventLoops(threads);
  }

  EventLoopGroup boss() {
    return boss;
  }

  EventLoopGroup workers() {
    return workers;
  }

  Class<? extends ServerChannel> serverChannel() {
    return serverChannel;
  }

  Class<? extends Channel> clientChannel() {
    return clientChannel;
  }

  /**
   * Lettuce resources whose event loops are the serving loops (created on first use), from
   * headroom-redis's {@link ServingLoops}: a transport the serving loops do not serve gets a loop
   * of its own, shut down with these resources; Lettuce's computation pool stays its own, one
   * thread.
   */
  public synchronized ClientResources lettuce() {
    if (lettuce == null) {
      lettuce = ServingLoops.clientResources(workers);
    }
    return lettuce;
  }

  /**
   * Shuts the Lettuce resources (when made) and both groups of loops down, each whatever became of
   * the others: every shutdown is begun first (a loop asked to stop with no quiet period ends as
   * soon as its running task does), then each is waited for up to {@link #CLOSE_WAIT_SECONDS}. A
   * failure is logged and thrown once all three were asked ({@link CloseSequence}); a group still
   * running after its wait is logged. Called on one of these loops, it asks them to stop and does
   * not wait (a loop cannot wait for its own end). Closing again asks nothing more.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    CloseSequence steps = new CloseSequence("the event loops");
    Future<?> store = lettuce == null ? null
        : steps.call("the Redis client's resources", () -> lettuce.shutdown(0, CLOSE_WAIT_SECONDS, TimeUnit.SECONDS));
    Future<?> accepting = steps.call("the accepting loop",
        () -> boss.shutdownGracefully(0, CLOSE_WAIT_SECONDS, TimeUnit.SECONDS));
    Future<?> serving = steps.call("the serving loops",
        () -> workers.shutdownGracefully(0, CLOSE_WAIT_SECONDS, TimeUnit.SECONDS));
    if (!onOwnLoop()) {
      await(steps, "the Redis client's resources", store);
      await(steps, "the accepting loop", accepting);
      await(steps, "the serving loops", serving);
    }
    steps.rethrow();
  }

  /** Whether both groups of loops have ended (their threads are gone). */
  public boolean terminated() {
    return boss.isTerminated() && workers.isTerminated();
  }

  private boolean onOwnLoop() {
    for (EventExecutor e : boss) {
      if (e.inEventLoop()) {
        return true;
      }
    }
    for (EventExecutor e : workers) {
      if (e.inEventLoop()) {
        return true;
      }
    }
    return false;
  }

  /** Waits for a shutdown begun (null when beginning it failed), a little longer than its own bound. */
  private static void await(CloseSequence steps, String step, Future<?> shutdown) {
    if (shutdown == null) {
      return;
    }
    if (!shutdown.awaitUninterruptibly(CLOSE_WAIT_SECONDS + 1, TimeUnit.SECONDS)) {
      LOG.warn("closing the event loops: {} still running after {} s", step, CLOSE_WAIT_SECONDS + 1);
    } else if (!shutdown.isSuccess()) {
      steps.failed(step, shutdown.cause());
    }
  }
}
