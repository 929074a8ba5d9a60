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

  private final DecisionCalls calls;
  private final RefusalMemory refusals;
  private final ConcurrentHashMap<ByteBuffer, Lane> lanes = new ConcurrentHashMap<>();

  public Coalescer(DecisionCalls calls, RefusalMemory refusals) {
    this.calls = calls;
    this.refusals = refusals;
  }

  /**
   * Sends the call now when no call on its keys is in flight, else queues it for the next batch.
   * The future completes with this call's own reply.
   */
  public CompletableFuture<long[]> send(RedisClusterAsyncCommands<byte[], byte[]> c, DecisionScript.Call call,
      WriteStamp stamp) {
    long[] refused = refusals.answer(call, System.nanoTime());
    if (refused != null) {
      return CompletableFuture.completedFuture(refused);
    }
    ByteBuffer keys = call.keys();
    Lane fresh = null;
    while (true) {
      Lane lane = lanes.get(keys);
      if (lane == null) {
        if (fresh == null) {
          fresh = new Lane(keys, stamp);
        }
        if (lanes.putIfAbsent(keys, fresh) == null) {
          CompletableFuture<long[]> reply = calls.sendOnce(c, call, stamp);
          CompletableFuture<long[]> own = new CompletableFuture<>();
          Lane opened = fresh;
          reply.whenComplete((r, e) -> {
            try {
              remember(call, stamp, r, e); // before the caller wakes: its next request may ask
              if (e != null) {
                own.completeExceptionally(e);
              } else {
                own.complete(r);
              }
            } finally {
              opened.next(c);
            }
          });
          return own;
        }
        continue;
      }
      synchronized (lane) {
        if (!lane.closed) {
          Member m = new Member(call, stamp);
          stamp.queuedBehind(lane.inFlight); // waits on Redis's reply to the call before it
          lane.queue.add(m);
          return m.reply;
        }
      }
      // closed meanwhile (and removed): look again
    }
  }

  /** The last reply on a call's keys: what {@link RefusalMemory} keeps or forgets. */
  private void remember(DecisionScript.Call call, WriteStamp written, long[] reply, Throwable e) {
    if (e == null && written.written()) {
      refusals.answered(call, reply, written.writtenAt(), System.nanoTime());
    }
  }

  /** Lanes open now (tests). */
  int lanes() {
    return lanes.size();
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
    /** The stamp of the call in flight (for a batch, its first member's). */
    WriteStamp inFlight;
    List<Member> queue = new ArrayList<>();
    boolean closed;

    Lane(ByteBuffer keys, WriteStamp inFlight) {
      this.keys = keys;
      this.inFlight = inFlight;
    }

    /** The call in flight was answered: send what queued meanwhile, or close. */
    void next(RedisClusterAsyncCommands<byte[], byte[]> c) {
      List<Member> batch;
      synchronized (this) {
        if (queue.isEmpty()) {
          closed = true;
          lanes.remove(keys, this);
          return;
        }
        if (queue.size() <= MAX_BATCH) {
          batch = queue;
          queue = new ArrayList<>();
        } else {
          batch = new ArrayList<>(queue.subList(0, MAX_BATCH));
          queue = new ArrayList<>(queue.subList(MAX_BATCH, queue.size()));
        }
        inFlight = batch.get(0).stamp;
      }
      CompletableFuture<long[]> reply;
      if (batch.size() == 1) {
        Member m = batch.get(0);
        reply = calls.sendOnce(c, m.call, m.stamp);
        reply.whenComplete((r, e) -> {
          try {
            remember(m.call, m.stamp, r, e);
            if (e != null) {
              m.reply.completeExceptionally(e);
            } else {
              m.reply.complete(r);
            }
          } finally {
            next(c);
          }
        });
        return;
      }
      List<DecisionScript.Call> encoded = new ArrayList<>(batch.size());
      WriteStamp[] stamps = new WriteStamp[batch.size()];
      DecisionScript.Call first = batch.get(0).call;
      boolean same = true;
      for (int i = 0; i < batch.size(); i++) {
        DecisionScript.Call call = batch.get(i).call;
        encoded.add(call);
        stamps[i] = batch.get(i).stamp;
        same = same && DecisionScript.sameRequest(first, call);
      }
      boolean repeated = same;
      try {
        reply = calls.sendOnce(c, repeated ? DecisionScript.repeat(first, batch.size()) : DecisionScript.batch(encoded),
            stamps);
      } catch (RuntimeException e) {
        reply = CompletableFuture.failedFuture(e);
      }
      reply.whenComplete((r, e) -> {
        try {
          if (e != null) {
            for (Member m : batch) {
              m.reply.completeExceptionally(e);
            }
            return;
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
          int last = batch.size() - 1;
          remember(batch.get(last).call, batch.get(0).stamp, replies[last], null);
          for (int i = 0; i < batch.size(); i++) {
            batch.get(i).reply.complete(replies[i]);
          }
        } finally {
          next(c);
        }
      });
    }
  }
}
