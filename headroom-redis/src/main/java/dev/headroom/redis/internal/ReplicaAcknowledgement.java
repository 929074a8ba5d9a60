package dev.headroom.redis.internal;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Admissions that the master's replicas have acknowledged before they count: Redis
 * {@code WAIT replicas timeout} written right after each call that may admit, on the same
 * connection, in the same event-loop task (so nothing can come between them on the wire).
 *
 * <h2>Why</h2>
 * Redis replicates asynchronously: an admission the master counted and a replica had not yet
 * received is lost when that replica is promoted (a Sentinel failover), and the new master admits
 * it again: over-admission of at most what the master wrote in its last moments
 * (headroom-redis README, "Sentinel and Cluster failover"). {@code WAIT} answers how many replicas
 * have acknowledged every write of this connection so far (Redis keeps the connection's last write
 * offset), after at most {@code timeout}; a decision is kept as an admission only when at least
 * {@code replicas} did. {@code WAIT} is not a transaction: the write stays on the master whatever
 * it answers, which is why the store gives back an admission it does not keep.
 *
 * <p><b>Cost.</b> Redis does not read a client's next command while that client waits in
 * {@code WAIT}: the store's one connection moves at the pace of the replicas' acknowledgements
 * (the master asks for them at once, {@code REPLCONF GETACK}), one per call. Coalescing
 * ({@link Coalescer}) carries many decisions per call, so busy keys share one wait.
 *
 * <p><b>Refusals.</b> A refused acquisition commits nothing a failover could lose: whatever
 * {@code WAIT} answers, a refusal stands. Its reply still comes after the {@code WAIT} behind its
 * call (which may carry admissions too): at once when the replicas keep up, after the timeout when
 * they do not. Sending {@code WAIT} only after an admitting reply would spare refusals that wait
 * but add a round trip to every admission.
 *
 * <p>Not for Redis Cluster: there {@code WAIT} has no key, goes to whichever node the connection
 * picks, and counts that node's replicas, not those of the master that wrote the admission
 * (RedisStore.Builder refuses the combination).
 *
 * <p>Immutable; thread-safe.
 *
 * @param replicas how many replicas must acknowledge an admission's write (at least 1)
 * @param timeout how long Redis waits for them ({@code WAIT}'s timeout, at least 1 ms)
 */
public record ReplicaAcknowledgement(int replicas, Duration timeout) {

  /** The most replicas that may be asked for: more than any deployment runs behind one master. */
  public static final int MAX_REPLICAS = 100;

  public ReplicaAcknowledgement {
    if (replicas < 1 || replicas > MAX_REPLICAS) {
      throw new IllegalArgumentException("replicaAcknowledgements.replicas: expected from 1 to " + MAX_REPLICAS
          + ", got " + replicas);
    }
    if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(Duration.ofMinutes(1)) > 0) {
      // WAIT 0 would block until the replicas answer, however long: never what a decision wants
      throw new IllegalArgumentException("replicaAcknowledgements.timeout: expected from 1 ms to 1 minute, got "
          + timeout);
    }
  }

  /**
   * Writes {@code WAIT} on {@code c} now, right after the call whose reply is {@code reply} (the
   * caller has just written that call from this thread), and answers that reply once both have
   * come back: as it is when enough replicas acknowledged, else failed with {@link Unacknowledged}
   * carrying it. A failed call stays failed; a failed {@code WAIT} counts as no acknowledgement.
   */
  CompletableFuture<long[]> after(RedisClusterAsyncCommands<byte[], byte[]> c, CompletableFuture<long[]> reply) {
    CompletableFuture<Long> acks;
    try {
      acks = c.waitForReplication(replicas, timeout.toMillis()).toCompletableFuture();
    } catch (RuntimeException e) {
      acks = CompletableFuture.failedFuture(e);
    }
    return reply.thenCombine(acks.handle((n, e) -> e == null ? new Acks(n, null) : new Acks(0, e)), (r, a) -> {
      if (a.count >= replicas) {
        return r;
      }
      throw new Unacknowledged(r, a.count, this, a.error);
    });
  }

  private record Acks(long count, Throwable error) {}

  /**
   * The {@link Unacknowledged} within a failure (as completed, or wrapped by a
   * {@link CompletionException} or {@link ExecutionException}), or null when it is another failure.
   */
  public static Unacknowledged unacknowledged(Throwable e) {
    Throwable t = e;
    for (int depth = 0; t != null && depth < 4; depth++) {
      if (t instanceof Unacknowledged u) {
        return u;
      }
      if (!(t instanceof CompletionException) && !(t instanceof ExecutionException)) {
        return null;
      }
      t = t.getCause();
    }
    return null;
  }

  /**
   * Redis decided, and fewer replicas than asked acknowledged the write within the timeout: the
   * decision's reply (applied on the master), for the store to keep or give back.
   */
  public static final class Unacknowledged extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient long[] reply;

    Unacknowledged(long[] reply, long acknowledged, ReplicaAcknowledgement asked, Throwable waitFailure) {
      super("Redis's replicas acknowledged the admission's write " + acknowledged + " of " + asked.replicas
          + " times within " + asked.timeout.toMillis() + " ms (replicaAcknowledgements)"
          + (waitFailure == null ? "" : "; WAIT failed: " + waitFailure.getMessage()), waitFailure, false, false);
      this.reply = reply;
    }

    /** A member of a batch: its own reply, with the batch's reason. */
    private Unacknowledged(long[] reply, Unacknowledged batch) {
      super(batch.getMessage(), batch.getCause(), false, false);
      this.reply = reply;
    }

    /** The reply Redis gave (and applied on the master). */
    public long[] reply() {
      return reply;
    }

    /** The same failure for one decision of this batch, whose own reply is {@code own}. */
    public Unacknowledged of(long[] own) {
      return new Unacknowledged(own, this);
    }
  }
}
