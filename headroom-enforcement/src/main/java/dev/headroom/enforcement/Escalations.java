package dev.headroom.enforcement;

import dev.headroom.PartitionKey;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Progressive blocking for callers that keep sending while told to wait (Graceful Boundaries
 * section 2, "Retry behavior guidance"; draft-ietf-httpapi-ratelimit-headers-09 section 5.3,
 * {@code abnormal-usage-detected}), the one implementation every front end uses (the gateway, the
 * servlet filter and so the Spring Boot starter).
 *
 * <p>How it works: the first refusal of a partition under a policy opens a wait period that lasts
 * the Retry-After it was given. Each further refusal inside that period is a strike; when strikes
 * reach the policy's {@link Escalation#threshold()}, the partition is blocked for
 * {@link Escalation#block()}, during which a front end refuses it without consulting the store. A
 * refusal after the wait period starts afresh. With threshold 2 and a 60 s window: refused at 0 s
 * (wait until 60 s), again at 1 s (strike 1), again at 2 s (strike 2: blocked until 2 s + block).
 *
 * <p>Time is the caller's: every method takes {@code now} in nanoseconds of the front end's
 * injected {@code Ticker}. Memory is bounded by {@link #MAX_TRACKED}: when full, expired entries
 * are dropped first and new partitions are not tracked until room is made (they are still limited
 * by the store).
 *
 * <p>Thread-safe: a concurrent map of small states each guarded by its own monitor.
 */
public final class Escalations {
  /** The most policy and partition pairs tracked at once. */
  public static final int MAX_TRACKED = 100_000;

  private record Key(String policy, PartitionKey partition) {}

  private static final class State {
    long waitUntil;
    int strikes;
    long blockedUntil;
  }

  private final Map<Key, State> states = new ConcurrentHashMap<>();

  /** Nanoseconds the partition stays blocked under the policy; 0 when not blocked. */
  public long blockedFor(String policy, PartitionKey partition, long now) {
    State s = states.get(new Key(policy, partition));
    if (s == null) {
      return 0;
    }
    synchronized (s) {
      return Math.max(0, s.blockedUntil - now);
    }
  }

  /**
   * Records a refusal told to wait {@code retryAfterNanos}; returns the block in nanoseconds when
   * this refusal escalates, or 0.
   */
  public long onRefused(String policy, Escalation escalation, PartitionKey partition, long now, long retryAfterNanos) {
    return onRefused(policy, escalation.threshold(), escalation.block().toNanos(), partition, now, retryAfterNanos);
  }

  /**
   * As {@link #onRefused(String, Escalation, PartitionKey, long, long)}, for a front end that keeps
   * the escalation's threshold and block in a configuration of its own.
   */
  public long onRefused(String policy, int threshold, long blockNanos, PartitionKey partition, long now,
      long retryAfterNanos) {
    Key key = new Key(policy, partition);
    State s = states.get(key);
    if (s == null) {
      if (states.size() >= MAX_TRACKED) {
        evictExpired(now);
        if (states.size() >= MAX_TRACKED) {
          return 0;
        }
      }
      s = states.computeIfAbsent(key, k -> new State());
    }
    synchronized (s) {
      if (now < s.waitUntil) {
        s.strikes++;
      } else {
        s.strikes = 0;
      }
      s.waitUntil = Math.max(s.waitUntil, saturatingAdd(now, retryAfterNanos));
      if (s.strikes >= threshold) {
        s.blockedUntil = saturatingAdd(now, blockNanos);
        s.waitUntil = s.blockedUntil;
        s.strikes = 0;
        return blockNanos;
      }
      return 0;
    }
  }

  /** Whole seconds of a block or wait in nanoseconds, rounded up, at least 1. */
  public static long seconds(long nanos) {
    return Math.max(1, nanos / 1_000_000_000L + (nanos % 1_000_000_000L == 0 ? 0 : 1));
  }

  private static long saturatingAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  private void evictExpired(long now) {
    for (Iterator<Map.Entry<Key, State>> it = states.entrySet().iterator(); it.hasNext(); ) {
      State s = it.next().getValue();
      synchronized (s) {
        if (s.waitUntil <= now && s.blockedUntil <= now) {
          it.remove();
        }
      }
    }
  }

  /** How many policy and partition pairs are tracked now. */
  public int tracked() {
    return states.size();
  }
}
