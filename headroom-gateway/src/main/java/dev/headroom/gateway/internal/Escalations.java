package dev.headroom.gateway.internal;

import dev.headroom.PartitionKey;
import dev.headroom.gateway.GatewayConfig.Escalation;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Progressive blocking for callers that keep sending while told to wait (Graceful Boundaries
 * section 2, "Retry behavior guidance"; draft-ietf-httpapi-ratelimit-headers-09 section 5,
 * {@code abnormal-usage-detected}).
 *
 * <p>How it works: the first refusal of a partition under a policy opens a wait period that lasts
 * the Retry-After it was given. Each further refusal inside that period is a strike; when strikes
 * reach the policy's {@code threshold}, the partition is blocked for {@code block}, during which
 * requests are refused without consulting the store. A refusal after the wait period starts afresh.
 *
 * <p>Memory is bounded by {@link #MAX_TRACKED}: when full, expired entries are dropped first and
 * new partitions are not tracked until room is made (they are still limited by the store).
 *
 * <p>Thread-safe: a concurrent map of small states each guarded by its own monitor.
 */
final class Escalations {
  /** The most policy and partition pairs tracked at once. */
  static final int MAX_TRACKED = 100_000;

  private record Key(String policy, PartitionKey partition) {}

  private static final class State {
    long waitUntil;
    int strikes;
    long blockedUntil;
  }

  private final Map<Key, State> states = new ConcurrentHashMap<>();

  /** Nanoseconds the partition stays blocked under the policy; 0 when not blocked. */
  long blockedFor(String policy, PartitionKey partition, long now) {
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
  long onRefused(String policy, Escalation escalation, PartitionKey partition, long now, long retryAfterNanos) {
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
      s.waitUntil = Math.max(s.waitUntil, now + retryAfterNanos);
      if (s.strikes >= escalation.threshold()) {
        long block = escalation.block().toNanos();
        s.blockedUntil = now + block;
        s.waitUntil = s.blockedUntil;
        s.strikes = 0;
        return block;
      }
      return 0;
    }
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

  int tracked() {
    return states.size();
  }
}
