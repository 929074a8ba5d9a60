package dev.headroom;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Bounded memory, as documented on {@link InMemoryStore} and {@code LocalStore}: never more than
 * {@code maxKeys} tracked keys; expired keys are forgotten first; when the store is full of live
 * keys a new key evicts the live key closest to expiry among a sample, and that eviction is
 * counted.
 */
class InMemoryStoreBoundedMemoryTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private static QuotaPolicy bucket(long quota, Duration window) {
    return QuotaPolicy.builder("bucket").quota(quota).window(window).algorithm(Algorithm.TOKEN_BUCKET).build();
  }

  @Test
  @DisplayName("a flood of 200k distinct keys into maxKeys=1000 never tracks more than 1000")
  void floodOfDistinctKeys() {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(1000).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy fixed = QuotaPolicy.builder("fixed").quota(10).window(Duration.ofHours(1))
        .algorithm(Algorithm.FIXED_WINDOW).build();
    long maxSeen = 0;
    for (int i = 0; i < 200_000; i++) {
      Decision d = limiter.acquire(fixed, PartitionKey.of("flood-" + i));
      assertThat(d.allowed()).isTrue();
      maxSeen = Math.max(maxSeen, store.trackedKeys());
    }
    assertThat(maxSeen).isEqualTo(1000);
    assertThat(store.trackedKeys()).isEqualTo(1000);
    // every key was live: each one beyond the bound was kept out (decided from the sketch) or, when
    // the doorkeeper took it for a returning key, evicted one
    assertThat(store.sketchDecisions() + store.evictedLiveKeys()).isEqualTo(199_000);
    assertThat(store.evictedLiveKeys()).as("doorkeeper false positives").isLessThan(2_000);
  }

  @Test
  @DisplayName("a flood across several policies and algorithms stays within the bound too")
  void floodAcrossPolicies() {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(500).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    List<QuotaPolicy> policies = List.of(
        bucket(10, Duration.ofMinutes(1)),
        QuotaPolicy.builder("sliding").quota(10).window(Duration.ofMinutes(1)).algorithm(Algorithm.SLIDING_WINDOW).build(),
        QuotaPolicy.builder("leases").quota(3).window(Duration.ofMinutes(1)).unit(QuotaUnit.CONCURRENT_REQUESTS).build());
    for (int i = 0; i < 30_000; i++) {
      PartitionKey k = PartitionKey.of("k" + i);
      limiter.acquire(List.of(Acquisition.of(policies.get(i % 3), k), Acquisition.of(policies.get((i + 1) % 3), k)));
      assertThat(store.trackedKeys()).isLessThanOrEqualTo(500);
      if (i % 1000 == 0) {
        ticker.advance(Duration.ofSeconds(1));
      }
    }
  }

  @Test
  @DisplayName("expired keys are evicted before any live key: a full bucket equals an absent key")
  void expiredKeysGoFirst() {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(1000).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy p = bucket(10, Duration.ofSeconds(60));
    for (int i = 0; i < 1000; i++) {
      limiter.acquire(p, PartitionKey.of("old-" + i));
    }
    assertThat(store.trackedKeys()).isEqualTo(1000);
    ticker.advance(Duration.ofSeconds(6)); // T = 6 s: every old bucket is full again
    for (int i = 0; i < 1000; i++) {
      limiter.acquire(p, PartitionKey.of("new-" + i));
      assertThat(store.trackedKeys()).isLessThanOrEqualTo(1000);
    }
    // Expiry is judged on samples of 16: a sample with no expired key costs one live key, rarely.
    long liveEvictions = store.evictedLiveKeys();
    assertThat(liveEvictions).isLessThanOrEqualTo(10);
    int kept = 0;
    for (int i = 0; i < 1000; i++) {
      PolicyOutcome o = limiter.acquire(List.of(Acquisition.of(p, PartitionKey.of("new-" + i), 0))).outcomes().get(0);
      if (o.remaining() == 9) {
        kept++;
      }
    }
    assertThat(kept).as("every new key was kept but those counted as live evictions").isEqualTo(1000 - liveEvictions);
  }

  @Test
  @DisplayName("expired windows and leases are evicted too, without counting a live eviction")
  void expiredWindowsAndLeases() {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(100).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy fixed = QuotaPolicy.builder("fixed").quota(5).window(Duration.ofSeconds(60))
        .algorithm(Algorithm.FIXED_WINDOW).build();
    QuotaPolicy sliding = QuotaPolicy.builder("sliding").quota(5).window(Duration.ofSeconds(60))
        .algorithm(Algorithm.SLIDING_WINDOW).build();
    QuotaPolicy leases = QuotaPolicy.builder("leases").quota(1).window(Duration.ofSeconds(60))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).leaseTimeout(Duration.ofSeconds(10)).build();
    for (int i = 0; i < 33; i++) {
      limiter.acquire(fixed, PartitionKey.of("f" + i));
      limiter.acquire(sliding, PartitionKey.of("s" + i));
      limiter.acquire(leases, PartitionKey.of("l" + i)); // never released: lost leases
    }
    assertThat(store.trackedKeys()).isEqualTo(99);
    // A sliding window remembers its count for one window more.
    ticker.advance(Duration.ofSeconds(120));
    for (int i = 0; i < 100; i++) {
      limiter.acquire(fixed, PartitionKey.of("fresh" + i));
    }
    long liveEvictions = store.evictedLiveKeys();
    assertThat(liveEvictions).isLessThanOrEqualTo(2);
    assertThat(store.trackedKeys()).as("all 99 expired keys are gone; only fresh ones remain")
        .isEqualTo(100 - liveEvictions);
  }

  @Test
  @DisplayName("full of live keys: the least consumed live key is evicted, counted, and remembered")
  void liveEvictionTakesTheLeastConsumedKeyAndRemembersIt() {
    // 16 keys: the whole store fits in one eviction sample, so the choice is deterministic.
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(16).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy p = bucket(10, Duration.ofSeconds(60));
    for (int i = 0; i < 15; i++) {
      limiter.acquire(List.of(Acquisition.of(p, PartitionKey.of("busy-" + i), 10))); // full for 60 s
    }
    limiter.acquire(List.of(Acquisition.of(p, PartitionKey.of("light"), 1))); // full again in 6 s
    assertThat(store.trackedKeys()).isEqualTo(16);
    limiter.acquire(p, PartitionKey.of("newcomer"));
    assertThat(store.evictedLiveKeys()).as("a first request at a full store is kept out").isZero();
    limiter.acquire(p, PartitionKey.of("newcomer")); // it comes back: it enters
    assertThat(store.trackedKeys()).isEqualTo(16);
    assertThat(store.evictedLiveKeys()).isEqualTo(1);
    assertThat(store.restoredKeys()).as("the newcomer entered with the unit it spent while kept out").isEqualTo(1);
    PolicyOutcome light = limiter.acquire(List.of(Acquisition.of(p, PartitionKey.of("light"), 0))).outcomes().get(0);
    assertThat(light.remaining()).as("the evicted key comes back with its count").isEqualTo(9);
    assertThat(store.sketchDecisions()).as("decided from the sketch, kept out: it was never kept out before").isEqualTo(2);
    limiter.acquire(List.of(Acquisition.of(p, PartitionKey.of("light"), 0)));
    assertThat(store.restoredKeys()).as("back again: it enters with its count").isEqualTo(2);
    assertThat(store.evictedLiveKeys()).as("bringing it back evicted another live key").isEqualTo(2);
    int stillExhausted = 0;
    for (int i = 0; i < 15; i++) {
      PolicyOutcome o = limiter.acquire(List.of(Acquisition.of(p, PartitionKey.of("busy-" + i), 0))).outcomes().get(0);
      if (o.remaining() == 0) {
        stillExhausted++;
      }
    }
    assertThat(stillExhausted).as("the newcomer (2 units) went, not a busy key (10 units)").isEqualTo(15);
    assertThat(store.trackedKeys()).isEqualTo(16);
  }

  @Test
  @DisplayName("maxKeys = 1 still decides correctly, one key at a time")
  void singleKeyStore() {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(1).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy p = bucket(2, Duration.ofSeconds(60));
    assertThat(limiter.acquire(p, PartitionKey.of("a")).allowed()).isTrue();
    assertThat(limiter.acquire(p, PartitionKey.of("a")).allowed()).isTrue();
    assertThat(limiter.acquire(p, PartitionKey.of("a")).allowed()).isFalse();
    assertThat(limiter.acquire(p, PartitionKey.of("b")).allowed()).as("kept out, decided from the sketch").isTrue();
    assertThat(store.trackedKeys()).isEqualTo(1);
    assertThat(store.evictedLiveKeys()).isZero();
    assertThat(limiter.acquire(p, PartitionKey.of("b")).allowed()).as("back: it enters, with its unit").isTrue();
    assertThat(limiter.acquire(p, PartitionKey.of("b")).allowed()).isFalse();
    assertThat(store.trackedKeys()).isEqualTo(1);
    assertThat(store.evictedLiveKeys()).isEqualTo(1);
    assertThat(limiter.acquire(p, PartitionKey.of("a")).allowed()).as("a, evicted, comes back refused").isFalse();
  }

  @Test
  @DisplayName("a concurrent flood of distinct keys from several threads never tracks more than maxKeys")
  void concurrentFlood() throws Exception {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(1000).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy p = bucket(10, Duration.ofHours(1));
    int threads = 4;
    AtomicLong maxSeen = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        futures.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < 50_000; i++) {
            limiter.acquire(p, PartitionKey.of("t" + thread + "-" + i));
            maxSeen.accumulateAndGet(store.trackedKeys(), Math::max);
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : futures) {
        f.get(2, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(maxSeen.get()).isLessThanOrEqualTo(1000);
    assertThat(store.trackedKeys()).isLessThanOrEqualTo(1000);
  }

  @Test
  @DisplayName("maxKeys below 1 and a null ticker are refused with the field named")
  void builderValidation() {
    Assertions.assertThatThrownBy(() -> InMemoryStore.builder().maxKeys(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("maxKeys: expected at least 1, got 0");
    Assertions.assertThatThrownBy(() -> InMemoryStore.builder().ticker(null))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("ticker: expected a Ticker, got null");
  }
}
