package dev.headroom.redis.internal;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Refusals Redis gave, remembered until they could change: a request equal to one Redis refused,
 * made before that refusal's Retry-After has run out, is refused here without a round trip.
 *
 * <p>Why it is exact: between two equal requests on the same keys, Redis's state for them only
 * moves toward refusal (another admission or charge, by this process or any other, adds use; time
 * passing is what the Retry-After already counts), except for a give-back (a refund, a released
 * lease), which the store reports here ({@link #forgetAll}). So a request equal to a refused one,
 * decided at an instant before the refused one's {@code retry}, is refused alike: the coalescer's
 * "equal requests are refused alike after the first refusal" carried over time. Concurrency
 * policies (leases released at any moment) and calls carrying a test ticker's time are never
 * remembered.
 *
 * <p>State, per key set: the refused call (its keys and arguments, to recognise an equal
 * request), its reply, when it was written ({@code s}, the earliest local instant at which Redis
 * can have decided it) and when its reply was read ({@code a}, the latest). Redis decided it at
 * its {@code TIME} T0, which lies between {@code s} and {@code a} on this process's clock; a
 * request now, at local {@code n}, would be decided at a Redis instant no later than
 * {@code T0 + (n - s)}. So it is refused while {@code n - s < r}, where {@code r} is the longest
 * Retry-After among the refused policies (each admits again only after its own). Its reply is the
 * remembered one with every duration shortened by {@code n - a}, the least time that can have
 * passed on Redis: never earlier than Redis would say, later by at most one round trip. Remaining
 * counts are the remembered ones (0 for the refused policies).
 *
 * <p>Bounds: a refusal is remembered at most {@code limit} (so a give-back by another process
 * is seen within it), and at most {@link #MAX_ENTRIES} key sets at once (beyond that, refusals are
 * not remembered until expired ones are swept). Thread-safe; lookups take no lock.
 */
public final class RefusalMemory {

  /** The most key sets remembered at once. */
  public static final int MAX_ENTRIES = 10_000;

  private static final long E9 = 1_000_000_000L;

  private final long limitNanos;
  private final ConcurrentHashMap<ByteBuffer, Refusal> refusals = new ConcurrentHashMap<>();
  private final LongAdder answered = new LongAdder();

  /** @param limitNanos the longest a refusal is remembered; 0 remembers nothing */
  public RefusalMemory(long limitNanos) {
    this.limitNanos = limitNanos;
  }

  private record Refusal(DecisionScript.Call call, long[] reply, long readAt, long until) {}

  /**
   * {@link #answer(DecisionScript.Call, long)} now: the clock is read only when a refusal may be
   * remembered for the call.
   */
  public long[] answerNow(DecisionScript.Call call) {
    if (!call.rememberable() || refusals.isEmpty()) {
      return null;
    }
    return answer(call, System.nanoTime());
  }

  /**
   * The remembered refusal's reply for an equal call made at {@code now} ({@link System#nanoTime}),
   * or null when Redis must decide.
   */
  public long[] answer(DecisionScript.Call call, long now) {
    if (!call.rememberable() || refusals.isEmpty()) {
      return null;
    }
    Refusal r = refusals.get(call.keys());
    if (r == null) {
      return null;
    }
    if (now - r.until >= 0) {
      refusals.remove(call.keys(), r);
      return null;
    }
    if (!DecisionScript.sameRequest(r.call, call)) {
      return null;
    }
    answered.increment();
    return aged(r.reply, Math.max(0, now - r.readAt));
  }

  /** Calls {@link #answer} answered from memory, since creation. */
  public long answered() {
    return answered.sum();
  }

  /**
   * Redis answered {@code call}, written at {@code writtenAt} and read at {@code readAt}: remember
   * a refusal, forget what an admission makes stale.
   */
  public void answered(DecisionScript.Call call, long[] reply, long writtenAt, long readAt) {
    if (limitNanos <= 0 || !call.rememberable()) {
      return;
    }
    ByteBuffer keys = call.keys();
    if (reply == null || reply.length < 1 + DecisionScript.FIELDS || reply[0] == 1L) {
      if (!refusals.isEmpty()) {
        refusals.remove(keys);
      }
      return;
    }
    long retry = 0;
    for (int i = 1; i + DecisionScript.FIELDS <= reply.length; i += DecisionScript.FIELDS) {
      if (reply[i] != 1L) {
        retry = Math.max(retry, DecisionScript.nanos(reply[i + 4], reply[i + 5]));
      }
    }
    long lasts = Math.min(retry, limitNanos);
    if (lasts <= 0 || readAt - writtenAt >= lasts) {
      refusals.remove(keys);
      return;
    }
    if (refusals.size() >= MAX_ENTRIES && !refusals.containsKey(keys)) {
      sweep(readAt);
      if (refusals.size() >= MAX_ENTRIES) {
        return;
      }
    }
    refusals.put(keys, new Refusal(call, reply.clone(), readAt, writtenAt + lasts));
  }

  /** A give-back happened: any remembered refusal may have ended. */
  public void forgetAll() {
    if (!refusals.isEmpty()) {
      refusals.clear();
    }
  }

  /** Key sets remembered now (tests). */
  int size() {
    return refusals.size();
  }

  private void sweep(long now) {
    refusals.values().removeIf(r -> now - r.until >= 0);
  }

  /**
   * The reply with its durations (reset, Retry-After, the time until more quota) shortened by
   * {@code elapsed}, not below 0.
   */
  private static long[] aged(long[] reply, long elapsed) {
    long[] out = reply.clone();
    for (int i = 1; i + DecisionScript.FIELDS <= out.length; i += DecisionScript.FIELDS) {
      shorten(out, i + 2, elapsed);
      shorten(out, i + 4, elapsed);
      shorten(out, i + 7, elapsed);
    }
    return out;
  }

  private static void shorten(long[] reply, int at, long elapsed) {
    long d = DecisionScript.nanos(reply[at], reply[at + 1]);
    if (d == Long.MAX_VALUE) {
      return; // never: stays never
    }
    long left = Math.max(0, d - elapsed);
    reply[at] = left / E9;
    reply[at + 1] = left % E9;
  }
}
