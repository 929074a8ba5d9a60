package dev.headroom.redis;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.redis.internal.Deadlines;
import dev.headroom.redis.internal.DecisionScript;
import dev.headroom.redis.internal.ReplicaAcknowledgement;
import dev.headroom.redis.internal.SlotShare;
import dev.headroom.redis.internal.WriteStamp;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import java.util.List;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The decisions of {@link RedisStore} that are not awaited on the caller's thread: asynchronous
 * ones, and those whose policies fall in several Cluster slots, decided by reservation and
 * refund ({@link SlotShare}). Each is a {@link Pending}, settled once, by Redis's answers or by
 * the deadline (counted from the write, see {@link Deadlines}); an admission that Redis applies
 * after the decision was made without it, or that a cross-slot decision did not use, is given
 * back.
 */
final class SlotDecisions {

  private static final Logger LOG = LoggerFactory.getLogger(RedisStore.class);

  private final RedisStore store;
  private final Deadlines deadlines;
  private final long deadlineNanos;
  /** Deadlines of asynchronous decisions: a wheel, whose schedule and cancel never take a lock. */
  private final Timer timer;
  private final LongAdder failures;
  private final LongAdder givenBackLate;

  SlotDecisions(RedisStore store, Deadlines deadlines, long deadlineNanos,
      Timer timer, LongAdder failures, LongAdder givenBackLate) {
    this.store = store;
    this.deadlines = deadlines;
    this.deadlineNanos = deadlineNanos;
    this.timer = timer;
    this.failures = failures;
    this.givenBackLate = givenBackLate;
  }

  /** A decision under way: settled once, by Redis's answer or by the deadline. */
  final class Pending {
    final List<Acquisition> request;
    final List<SlotShare> groups;
    final CompletableFuture<Decision> result = new CompletableFuture<>();
    final AtomicBoolean settled = new AtomicBoolean();
    volatile Timeout timeout;
    /** Whether the expiry was handed to the I/O loop (once). */
    volatile boolean deferred;

    Pending(List<Acquisition> request, List<SlotShare> groups) {
      this.request = request;
      this.groups = groups;
    }

    WriteStamp stamp() {
      return SlotShare.deciding(groups);
    }

    /** Checks again when the deadline, counted from the write once there is one, will have passed. */
    void schedule() {
      Timeout t = timer.newTimeout(x -> check(), deadlines.untilCheck(stamp()), TimeUnit.NANOSECONDS);
      timeout = t;
      if (result.isDone()) {
        t.cancel();
      }
    }

    /**
     * On the timer: expire when the deadline has passed, else wait for it. A written command
     * expires on the loop that reads its reply (the timer one deadline later if it is stuck), so
     * a reply that arrived in time but waited for a starved I/O thread still wins.
     */
    void check() {
      if (result.isDone()) {
        return;
      }
      WriteStamp s = stamp();
      if (deadlines.waiting(s)) {
        schedule(); // the command was written after the first check was set: count from the write
        return;
      }
      Runnable expiry = () -> expire(() -> deadlines.expired(s));
      if (!deferred && deadlines.runOnWriter(s, expiry)) {
        deferred = true;
        timeout = timer.newTimeout(x -> expiry.run(), deadlines.deadlineNanos(), TimeUnit.NANOSECONDS);
      } else {
        expiry.run();
      }
    }

    /** The deadline passed: the failure policy decides; what Redis applies later is given back. */
    void expire(Supplier<? extends Throwable> reason) {
      if (settled.compareAndSet(false, true)) {
        Throwable why = reason.get();
        giveBackWhenAllowed(groups, true);
        if (why instanceof StoreOverloadedException) {
          result.completeExceptionally(why);
        } else {
          fail(result, request, why);
        }
      }
    }
  }

  Pending decide(List<Acquisition> request, List<SlotShare> groups) {
    Long now = store.now();
    Pending p = new Pending(request, groups);
    StoreOverloadedException full = deadlines.refuseOverLimit();
    if (full != null) {
      p.settled.set(true);
      p.result.completeExceptionally(full);
      return p;
    }
    boolean single = groups.size() == 1;
    CompletableFuture<?> all;
    if (single) {
      // One share: its reply is counted out by the callback below, not by a stage of its own.
      SlotShare g = groups.get(0);
      deadlines.sent();
      g.reply(store.coalesced(store.encode(DecisionScript.ACQUIRE, now, g.acquisitions(), null), g.stamp()));
      all = g.reply();
    } else {
      CompletableFuture<?>[] replies = new CompletableFuture<?>[groups.size()];
      for (int i = 0; i < groups.size(); i++) {
        SlotShare g = groups.get(i);
        g.reply(store.coalesced(store.encode(DecisionScript.ACQUIRE, now, g.acquisitions(), null), g.stamp()));
        deadlines.track(g.reply());
        replies[i] = g.reply();
      }
      all = CompletableFuture.allOf(replies);
    }
    all.whenComplete((ignored, error) -> {
      if (single) {
        deadlines.answered();
      }
      if (!p.settled.compareAndSet(false, true)) {
        return; // decided by the deadline; that path gives back what Redis applies late
      }
      Timeout t = p.timeout;
      if (t != null) {
        t.cancel();
      }
      ReplicaAcknowledgement.Unacknowledged unacknowledged = ReplicaAcknowledgement.unacknowledged(error);
      if (unacknowledged != null && single) {
        try {
          p.result.complete(store.unacknowledged(request, groups.get(0), unacknowledged));
        } catch (RuntimeException e) {
          p.result.completeExceptionally(e);
        }
        return;
      }
      if (error != null) {
        giveBackWhenAllowed(groups, false);
        fail(p.result, request, error);
        return;
      }
      try {
        store.succeeded();
        if (groups.size() == 1) {
          SlotShare g = groups.get(0);
          p.result.complete(Decision.of(DecisionScript.outcomes(g.reply().join(), g.acquisitions())));
        } else {
          SlotShare.merge(request, groups,
              (g, leases) -> store.call(DecisionScript.GIVE_BACK, store.now(), g.acquisitions(), leases), failures::increment,
              deadlineNanos, p.result);
        }
      } catch (RuntimeException e) {
        fail(p.result, request, e);
      }
    });
    return p;
  }

  /**
   * For every group whose reply is (or will be) an admission that no decision used: give it back.
   * Late replies are counted in {@link #givenBackLate()}.
   */
  void giveBackWhenAllowed(List<SlotShare> groups, boolean late) {
    for (SlotShare g : groups) {
      g.reply().whenComplete((answered, error) -> {
        // an admission replicas did not acknowledge was still applied on the master
        ReplicaAcknowledgement.Unacknowledged u = ReplicaAcknowledgement.unacknowledged(error);
        long[] reply = u != null ? u.reply() : answered;
        if (reply != null && DecisionScript.allAllowed(reply)) {
          if (late) {
            givenBackLate.increment();
          }
          giveBack(g, g.leaseIds(reply), 1);
        }
      });
    }
  }

  /**
   * Sends the give-back of a share, again every {@link #RETRY_MILLIS} ms (at most
   * {@link #MAX_ATTEMPTS} times) while it fails in a way that proves Redis never ran it: a Cluster
   * answering {@code CLUSTERDOWN} or {@code TRYAGAIN} (every node refuses commands while a failed
   * master's slots have no owner, which is exactly when a request over two slots, reserved on a
   * live one, must give that one back), or the connection rejecting it while disconnected. A
   * give-back that may have run (a timeout, a lost connection) is not sent again: twice would
   * forgive units that were spent.
   */
  void giveBack(SlotShare g, long[] leaseIds, int attempt) {
    store.call(DecisionScript.GIVE_BACK, store.now(), g.acquisitions(), leaseIds).whenComplete((r, e) -> {
      if (e == null) {
        return;
      }
      if (attempt < MAX_ATTEMPTS && neverRan(e)) {
        try {
          timer.newTimeout(x -> giveBack(g, leaseIds, attempt + 1), RETRY_MILLIS, TimeUnit.MILLISECONDS);
          return;
        } catch (IllegalStateException closed) {
          // the store is closed: nothing will send it
        }
      }
      failures.increment();
      LOG.debug("Headroom could not give back a decision Redis applied late", e);
    });
  }

  static final int MAX_ATTEMPTS = 120;
  static final long RETRY_MILLIS = 250;

  /** Whether a command's failure proves that Redis never ran it. */
  static boolean neverRan(Throwable e) {
    Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    String m = String.valueOf(t.getMessage());
    if (t instanceof RedisCommandExecutionException) {
      return m.startsWith("CLUSTERDOWN") || m.startsWith("TRYAGAIN");
    }
    // Lettuce's refusal of a command while disconnected (DisconnectedBehavior.REJECT_COMMANDS)
    return t instanceof RedisException && m.startsWith("Currently not connected");
  }

  /** Redis could not decide: apply the failure policy to the result. */
  private void fail(CompletableFuture<Decision> result, List<Acquisition> request, Throwable cause) {
    try {
      result.complete(store.failed(request, cause));
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
    }
  }
}
