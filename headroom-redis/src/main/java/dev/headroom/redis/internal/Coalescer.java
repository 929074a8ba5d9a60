package dev.headroom.redis.internal;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Concurrent decisions on the same keys become one call: opportunistic batching, with no timer.
 *
 * <p>How: a lane per key set (the encoded numkeys and keys of a call). A decision that finds no
 * lane opens one and sends its own call at once, so a lone caller waits for nothing. Decisions
 * that arrive while that call is in flight queue on the lane; when its reply arrives, everything
 * queued is sent as one call ({@link DecisionScript#batch}, at most {@link #MAX_BATCH} decisions),
 * and so on until a reply finds the queue empty, which closes the lane. Redis decides the
 * batch's decisions one after another with the single-decision code, so each is decided exactly
 * as its own call would have been at that moment; the reply is split back to each decision's
 * future ({@link DecisionScript#split}). A batch of equal requests (a hot route's, one key, one
 * cost) is sent as one request and a count ({@link DecisionScript#repeat}), and Redis evaluates it
 * only until its first refusal, which the remaining copies would repeat exactly (nothing changed
 * and the instant is the batch's): a hot key costs Redis (admitted + 1) evaluations per batch.
 * Different key sets keep sharing the connection's pipeline as before.
 *
 * <p><b>Across keys</b> (a standalone Redis, where one call may touch keys of any slot): every
 * decision shares one lane, which keeps up to {@link #IN_FLIGHT_ACROSS} calls in flight; what
 * arrives while they are is sent as one call when a reply comes back ({@link DecisionScript#across}
 * when the keys differ), so n callers on n different keys cost Redis one command, one read and one
 * reply instead of n. Redis decides the calls of a connection in the order they were written, so
 * each decision is still decided exactly as alone, at its own instant.
 *
 * <p>Deadlines ({@link Deadlines}) keep their meaning: the batch's command marks every member's
 * {@link WriteStamp} when it is written; a decision that queues behind a call in flight waits
 * on Redis, not on this process, so its stamp counts as written from the later of that call's
 * write and its queueing ({@link WriteStamp#queuedBehind}). A member whose
 * caller was decided without it (its deadline passed) still goes in the batch, and its reply is
 * given back by the caller's path like any late reply. A batch that fails fails every member's
 * future with the same error; each caller then recovers (loads the library) or applies its
 * failure policy by itself. Memory: lanes exist only while a call is in flight on them, and what
 * queues is bounded by the store's admission control ({@code maxOutstanding}).
 *
 * <p>Refusals carry over time ({@link RefusalMemory}): a request equal to one Redis refused, made
 * before that refusal's Retry-After has run out, is answered at once with that refusal, aged; the
 * last reply on a key set says what is remembered (a refusal) or forgotten (an admission).
 *
 * <p>Thread-safe.
 */
public final class Coalescer {

  /** The most decisions in one call: bounds the time one call holds Redis. */
  public static final int MAX_BATCH = 256;

  /** Calls in flight at once on the lane that all keys share (standalone Redis). */
  public static final int IN_FLIGHT_ACROSS = 2;

  private static final ByteBuffer ALL_KEYS = ByteBuffer.wrap(new byte[0]);

  private final DecisionCalls calls;
  private final RefusalMemory refusals;
  private final boolean acrossKeys;
  private final ConcurrentHashMap<ByteBuffer, Lane> lanes = new ConcurrentHashMap<>();

  /**
   * @param acrossKeys whether decisions on different keys may share a call (a standalone Redis;
   *     never a Cluster, whose calls must keep to one slot)
   */
  public Coalescer(DecisionCalls calls, RefusalMemory refusals, boolean acrossKeys) {
    this.calls = calls;
    this.refusals = refusals;
    this.acrossKeys = acrossKeys;
  }

  /**
   * Sends the call now when its lane has room in flight, else queues it for the next batch. The
   * future completes with this call's own reply.
   */
  public CompletableFuture<long[]> send(RedisClusterAsyncCommands<byte[], byte[]> c, DecisionScript.Call call,
      WriteStamp stamp) {
    long[] refused = refusals.answerNow(call);
    if (refused != null) {
      return CompletableFuture.completedFuture(refused);
    }
    ByteBuffer keys = acrossKeys ? ALL_KEYS : call.keys();
    Lane fresh = null;
    while (true) {
      Lane lane = lanes.get(keys);
      if (lane == null) {
        if (fresh == null) {
          fresh = new Lane(keys, stamp, acrossKeys ? IN_FLIGHT_ACROSS : 1);
        }
        if (lanes.putIfAbsent(keys, fresh) == null) {
          return fresh.sendAlone(c, call, stamp);
        }
        continue;
      }
      boolean alone;
      synchronized (lane) {
        if (lane.closed) {
          continue; // closed meanwhile (and removed): look again
        }
        alone = lane.inFlightCalls < lane.maxInFlight;
        if (alone) {
          lane.inFlightCalls++;
          lane.inFlightDecisions++;
          lane.inFlight = stamp;
        } else {
          Member m = new Member(call, stamp);
          stamp.queuedBehind(lane.inFlight); // waits on Redis's reply to the call before it
          lane.queue.add(m);
          return m.reply;
        }
      }
      return lane.sendAlone(c, call, stamp);
    }
  }

  /** Lanes open now (tests). */
  int lanes() {
    return lanes.size();
  }

  /**
   * The last reply on a call's keys: what {@link RefusalMemory} keeps or forgets (an admission that
   * replicas did not acknowledge is still a reply Redis gave).
   */
  private void remember(DecisionScript.Call call, WriteStamp written, long[] reply, Throwable e) {
    ReplicaAcknowledgement.Unacknowledged u = e == null ? null : ReplicaAcknowledgement.unacknowledged(e);
    if ((e == null || u != null) && written.written()) {
      refusals.answered(call, e == null ? reply : u.reply(), written.writtenAt(), System.nanoTime());
    }
  }

  /** {@link #remember} of a batch's member, its reply read at {@code readAt}. */
  private void remember(DecisionScript.Call call, long writtenAt, long[] reply, long readAt) {
    refusals.answered(call, reply, writtenAt, readAt);
  }

  private static final class Member {
    final DecisionScript.Call call;
    final WriteStamp stamp;
    final CompletableFuture<long[]> reply = new CompletableFuture<>();

    Member(DecisionScript.Call call, WriteStamp stamp) {
      this.call = call;
      this.stamp = stamp;
    }
  }

  private final class Lane {
    final ByteBuffer keys;
    final int maxInFlight;
    /** The stamp of the call written last (for a batch, its first member's). */
    WriteStamp inFlight;
    int inFlightCalls = 1;
    /** The decisions the calls in flight carry. */
    int inFlightDecisions = 1;
    List<Member> queue = new ArrayList<>();
    boolean closed;

    Lane(ByteBuffer keys, WriteStamp inFlight, int maxInFlight) {
      this.keys = keys;
      this.inFlight = inFlight;
      this.maxInFlight = maxInFlight;
    }

    /** One decision's own call, counted in flight on this lane by the caller. */
    CompletableFuture<long[]> sendAlone(RedisClusterAsyncCommands<byte[], byte[]> c, DecisionScript.Call call,
        WriteStamp stamp) {
      CompletableFuture<long[]> reply;
      try {
        reply = calls.sendOnce(c, call, stamp);
      } catch (RuntimeException e) {
        reply = CompletableFuture.failedFuture(e);
      }
      CompletableFuture<long[]> own = new CompletableFuture<>();
      reply.whenComplete((r, e) -> {
        try {
          remember(call, stamp, r, e); // before the caller wakes: its next request may ask
          if (e != null) {
            own.completeExceptionally(e);
          } else {
            own.complete(r);
          }
        } finally {
          next(c, 1);
        }
      });
      return own;
    }

    /**
     * A call in flight carrying {@code answered} decisions was answered: send what queued
     * meanwhile in its place, or count one call fewer. (Decisions queue only while every call is
     * in flight, so a reply frees exactly the one room the next batch takes.)
     *
     * <p>With room for more than one call, a batch takes only its share of what waits, queued and
     * in flight: {@code ceil((queued + in flight) / maxInFlight)}; the rest goes with the next reply.
     * Callers that start their next decision when the last is answered make each batch beget one
     * of the same size, so calls of 60 and 4 would stay 60 and 4: Redis answers the 4 at once and
     * then waits while this process reads the 60 and sends the next, as if one call were in
     * flight. Shares keep the calls about equal, so that Redis decides one while the reply to the
     * other is read. Nothing waits longer for it: what stays queued goes when the call ahead of
     * it is answered, before Redis could have reached it.
     */
    void next(RedisClusterAsyncCommands<byte[], byte[]> c, int answered) {
      List<Member> batch;
      synchronized (this) {
        inFlightDecisions -= answered;
        if (queue.isEmpty()) {
          if (--inFlightCalls == 0) {
            closed = true;
            lanes.remove(keys, this);
          }
          return;
        }
        int share = (queue.size() + inFlightDecisions + maxInFlight - 1) / maxInFlight;
        int take = Math.min(Math.min(queue.size(), MAX_BATCH), Math.max(1, share));
        if (take == queue.size()) {
          batch = queue;
          queue = new ArrayList<>();
        } else {
          batch = new ArrayList<>(queue.subList(0, take));
          queue = new ArrayList<>(queue.subList(take, queue.size()));
        }
        inFlightDecisions += take;
        inFlight = batch.get(0).stamp;
      }
      sendBatch(c, batch);
    }

    private void sendBatch(RedisClusterAsyncCommands<byte[], byte[]> c, List<Member> batch) {
      if (batch.size() == 1) {
        Member m = batch.get(0);
        sendAlone(c, m.call, m.stamp).whenComplete((r, e) -> {
          if (e != null) {
            m.reply.completeExceptionally(e);
          } else {
            m.reply.complete(r);
          }
        });
        return;
      }
      List<DecisionScript.Call> encoded = new ArrayList<>(batch.size());
      WriteStamp[] stamps = new WriteStamp[batch.size()];
      DecisionScript.Call first = batch.get(0).call;
      boolean same = true;
      boolean sameKeys = true;
      for (int i = 0; i < batch.size(); i++) {
        DecisionScript.Call call = batch.get(i).call;
        encoded.add(call);
        stamps[i] = batch.get(i).stamp;
        sameKeys = sameKeys && DecisionScript.sameKeys(first, call);
        same = same && sameKeys && DecisionScript.sameRequest(first, call);
      }
      boolean repeated = same;
      CompletableFuture<long[]> reply;
      try {
        DecisionScript.Call one = repeated ? DecisionScript.repeat(first, batch.size())
            : sameKeys ? DecisionScript.batch(encoded) : DecisionScript.across(encoded);
        reply = calls.sendOnce(c, one, stamps);
      } catch (RuntimeException e) {
        reply = CompletableFuture.failedFuture(e);
      }
      reply.whenComplete((r, e) -> {
        try {
          completeAll(batch, repeated, r, e);
        } finally {
          next(c, batch.size());
        }
      });
    }

    /**
     * Each member's own reply. When replicas did not acknowledge the batch's write, each member
     * fails with its own reply inside ({@link ReplicaAcknowledgement.Unacknowledged#of}): its caller
     * keeps a refusal and applies the failure policy to an admission.
     */
    private void completeAll(List<Member> batch, boolean repeated, long[] r, Throwable e) {
      ReplicaAcknowledgement.Unacknowledged unacknowledged = e == null ? null : ReplicaAcknowledgement.unacknowledged(e);
      if (e != null && unacknowledged == null) {
        for (Member m : batch) {
          m.reply.completeExceptionally(e);
        }
        return;
      }
      if (unacknowledged != null) {
        r = unacknowledged.reply();
      }
      long[][] replies;
      try {
        replies = repeated ? DecisionScript.splitRepeat(r, batch.size()) : DecisionScript.split(r, batch.size());
      } catch (RuntimeException bad) {
        for (Member m : batch) {
          m.reply.completeExceptionally(bad);
        }
        return;
      }
      WriteStamp written = batch.get(0).stamp;
      if (repeated) {
        remember(batch.get(0).call, written, replies[batch.size() - 1], null);
      } else if (written.written()) {
        long writtenAt = written.writtenAt();
        long readAt = System.nanoTime(); // one reply, read once, for every member
        for (int i = 0; i < batch.size(); i++) {
          remember(batch.get(i).call, writtenAt, replies[i], readAt); // in order: the last on its keys wins
        }
      }
      for (int i = 0; i < batch.size(); i++) {
        if (unacknowledged == null) {
          batch.get(i).reply.complete(replies[i]);
        } else {
          batch.get(i).reply.completeExceptionally(unacknowledged.of(replies[i]));
        }
      }
    }
  }
}
