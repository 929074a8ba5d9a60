package dev.headroom.redis.internal;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import io.lettuce.core.cluster.SlotHash;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * One slot's share of a request: its acquisitions, their places in the request, the stamp of its
 * command's write and the reply. On a standalone Redis (or for one policy) a request is one share;
 * on a Cluster, one per hash slot its keys fall in, each decided by its own call.
 *
 * <p>{@link #merge} turns the replies of several shares into one decision, all or nothing, by
 * reservation and refund: when every share admitted, their outcomes are the decision; when any
 * refused, each share that admitted is given back (a refund, or the release of its lease) and
 * reports its state after that. Meanwhile the reserved units were held for one round trip: a
 * concurrent request may be refused that a single script would have admitted; nothing is ever
 * admitted beyond a quota.
 *
 * <p>The reply is set once by the thread that sends the call and read after it completes.
 */
public final class SlotShare {
  private final List<Acquisition> acquisitions;
  /** Per acquisition, its place in the request; null when the share is the whole request, in order. */
  private final List<Integer> indexes;
  private final WriteStamp stamp;
  private volatile CompletableFuture<long[]> reply;

  private SlotShare(long requestedAt, List<Acquisition> acquisitions, List<Integer> indexes) {
    this.stamp = new WriteStamp(requestedAt);
    this.acquisitions = acquisitions;
    this.indexes = indexes;
  }

  /**
   * The shares of a request, asked for now: one, unless a Cluster spreads its keys over slots.
   *
   * @param request not changed afterwards (a share of the whole request keeps it as it is)
   */
  public static List<SlotShare> of(KeyLayout layout, boolean cluster, List<Acquisition> request) {
    long requestedAt = System.nanoTime();
    if (!cluster || request.size() == 1) {
      return List.of(new SlotShare(requestedAt, request, null));
    }
    Map<Integer, SlotShare> bySlot = new LinkedHashMap<>();
    for (int i = 0; i < request.size(); i++) {
      Acquisition a = request.get(i);
      int slot = SlotHash.getSlot(layout.key(a.policy(), a.key()));
      SlotShare g = bySlot.computeIfAbsent(slot, s -> new SlotShare(requestedAt, new ArrayList<>(2), new ArrayList<>(2)));
      g.acquisitions.add(a);
      g.indexes.add(i);
    }
    return new ArrayList<>(bySlot.values());
  }

  /** The stamp that decides when a request's decision expires: an unwritten share's, else the last written. */
  public static WriteStamp deciding(List<SlotShare> shares) {
    WriteStamp latest = shares.get(0).stamp;
    for (SlotShare g : shares) {
      if (!g.stamp.written()) {
        return g.stamp;
      }
      if (latest.written() && g.stamp.writtenAt() - latest.writtenAt() > 0) {
        latest = g.stamp;
      }
    }
    return latest;
  }

  public List<Acquisition> acquisitions() {
    return acquisitions;
  }

  public WriteStamp stamp() {
    return stamp;
  }

  public CompletableFuture<long[]> reply() {
    return reply;
  }

  public void reply(CompletableFuture<long[]> reply) {
    this.reply = reply;
  }

  /** The lease ids an admitting reply carries, one per acquisition (0 where there is none). */
  public long[] leaseIds(long[] reply) {
    long[] ids = new long[acquisitions.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = DecisionScript.leaseId(reply, i);
    }
    return ids;
  }

  /**
   * Several shares replied: completes {@code result} with their merged decision, or with the
   * state after giving back the shares that admitted when another refused.
   *
   * @param giveBack sends the give-back of a share with its lease ids
   * @param refundLate called once per give-back that did not answer within {@code deadlineNanos}
   */
  public static void merge(List<Acquisition> request, List<SlotShare> shares,
      BiFunction<SlotShare, long[], CompletableFuture<long[]>> giveBack, Runnable refundLate, long deadlineNanos,
      CompletableFuture<Decision> result) {
    PolicyOutcome[] merged = new PolicyOutcome[request.size()];
    boolean allAllowed = true;
    for (SlotShare g : shares) {
      allAllowed &= DecisionScript.allAllowed(g.reply.join());
    }
    List<SlotShare> toGiveBack = new ArrayList<>();
    List<CompletableFuture<long[]>> givenBack = new ArrayList<>();
    for (SlotShare g : shares) {
      long[] reply = g.reply.join();
      if (allAllowed || !DecisionScript.allAllowed(reply)) {
        g.place(DecisionScript.outcomes(reply, g.acquisitions), merged);
      } else {
        toGiveBack.add(g);
        givenBack.add(giveBack.apply(g, g.leaseIds(reply)).completeOnTimeout(null, deadlineNanos, TimeUnit.NANOSECONDS));
      }
    }
    if (toGiveBack.isEmpty()) {
      result.complete(Decision.of(Arrays.asList(merged)));
      return;
    }
    CompletableFuture.allOf(givenBack.toArray(new CompletableFuture<?>[0])).whenComplete((ignored, error) -> {
      for (int k = 0; k < toGiveBack.size(); k++) {
        SlotShare g = toGiveBack.get(k);
        long[] after = givenBack.get(k).isCompletedExceptionally() ? null : givenBack.get(k).join();
        if (after != null) {
          g.place(DecisionScript.outcomes(after, g.acquisitions), merged);
        } else {
          // The refund did not answer in time: report the state before the request as the
          // reservation saw it (r before = r after + cost; t as seen after).
          refundLate.run();
          List<PolicyOutcome> outcomes = new ArrayList<>();
          for (PolicyOutcome o : DecisionScript.outcomes(g.reply.join(), g.acquisitions)) {
            outcomes.add(new PolicyOutcome(o.policy(), o.key(), o.cost(), true,
                Math.min(o.policy().quota(), o.remaining() + o.cost()), o.reset().toNanos(), 0, null));
          }
          g.place(outcomes, merged);
        }
      }
      result.complete(Decision.of(Arrays.asList(merged)));
    });
  }

  private void place(List<PolicyOutcome> outcomes, PolicyOutcome[] merged) {
    for (int i = 0; i < outcomes.size(); i++) {
      merged[indexes == null ? i : indexes.get(i)] = outcomes.get(i);
    }
  }
}
