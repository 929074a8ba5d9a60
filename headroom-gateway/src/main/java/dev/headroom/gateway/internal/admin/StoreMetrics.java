package dev.headroom.gateway.internal.admin;

import dev.headroom.InMemoryStore;
import dev.headroom.Store;
import dev.headroom.redis.RedisStore;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The meters of a bounded in-memory store: the gateway's own ({@code store="memory"}) or the
 * in-memory fallback of a Redis store ({@code store="fallback"}). They read the store's counters
 * when scraped; nothing is counted twice.
 * <ul>
 *   <li>{@code headroom.store.keys} / {@code headroom.store.max.keys}: keys in the store (each with
 *       its exact state) and the bound.
 *   <li>{@code headroom.store.evictions{state=resting|live}}: keys forgotten, at rest (equal to an
 *       absent key: free to forget) or live (their use folded into the sketch) to make room for a
 *       key entering a full store.
 *   <li>{@code headroom.store.restored}: keys that entered and started from the use the sketch
 *       remembered of them, instead of a fresh quota.
 *   <li>{@code headroom.store.sketch.decisions}: decisions made from the sketch for keys a full
 *       store kept out (one per call of a key that did not come back lately).
 * </ul>
 */
public final class StoreMetrics {

  private StoreMetrics() {}

  /** Registers the meters of {@code store} if it is, or falls back to, an {@link InMemoryStore}. */
  public static void bind(Store store, MeterRegistry registry) {
    if (store instanceof InMemoryStore memory) {
      bind(memory, "memory", registry);
    } else if (store instanceof RedisStore redis && redis.fallback().orElse(null) instanceof InMemoryStore memory) {
      bind(memory, "fallback", registry);
    }
  }

  private static void bind(InMemoryStore store, String role, MeterRegistry registry) {
    Gauge.builder("headroom.store.keys", store, InMemoryStore::trackedKeys).tag("store", role)
        .description("Policy and partition pairs the in-memory store tracks now").register(registry);
    Gauge.builder("headroom.store.max.keys", store, InMemoryStore::maxKeys).tag("store", role)
        .description("The bound on tracked keys (store.maxKeys)").register(registry);
    FunctionCounter.builder("headroom.store.evictions", store, InMemoryStore::evictedRestingKeys)
        .tag("store", role).tag("state", "resting")
        .description("Keys forgotten at rest: their state equalled an absent key's").register(registry);
    FunctionCounter.builder("headroom.store.evictions", store, InMemoryStore::evictedLiveKeys)
        .tag("store", role).tag("state", "live")
        .description("Live keys evicted to make room; their use was folded into the sketch").register(registry);
    FunctionCounter.builder("headroom.store.restored", store, InMemoryStore::restoredKeys).tag("store", role)
        .description("Keys that came back and started from the use remembered of them").register(registry);
    FunctionCounter.builder("headroom.store.sketch.decisions", store, InMemoryStore::sketchDecisions).tag("store", role)
        .description("Decisions made from the sketch for keys a full store kept out").register(registry);
  }
}
