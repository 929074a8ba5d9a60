package dev.headroom.redis;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultEventLoopGroupProvider;
import io.lettuce.core.resource.EventLoopGroupProvider;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Lettuce resources over a server's own Netty event loops, for {@link RedisStore.Builder#clientResources}:
 * the store's Redis connection becomes one more channel of a loop that is awake anyway.
 *
 * <p><b>Why.</b> A Lettuce client on event loops of its own costs each decision a hop to that
 * loop's thread and one back, and that thread sleeps in {@code epoll_wait} between replies: on a
 * busy server most of its time goes to the kernel (being woken, going back to sleep, being
 * preempted). On the server's loops a decision taken on the connection's loop is written without a
 * hop, and its reply is read in the same {@code epoll_wait} as the server's traffic
 * (headroom-redis README, "On the caller's event loops").
 *
 * <p><b>Which transport.</b> Lettuce asks its provider for a group by class, the one of its
 * transport (epoll on Linux where the native library is present, else NIO; kqueue on macOS). The
 * given loops are handed out when they serve that transport: they are of that class (Netty 4.1:
 * {@code EpollEventLoopGroup}, {@code NioEventLoopGroup}), or, on Netty 4.2, an
 * {@code IoEventLoopGroup} whose handler is compatible with the transport's channels (Reactor
 * Netty 1.3 makes a {@code MultiThreadIoEventLoopGroup} with an epoll handler). Otherwise, say a
 * server on NIO loops beside a Lettuce on epoll, Lettuce gets one loop of its own, made on
 * demand and shut down with the resources: the store works, only without the gain.
 *
 * <p><b>Ownership.</b> The given loops stay the caller's: shutting the resources down leaves them
 * running. Close the store, then shut the resources down, before the loops end (the connection's
 * channel is closed on one of them). Nothing may wait for a reply on those loops: a caller there
 * uses {@link RedisStore}'s {@code ...Async} calls. Lettuce's computation pool (reconnection and
 * topology-refresh work, off the I/O path) stays its own, one thread.
 */
public final class ServingLoops {
  /**
   * Netty 4.2's I/O handle of each transport group class Lettuce asks for; a group of Netty 4.2 is
   * asked {@code isCompatible} of it. Names, not classes: a transport's classes may be missing.
   */
  private static final Map<String, String> IO_HANDLES = Map.of(
      "io.netty.channel.epoll.EpollEventLoopGroup", "io.netty.channel.epoll.EpollIoHandle",
      "io.netty.channel.nio.NioEventLoopGroup", "io.netty.channel.nio.NioIoHandle",
      "io.netty.channel.kqueue.KQueueEventLoopGroup", "io.netty.channel.kqueue.KQueueIoHandle");

  private ServingLoops() {}

  /**
   * Lettuce resources whose event loops are {@code loops} for the transport Lettuce uses (see the
   * class comment), with a computation pool of one thread. The caller shuts them down after the
   * store that uses them, and before {@code loops} end.
   */
  public static ClientResources clientResources(EventLoopGroup loops) {
    Objects.requireNonNull(loops, "loops");
    return ClientResources.builder()
        .eventLoopGroupProvider(new Provider(loops))
        .computationThreadPoolSize(1)
        .build();
  }

  /**
   * Whether {@code loops} can run channels of the transport whose group class is {@code transport}
   * (as Lettuce names a transport): of that class, or a Netty 4.2 group with a compatible handler.
   */
  public static boolean serves(EventLoopGroup loops, Class<? extends EventLoopGroup> transport) {
    if (transport.isInstance(loops)) {
      return true;
    }
    String handle = IO_HANDLES.get(transport.getName());
    if (handle == null) {
      return false;
    }
    try {
      Class<?> ioGroup = Class.forName("io.netty.channel.IoEventLoopGroup", false, loops.getClass().getClassLoader());
      if (!ioGroup.isInstance(loops)) {
        return false;
      }
      Class<?> handleType = Class.forName(handle, false, loops.getClass().getClassLoader());
      Method compatible = ioGroup.getMethod("isCompatible", Class.class);
      return (Boolean) compatible.invoke(loops, handleType);
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      return false; // Netty 4.1 (no IoEventLoopGroup), or the transport's classes are missing
    }
  }

  /** The number of loops in a group. */
  static int size(EventLoopGroup loops) {
    int n = 0;
    for (EventExecutor ignored : loops) {
      n++;
    }
    return Math.max(1, n);
  }

  /**
   * Hands Lettuce the given loops for a transport they serve; releasing or shutting down leaves
   * them running, and ends only a group made for another transport.
   */
  private static final class Provider implements EventLoopGroupProvider {
    private final EventLoopGroup serving;
    private final int threads;
    private final DefaultEventLoopGroupProvider others = new DefaultEventLoopGroupProvider(1);

    Provider(EventLoopGroup serving) {
      this.serving = serving;
      this.threads = size(serving);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T extends EventLoopGroup> T allocate(Class<T> type) {
      // Lettuce uses the group as an EventLoopGroup only (Bootstrap.group); on Netty 4.2 the
      // serving group is compatible with the transport without being of the class it names
      return serves(serving, type) ? (T) serving : others.allocate(type);
    }

    @Override
    public int threadPoolSize() {
      return threads;
    }

    @Override
    public Future<Boolean> release(EventExecutorGroup group, long quietPeriod, long timeout, TimeUnit unit) {
      if (group == serving) {
        return ImmediateEventExecutor.INSTANCE.newSucceededFuture(true);
      }
      return others.release(group, quietPeriod, timeout, unit);
    }

    @Override
    public Future<Boolean> shutdown(long quietPeriod, long timeout, TimeUnit unit) {
      return others.shutdown(quietPeriod, timeout, unit);
    }
  }
}
