package dev.headroom.redis.internal;

import io.lettuce.core.AbstractRedisAsyncCommands;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.resource.ClientResources;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The connection a store talks through: a standalone or Cluster Lettuce connection, either given
 * by the caller or opened (and reopened) by the store.
 *
 * <p>Lettuce reconnects an established connection by itself. A connection that could not be
 * opened at all (Redis down when the store started) is retried here, in the background, at most
 * once per {@link #CONNECT_RETRY_NANOS}; meanwhile decisions follow the failure policy. Connection
 * timing is measured with {@link System#nanoTime()}: it is infrastructure, not quota time.
 *
 * <p><b>The writer loop.</b> Lettuce's write path ({@code DefaultEndpoint.write}) takes a short
 * {@code ReentrantLock} ({@code SharedLock}) on every command; two threads writing at once make
 * one of them park. On an event loop (the store's own I/O thread completing a call and sending
 * the next batch, or a reactive front end's loops deciding at the same time) that park is a
 * blocking call, which BlockHound reports and which once left a command unwritten until Lettuce's
 * command timeout. So every command of the store is written from one thread: the connection's own
 * event loop ({@link #writerLoop()}), learned from the first command it writes (a {@code PING}
 * sent when the connection is adopted) and from every write after. Handing a task to a Netty loop
 * is lock-free, and a write from within the loop is what Lettuce does for any caller anyway (from
 * another thread it queues a write task on the same loop), so the hand-off costs no extra hop.
 *
 * <p>Thread-safe.
 */
public final class Endpoint {

  /** The least time between two attempts to open a connection that never opened. */
  static final long CONNECT_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /** How long building a store waits for its first connection before going on without it. */
  static final long FIRST_CONNECT_WAIT_NANOS = TimeUnit.SECONDS.toNanos(3);

  private final boolean cluster;
  private final Supplier<CompletionStage<? extends StatefulConnection<byte[], byte[]>>> opener;
  private final Runnable shutdown;
  private volatile StatefulConnection<byte[], byte[]> connection;
  private volatile RedisClusterAsyncCommands<byte[], byte[]> commands;
  private final AtomicBoolean connecting = new AtomicBoolean();
  private final AtomicLong lastAttempt = new AtomicLong(System.nanoTime() - CONNECT_RETRY_NANOS);
  private volatile boolean closed;
  private volatile Throwable lastFailure;
  /** The event loop that writes the connection's commands; null until one was written. */
  private volatile EventExecutor writerLoop;

  private Endpoint(boolean cluster, StatefulConnection<byte[], byte[]> given,
      Supplier<CompletionStage<? extends StatefulConnection<byte[], byte[]>>> opener, Runnable shutdown) {
    this.cluster = cluster;
    this.opener = opener;
    this.shutdown = shutdown;
    if (given != null) {
      adopt(given);
    }
  }

  /** A caller's connection: used as it is, never closed by the store. */
  public static Endpoint of(StatefulRedisConnection<byte[], byte[]> connection) {
    return new Endpoint(false, connection, null, () -> {});
  }

  /** A caller's Cluster connection: used as it is, never closed by the store. */
  public static Endpoint of(StatefulRedisClusterConnection<byte[], byte[]> connection) {
    return new Endpoint(true, connection, null, () -> {});
  }

  /**
   * A connection the store opens with {@code opener} (tried now, and again while it fails) and
   * ends with {@code shutdown} on close.
   */
  public static Endpoint opening(boolean cluster,
      Supplier<CompletionStage<? extends StatefulConnection<byte[], byte[]>>> opener, Runnable shutdown) {
    Endpoint e = new Endpoint(cluster, null, opener, shutdown);
    CompletionStage<?> first = e.tryConnect();
    if (first != null) {
      try {
        first.toCompletableFuture().get(FIRST_CONNECT_WAIT_NANOS, TimeUnit.NANOSECONDS);
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException ex) {
        // Redis is away: decisions follow the failure policy while the store keeps trying.
      }
    }
    return e;
  }

  /**
   * A standalone Redis the store connects to itself: it rejects commands while disconnected (so
   * that nothing queues up to be applied after the decision was made without Redis), reconnects
   * by itself, and fails a command Redis never answers after {@code commandTimeout}.
   */
  public static Endpoint owned(RedisURI uri, Duration commandTimeout) {
    return owned(uri, commandTimeout, null);
  }

  /**
   * As {@link #owned(RedisURI, Duration)}, on the caller's Lettuce {@code resources} (its event
   * loops and timers) when not null; Lettuce leaves resources it was given running when the
   * client shuts down, so they stay the caller's to shut down.
   */
  public static Endpoint owned(RedisURI uri, Duration commandTimeout, ClientResources resources) {
    RedisClient c = resources == null ? RedisClient.create(uri) : RedisClient.create(resources, uri);
    c.setOptions(ClientOptions.builder()
        .autoReconnect(true)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).build())
        .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
        .build());
    return opening(false, () -> c.connectAsync(ByteArrayCodec.INSTANCE, uri),
        () -> c.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
  }

  /**
   * A Redis Cluster the store connects to itself; as {@link #owned(RedisURI, Duration, ClientResources)},
   * plus topology refresh.
   */
  public static Endpoint ownedCluster(List<RedisURI> uris, Duration commandTimeout, ClientResources resources) {
    RedisClusterClient c = resources == null ? RedisClusterClient.create(uris) : RedisClusterClient.create(resources, uris);
    c.setOptions(ClusterClientOptions.builder()
        .autoReconnect(true)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).build())
        .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
            .enablePeriodicRefresh(Duration.ofSeconds(2))
            .enableAllAdaptiveRefreshTriggers()
            .build())
        .build());
    return opening(true, () -> connectCluster(c), () -> c.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
  }

  /** Lettuce connects to a Cluster asynchronously only once it has read the topology. */
  public static CompletionStage<StatefulRedisClusterConnection<byte[], byte[]>> connectCluster(RedisClusterClient c) {
    return c.refreshPartitionsAsync().thenCompose(ignored -> c.connectAsync(ByteArrayCodec.INSTANCE));
  }

  public boolean cluster() {
    return cluster;
  }

  /** The commands to send through, or null when there is no connection (see {@link #commands()}). */
  public RedisClusterAsyncCommands<byte[], byte[]> commandsNow() {
    return commands;
  }

  /**
   * The commands to send through, or a failed stage when there is no connection yet (an attempt
   * to open one is then started in the background, if none is under way).
   */
  public CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> commands() {
    RedisClusterAsyncCommands<byte[], byte[]> c = commands;
    if (c != null) {
      return CompletableFuture.completedFuture(c);
    }
    if (closed) {
      return CompletableFuture.failedFuture(new IllegalStateException("the Redis store is closed"));
    }
    tryConnect();
    Throwable why = lastFailure;
    return CompletableFuture.failedFuture(new IllegalStateException(
        "no connection to Redis yet" + (why == null ? "" : ": " + why.getMessage()), why));
  }

  /**
   * The event loop that writes this store's commands (see the class comment), or null before the
   * connection wrote anything.
   */
  public EventExecutor writerLoop() {
    return writerLoop;
  }

  /** Records the loop that wrote a command: the thread every later command is written from. */
  void wroteOn(Executor loop) {
    if (loop instanceof EventExecutor && loop != writerLoop) {
      writerLoop = (EventExecutor) loop;
    }
  }

  /** Whether a connection is open now. */
  public boolean connected() {
    StatefulConnection<byte[], byte[]> c = connection;
    return c != null && c.isOpen();
  }

  private CompletionStage<?> tryConnect() {
    if (opener == null || closed) {
      return null;
    }
    long now = System.nanoTime();
    long last = lastAttempt.get();
    if (now - last < CONNECT_RETRY_NANOS || !lastAttempt.compareAndSet(last, now)) {
      return null;
    }
    if (!connecting.compareAndSet(false, true)) {
      return null;
    }
    CompletionStage<? extends StatefulConnection<byte[], byte[]>> attempt;
    try {
      attempt = opener.get();
    } catch (RuntimeException e) {
      lastFailure = e;
      connecting.set(false);
      return null;
    }
    return attempt.whenComplete((conn, error) -> {
      if (error != null) {
        lastFailure = error;
      } else if (closed) {
        conn.closeAsync();
      } else {
        adopt(conn);
      }
      connecting.set(false);
    });
  }

  @SuppressWarnings("unchecked")
  private void adopt(StatefulConnection<byte[], byte[]> c) {
    this.connection = c;
    if (c instanceof StatefulRedisClusterConnection) {
      this.commands = ((StatefulRedisClusterConnection<byte[], byte[]>) c).async();
    } else {
      this.commands = ((StatefulRedisConnection<byte[], byte[]>) c).async();
    }
    learnWriterLoop(this.commands);
  }

  /** A {@code PING} whose encoding, on the connection's event loop, records that loop. */
  @SuppressWarnings("unchecked")
  private void learnWriterLoop(RedisClusterAsyncCommands<byte[], byte[]> c) {
    if (!(c instanceof AbstractRedisAsyncCommands)) {
      return;
    }
    try {
      ((AbstractRedisAsyncCommands<byte[], byte[]>) c).dispatch(
          new Command<byte[], byte[], String>(CommandType.PING,
              new StatusOutput<>(ByteArrayCodec.INSTANCE)) {
            @Override
            public void encode(ByteBuf buf) {
              wroteOn(ThreadExecutorMap.currentExecutor());
              super.encode(buf);
            }
          });
    } catch (RuntimeException e) {
      // disconnected: the loop is learned from the first decision written instead
    }
  }

  /** Closes what the store opened; closing again does nothing more. */
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (opener != null) {
      StatefulConnection<byte[], byte[]> c = connection;
      if (c != null) {
        c.close();
      }
    }
    commands = null;
    shutdown.run();
  }
}
