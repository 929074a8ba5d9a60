package dev.headroom.plans;

import dev.headroom.Ticker;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A bounded cache of plan lookups by key hash, each entry good for a time: a found plan for
 * {@code ttl}, a key the database does not know for {@code negativeTtl} (negative caching, so
 * that a flood of unknown keys costs one query per key and period, not one per request). At most
 * {@code maxEntries}; beyond, the least recently used entry goes (a {@link LinkedHashMap} in
 * access order). Time is the injected {@link Ticker}. Thread-safe (one lock: an entry is a few
 * pointers and lookups are short).
 */
final class PlanCache {
  /** A cached answer: the plan, or empty for a key the source does not know. */
  record Entry(Optional<String> plan, long expiresAtNanos) {}

  private final int maxEntries;
  private final long ttlNanos;
  private final long negativeTtlNanos;
  private final Ticker ticker;
  private final LinkedHashMap<String, Entry> entries;

  PlanCache(int maxEntries, long ttlNanos, long negativeTtlNanos, Ticker ticker) {
    this.maxEntries = maxEntries;
    this.ttlNanos = ttlNanos;
    this.negativeTtlNanos = negativeTtlNanos;
    this.ticker = ticker;
    this.entries = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
        return size() > PlanCache.this.maxEntries;
      }
    };
  }

  /** The live entry for {@code hash}, if any; an expired one is removed. */
  synchronized Optional<Entry> get(String hash) {
    Entry e = entries.get(hash);
    if (e == null) {
      return Optional.empty();
    }
    if (ticker.read() - e.expiresAtNanos() >= 0) {
      entries.remove(hash);
      return Optional.empty();
    }
    return Optional.of(e);
  }

  /** Records an answer of the source: a plan, or empty for an unknown key. */
  synchronized void put(String hash, Optional<String> plan) {
    long ttl = plan.isPresent() ? ttlNanos : negativeTtlNanos;
    if (ttl > 0) {
      entries.put(hash, new Entry(plan, ticker.read() + ttl));
    }
  }

  synchronized int size() {
    return entries.size();
  }
}
