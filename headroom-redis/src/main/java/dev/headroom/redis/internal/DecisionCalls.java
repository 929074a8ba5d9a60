package dev.headroom.redis.internal;

import io.lettuce.core.AbstractRedisAsyncCommands;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.protocol.CommandType;
import io.netty.util.concurrent.EventExecutor;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How one call of the decision code reaches Redis: {@code FCALL} of the library's function,
 * loading the library first when Redis answers that it has no such function (a new or restarted
 * Redis, or {@code FUNCTION FLUSH}); before Redis 7, which has no {@code FCALL}, {@code EVALSHA},
 * and {@code EVAL} when Redis answers {@code NOSCRIPT}. Either way one command in the steady state.
 * Every command carries the decision's {@link WriteStamp}, marked when Lettuce writes it. When the
 * store asks for replica acknowledgements, a call that may admit is followed on the wire by
 * {@code WAIT} ({@link ReplicaAcknowledgement}), and its reply waits for that answer too.
 *
 * <p>Thread-safe.
 */
public final class DecisionCalls {
  private static final Logger LOG = LoggerFactory.getLogger(DecisionCalls.class);

  private final Endpoint endpoint;
  private final DecisionScript script;
  private final byte[] functionName;
  private final byte[] shaBytes;
  /** Whether Redis has functions (7 and later); cleared for good when it answers that it has no FCALL. */
  private volatile boolean functions;
  /** The library load under way, if any. */
  private final AtomicReference<CompletableFuture<Void>> loading = new AtomicReference<>();
  /** The acknowledgements an admission's write needs from replicas, or null when none. */
  private final ReplicaAcknowledgement acknowledgement;

  /** Calls with no replica acknowledgements asked for. */
  public DecisionCalls(Endpoint endpoint, DecisionScript script, boolean scriptsOnly) {
    this(endpoint, script, scriptsOnly, null);
  }

  /**
   * @param scriptsOnly decide with {@code EVALSHA} from the start, as before Redis 7 (tests)
   * @param acknowledgement what replicas must acknowledge of each call that may admit, or null
   */
  public DecisionCalls(Endpoint endpoint, DecisionScript script, boolean scriptsOnly,
      ReplicaAcknowledgement acknowledgement) {
    this.endpoint = endpoint;
    this.acknowledgement = acknowledgement;
    this.script = script;
    this.functionName = script.function().getBytes(StandardCharsets.US_ASCII);
    this.shaBytes = script.sha().getBytes(StandardCharsets.US_ASCII);
    this.functions = !scriptsOnly;
  }

  /** One call, recovering when Redis lacks the code or {@code FCALL}; connects first when needed. */
  public CompletableFuture<long[]> call(DecisionScript.Call call, WriteStamp stamp) {
    RedisClusterAsyncCommands<byte[], byte[]> c = endpoint.commandsNow();
    if (c == null) {
      return endpoint.commands().thenCompose(connected -> send(connected, call, stamp));
    }
    return send(c, call, stamp);
  }

  /** The call, recovering when Redis lacks the code or {@code FCALL} (see {@link #recover}). */
  public CompletableFuture<long[]> send(RedisClusterAsyncCommands<byte[], byte[]> c, DecisionScript.Call call,
      WriteStamp stamp) {
    return sendOnce(c, call, stamp).exceptionallyCompose(e -> recover(c, call, e, stamp));
  }

  /** One command, with nothing behind it: {@code FCALL}, or {@code EVALSHA} before Redis 7. */
  public CompletableFuture<long[]> sendOnce(RedisClusterAsyncCommands<byte[], byte[]> c, DecisionScript.Call call,
      WriteStamp stamp) {
    if (functions) {
      return dispatch(c, CommandType.FCALL, functionName, call, stamp);
    }
    return dispatch(c, CommandType.EVALSHA, shaBytes, call, stamp);
  }

  /**
   * One command carrying several decisions (a batch, see {@link DecisionScript#batch}): writing it
   * marks every one of their stamps. No recovery: each decision recovers by itself.
   */
  public CompletableFuture<long[]> sendOnce(RedisClusterAsyncCommands<byte[], byte[]> c, DecisionScript.Call call,
      WriteStamp[] stamps) {
    if (functions) {
      return dispatch(c, CommandType.FCALL, functionName, call, stamps);
    }
    return dispatch(c, CommandType.EVALSHA, shaBytes, call, stamps);
  }

  /**
   * One command, written from the connection's event loop ({@link Endpoint#writerLoop()}): from
   * another thread it is handed to the loop (lock-free), so that no two threads ever contend for
   * Lettuce's write lock and no event loop parks on it. Before the loop is known, and when it
   * refuses the task (shutting down), the command is written from this thread.
   */
  private CompletableFuture<long[]> dispatch(RedisClusterAsyncCommands<byte[], byte[]> c, CommandType type,
      byte[] head, DecisionScript.Call call, WriteStamp... stamp) {
    EventExecutor loop = endpoint.writerLoop();
    if (loop == null || loop.inEventLoop()) {
      return dispatchHere(c, type, head, call, stamp);
    }
    CompletableFuture<long[]> reply = new CompletableFuture<>();
    try {
      loop.execute(() -> dispatchHere(c, type, head, call, stamp).whenComplete((r, e) -> {
        if (e != null) {
          reply.completeExceptionally(e);
        } else {
          reply.complete(r);
        }
      }));
    } catch (RejectedExecutionException e) {
      return dispatchHere(c, type, head, call, stamp);
    }
    return reply;
  }

  /** {@link #dispatchOnly} of the call, then its {@code WAIT} when it may admit and replicas must acknowledge. */
  private CompletableFuture<long[]> dispatchHere(RedisClusterAsyncCommands<byte[], byte[]> c, CommandType type,
      byte[] head, DecisionScript.Call call, WriteStamp... stamp) {
    CompletableFuture<long[]> reply = dispatchOnly(c, type, head, call, stamp);
    if (acknowledgement == null || !call.admits() || reply.isCompletedExceptionally()) {
      return reply; // failed already: the call was never written, so there is nothing to wait for
    }
    return acknowledgement.after(c, reply);
  }

  @SuppressWarnings("unchecked")
  private static CompletableFuture<long[]> dispatchOnly(RedisClusterAsyncCommands<byte[], byte[]> c, CommandType type,
      byte[] head, DecisionScript.Call call, WriteStamp... stamp) {
    try {
      FcallArgs args = new FcallArgs(head, call);
      if (c instanceof AbstractRedisAsyncCommands) {
        // Lettuce's own command objects (standalone and Cluster): the command marks the stamp as
        // the I/O thread writes it
        return ((AbstractRedisAsyncCommands<byte[], byte[]>) c).dispatch(new StampedCommand(type, args, stamp))
            .toCompletableFuture();
      }
      // another implementation of the interface cannot be given a command: count from now
      for (WriteStamp s : stamp) {
        s.markNow();
      }
      return c.dispatch(type, new LongArrayOutput(), args).toCompletableFuture();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * After a call failed: when Redis has no such function, the library loaded and the call made
   * again; when Redis has no {@code FCALL} (before 7), scripts from now on; when it has no such
   * script ({@code NOSCRIPT}), {@code EVAL}; otherwise the same failure.
   */
  public CompletableFuture<long[]> recover(RedisClusterAsyncCommands<byte[], byte[]> c, DecisionScript.Call call,
      Throwable e, WriteStamp stamp) {
    String message = message(e);
    if (message.startsWith("ERR Function not found")) {
      return loadLibrary(c).thenCompose(loaded -> dispatch(c, CommandType.FCALL, functionName, call, stamp));
    }
    if (message.toLowerCase(Locale.ROOT).contains("unknown command")
        && message.toUpperCase(Locale.ROOT).contains("FCALL")) {
      if (functions) {
        functions = false;
        LOG.info("Redis has no FCALL (before Redis 7): Headroom decides with EVALSHA");
      }
      return send(c, call, stamp);
    }
    if (isNoScript(e)) {
      return dispatch(c, CommandType.EVAL, script.evalSource(), call, stamp);
    }
    return CompletableFuture.failedFuture(e);
  }

  /**
   * Loads the library (once for all the calls that found it missing at the same time): on a
   * standalone Redis, through the connection; on a Cluster, on every primary, since each node
   * keeps its own functions (replicas receive them from their primary).
   */
  private CompletableFuture<Void> loadLibrary(RedisClusterAsyncCommands<byte[], byte[]> c) {
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> running = loading.compareAndExchange(null, mine);
    if (running != null) {
      return running;
    }
    CompletionStage<?> load;
    try {
      if (c instanceof RedisAdvancedClusterAsyncCommands) {
        load = ((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) c).upstream().commands()
            .functionLoad(script.functionSource(), true);
      } else {
        load = c.functionLoad(script.functionSource(), true);
      }
    } catch (RuntimeException e) {
      load = CompletableFuture.failedFuture(e);
    }
    load.whenComplete((ok, error) -> {
      loading.compareAndSet(mine, null);
      if (error != null) {
        mine.completeExceptionally(error);
      } else {
        mine.complete(null);
      }
    });
    return mine;
  }

  private static String message(Throwable e) {
    Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    return t.getMessage() == null ? "" : t.getMessage();
  }

  private static boolean isNoScript(Throwable e) {
    Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    return t instanceof RedisNoScriptException || message(e).startsWith("NOSCRIPT");
  }
}
