package dev.headroom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The in-memory store's tables under load: exact admission counts while tables grow and rebuild,
 * {@link QuotaLimiter#tryAcquire} agreeing with {@link QuotaLimiter#acquire}, and the bound on keys.
 */
class InMemoryStoreTablesTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private static QuotaPolicy policy(Algorithm algorithm, long quota) {
    return QuotaPolicy.builder("p-" + algorithm.token()).quota(quota).window(Duration.ofHours(1))
        .algorithm(algorithm).build();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW"})
  void tryAcquireMakesTheSameDecisionsAsAcquire(Algorithm algorithm) {
    QuotaPolicy p = policy(algorithm, 5);
    QuotaLimiter fast = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    QuotaLimiter full = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    PartitionKey k = PartitionKey.of("client");
    for (int i = 0; i < 12; i++) {
      assertThat(fast.tryAcquire(p, k)).as("call %d", i).isEqualTo(full.acquire(p, k).allowed());
      ticker.advance(Duration.ofMinutes(3));
    }
    // The fast path consumed exactly what the full path did.
    assertThat(fast.acquire(List.of(Acquisition.of(p, k, 0))).outcomes().get(0).remaining())
        .isEqualTo(full.acquire(List.of(Acquisition.of(p, k, 0))).outcomes().get(0).remaining());
  }

  @Test
  void tryAcquireRefusesConcurrencyPoliciesWithAMessageNamingThePolicy() {
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    QuotaPolicy uploads = QuotaPolicy.builder("uploads").quota(2).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).algorithm(Algorithm.CONCURRENCY).build();
    assertThatThrownBy(() -> limiter.tryAcquire(uploads, PartitionKey.GLOBAL))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("uploads")
        .hasMessageContaining("acquire");
  }

  /** Threads race on many new keys (tables rebuild under them); each key admits exactly q. */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW"})
  void exactAdmissionPerKeyWhileTablesGrow(Algorithm algorithm) throws Exception {
    long quota = 3;
    int keys = 20_000;
    QuotaPolicy p = policy(algorithm, quota);
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    PartitionKey[] pks = new PartitionKey[keys];
    for (int i = 0; i < keys; i++) {
      pks[i] = PartitionKey.of("k" + i);
    }
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    AtomicLong[] allowed = new AtomicLong[keys];
    for (int i = 0; i < keys; i++) {
      allowed[i] = new AtomicLong();
    }
    List<Future<?>> done = new ArrayList<>();
    for (int w = 0; w < threads; w++) {
      int offset = w * 7919;
      done.add(pool.submit(() -> {
        start.await();
        for (int round = 0; round < 2; round++) {
          for (int j = 0; j < keys; j++) {
            int i = (j + offset) % keys;
            if (limiter.tryAcquire(p, pks[i])) {
              allowed[i].incrementAndGet();
            }
          }
        }
        return null;
      }));
    }
    start.countDown();
    for (Future<?> f : done) {
      f.get();
    }
    pool.shutdown();
    for (int i = 0; i < keys; i++) {
      assertThat(allowed[i].get()).as("key %d", i).isEqualTo(quota);
    }
    assertThat(((InMemoryStore) limiter.store()).trackedKeys()).isEqualTo(keys);
  }

  @Test
  void aFloodOfNewKeysNeverTracksMoreThanMaxKeysAndCountsWhatItKeptOut() throws Exception {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(500).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy bucket = policy(Algorithm.TOKEN_BUCKET, 10);
    QuotaPolicy window = policy(Algorithm.FIXED_WINDOW, 10);
    ExecutorService pool = Executors.newFixedThreadPool(3);
    List<Future<?>> done = new ArrayList<>();
    for (int w = 0; w < 3; w++) {
      int id = w;
      done.add(pool.submit(() -> {
        for (int i = 0; i < 20_000; i++) {
          limiter.tryAcquire(i % 2 == 0 ? bucket : window, PartitionKey.of(id + "-" + i));
          assertThat(store.trackedKeys()).isLessThanOrEqualTo(500);
        }
        return null;
      }));
    }
    for (Future<?> f : done) {
      f.get();
    }
    pool.shutdown();
    assertThat(store.trackedKeys()).isLessThanOrEqualTo(500);
    // every key is seen once: each one beyond the bound was kept out, or (a doorkeeper false
    // positive) entered in place of a live key
    assertThat(store.sketchDecisions() + store.evictedLiveKeys()).isEqualTo(60_000 - store.trackedKeys());
    assertThat(store.sketchDecisions()).isGreaterThan(50_000);
  }

  @Test
  void expiredKeysAreEvictedBeforeLiveOnes() {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(100).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy p = policy(Algorithm.TOKEN_BUCKET, 10);
    for (int i = 0; i < 100; i++) {
      limiter.tryAcquire(p, PartitionKey.of("old-" + i));
    }
    ticker.advance(Duration.ofHours(2)); // every bucket is full again: the keys have expired
    for (int i = 0; i < 100; i++) {
      assertThat(limiter.tryAcquire(p, PartitionKey.of("new-" + i))).isTrue();
    }
    // a sample removes every key at rest it sees, so the store may end below its bound
    assertThat(store.trackedKeys()).isBetween(90L, 100L);
    assertThat(store.evictedRestingKeys()).isEqualTo(100 + 100 - store.trackedKeys());
    assertThat(store.evictedLiveKeys()).isZero();
  }

  @Test
  void anEvictedHotKeyIsRecreatedAndItsUpdatesAfterwardsCountExactly() {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(1).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy p = policy(Algorithm.TOKEN_BUCKET, 2);
    PartitionKey hot = PartitionKey.of("hot");
    assertThat(limiter.tryAcquire(p, hot)).isTrue();
    assertThat(limiter.tryAcquire(p, PartitionKey.of("other"))).isTrue(); // kept out of the full store
    assertThat(limiter.tryAcquire(p, PartitionKey.of("other"))).isTrue(); // back: evicts "hot", live
    assertThat(store.evictedLiveKeys()).isEqualTo(1);
    assertThat(store.restoredKeys()).as("other entered with its unit").isEqualTo(1);
    assertThat(limiter.tryAcquire(p, hot)).as("remembered (kept out): one of two units left").isTrue();
    assertThat(limiter.tryAcquire(p, hot)).as("back: it enters, refused").isFalse();
    assertThat(store.restoredKeys()).isEqualTo(2);
    assertThat(limiter.tryAcquire(p, hot)).isFalse();
    assertThat(store.trackedKeys()).isEqualTo(1);
  }

  @Test
  void leasesAndChargesStillWorkOnTheTables() {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy uploads = QuotaPolicy.builder("uploads").quota(1).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).algorithm(Algorithm.CONCURRENCY).build();
    Decision first = limiter.acquire(uploads, PartitionKey.GLOBAL);
    assertThat(first.allowed()).isTrue();
    assertThat(limiter.acquire(uploads, PartitionKey.GLOBAL).allowed()).isFalse();
    limiter.release(first);
    assertThat(limiter.acquire(uploads, PartitionKey.GLOBAL).allowed()).isTrue();

    QuotaPolicy bytes = QuotaPolicy.builder("bytes").quota(100).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONTENT_BYTES).algorithm(Algorithm.TOKEN_BUCKET).build();
    limiter.charge(bytes, PartitionKey.GLOBAL, 250); // into debt
    assertThat(limiter.tryAcquire(bytes, PartitionKey.GLOBAL)).isFalse();
    ticker.advance(Duration.ofMinutes(2).plusSeconds(31));
    assertThat(limiter.tryAcquire(bytes, PartitionKey.GLOBAL)).isTrue();
  }

  /** tryAcquire and acquire agree across window boundaries and while a charge is paid back. */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW"})
  void tryAcquireAgreesWithAcquireAcrossWindowsAndDebt(Algorithm algorithm) {
    QuotaPolicy p = QuotaPolicy.builder("debt-" + algorithm.token()).quota(4).window(Duration.ofMinutes(1))
        .algorithm(algorithm).build();
    QuotaLimiter fast = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    QuotaLimiter full = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    PartitionKey k = PartitionKey.of("client");
    fast.charge(p, k, 9);
    full.charge(p, k, 9);
    for (int i = 0; i < 60; i++) {
      assertThat(fast.tryAcquire(p, k)).as("call %d", i).isEqualTo(full.acquire(p, k).allowed());
      ticker.advance(Duration.ofSeconds(7));
    }
  }

  /**
   * Policy instances whose hashes share a slot of the store's binding cache, used in turn: each
   * keeps its own exact count, and an equal instance built later shares the first one's counters.
   */
  @Test
  void policiesSharingABindingCacheSlotKeepTheirOwnExactCounts() {
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    List<QuotaPolicy> colliding = new ArrayList<>();
    int slot = -1;
    for (int n = 0; colliding.size() < 3; n++) {
      QuotaPolicy p = QuotaPolicy.builder("p" + n).quota(5).window(Duration.ofHours(1)).build();
      int s = p.hashCode() & 63;
      if (slot == -1) {
        slot = s;
      }
      if (s == slot) {
        colliding.add(p);
      }
    }
    PartitionKey k = PartitionKey.of("client");
    long[] allowed = new long[colliding.size()];
    for (int round = 0; round < 8; round++) {
      for (int i = 0; i < colliding.size(); i++) {
        if (limiter.tryAcquire(colliding.get(i), k)) {
          allowed[i]++;
        }
      }
    }
    assertThat(allowed).containsOnly(5);
    QuotaPolicy again = QuotaPolicy.builder(colliding.get(0).name()).quota(5).window(Duration.ofHours(1)).build();
    assertThat(again).isNotSameAs(colliding.get(0)).isEqualTo(colliding.get(0));
    assertThat(limiter.tryAcquire(again, k)).isFalse();
  }
}
