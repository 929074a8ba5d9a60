package dev.headroom.spec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Thread safety: many threads deciding at once never admit more than the algorithm allows. With
 * time frozen ({@link dev.headroom.ManualTicker} does not move), a fixed window and a token bucket
 * admit exactly {@code q}, no more and no fewer, however the threads interleave; all-or-nothing
 * requests over-consume no policy, and the refunds of requests refused half-way are exact.
 *
 * <p>The in-memory store runs well over a million decisions in total; a remote store may lower
 * {@link #threads()} and {@link #attemptsPerThread()}.
 */
public abstract class ConcurrentAccessSpec extends StoreSpecification {

  /** Threads deciding at once. */
  protected int threads() {
    return 4;
  }

  /** Decisions each thread asks for, in each test. */
  protected int attemptsPerThread() {
    return 100_000;
  }

  /** Runs {@code body(thread, attempt)} on every thread, all starting together. */
  private void race(Attempt body) throws Exception {
    int n = threads();
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < n; t++) {
        int thread = t;
        futures.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < attemptsPerThread(); i++) {
            body.run(thread, i);
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
  }

  @FunctionalInterface
  private interface Attempt {
    void run(int thread, int attempt) throws Exception;
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "TOKEN_BUCKET"})
  @DisplayName("one key, many threads, time frozen: exactly q admitted")
  void oneKeyAdmitsExactlyQ(Algorithm algorithm) throws Exception {
    long total = (long) threads() * attemptsPerThread();
    long q = total / 8;
    QuotaPolicy p = policy("hot", q, seconds(3600), algorithm);
    PartitionKey k = key("hot");
    AtomicLong admitted = new AtomicLong();
    race((thread, i) -> {
      if (limiter.acquire(p, k).allowed()) {
        admitted.incrementAndGet();
      }
    });
    assertThat(admitted.get()).isEqualTo(q);
    assertThat(peek(p, k).remaining()).isZero();
  }

  @Test
  @DisplayName("one key, many threads, sliding window: at most q admitted (exactly q with no previous window)")
  void oneKeySlidingWindow() throws Exception {
    long q = (long) threads() * attemptsPerThread() / 8;
    QuotaPolicy p = policy("hot-sliding", q, seconds(3600), Algorithm.SLIDING_WINDOW);
    PartitionKey k = key("hot");
    AtomicLong admitted = new AtomicLong();
    race((thread, i) -> {
      if (limiter.acquire(p, k).allowed()) {
        admitted.incrementAndGet();
      }
    });
    assertThat(admitted.get()).isEqualTo(q);
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "TOKEN_BUCKET", "SLIDING_WINDOW"})
  @DisplayName("many keys, many threads, time frozen: exactly q admitted per key")
  void manyKeysAdmitExactlyQEach(Algorithm algorithm) throws Exception {
    int keys = 1000;
    long perKeyAttempts = (long) threads() * attemptsPerThread() / keys;
    long q = Math.max(1, perKeyAttempts / 4);
    QuotaPolicy p = policy("spread", q, seconds(3600), algorithm);
    PartitionKey[] ks = new PartitionKey[keys];
    for (int i = 0; i < keys; i++) {
      ks[i] = key("k" + i);
    }
    AtomicLongArray admitted = new AtomicLongArray(keys);
    race((thread, i) -> {
      int which = (i * 7 + thread) % keys;
      if (limiter.acquire(p, ks[which]).allowed()) {
        admitted.incrementAndGet(which);
      }
    });
    for (int i = 0; i < keys; i++) {
      assertThat(admitted.get(i)).as("key %d", i).isEqualTo(q);
    }
  }

  @Test
  @DisplayName("concurrency leases under contention: never more in flight than q, every lease comes back")
  void leasesUnderContention() throws Exception {
    QuotaPolicy p = QuotaPolicy.builder("in-flight").quota(3).window(seconds(60))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).build();
    PartitionKey k = key("hot");
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger maxInFlight = new AtomicInteger();
    AtomicLong admitted = new AtomicLong();
    race((thread, i) -> {
      Decision d = limiter.acquire(List.of(Acquisition.of(p, k)));
      if (d.allowed()) {
        admitted.incrementAndGet();
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        inFlight.decrementAndGet();
        limiter.release(d);
      }
    });
    assertThat(maxInFlight.get()).isLessThanOrEqualTo(3);
    assertThat(admitted.get()).isPositive();
    assertThat(peek(p, k).remaining()).as("every lease released").isEqualTo(3);
  }

  @Test
  @DisplayName("all-or-nothing under contention: no policy over-consumed, consumption equals admissions exactly")
  void allOrNothingUnderContention() throws Exception {
    int clients = 4;
    long total = (long) threads() * attemptsPerThread();
    // The global fixed window runs out before the per-client buckets do; leases make it contended.
    QuotaPolicy global = policy("global", total / 4, seconds(3600), Algorithm.FIXED_WINDOW);
    QuotaPolicy perClient = policy("per-client", total / 16, seconds(3600), Algorithm.TOKEN_BUCKET);
    QuotaPolicy window = policy("per-client-window", total / 10, seconds(3600), Algorithm.SLIDING_WINDOW);
    QuotaPolicy inFlight = QuotaPolicy.builder("in-flight").quota(2).window(seconds(60))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).build();
    PartitionKey g = key("all");
    PartitionKey[] ks = new PartitionKey[clients];
    for (int i = 0; i < clients; i++) {
      ks[i] = key("client-" + i);
    }
    AtomicLong globalAdmitted = new AtomicLong();
    AtomicLongArray clientAdmitted = new AtomicLongArray(clients);
    AtomicInteger inFlightNow = new AtomicInteger();
    AtomicInteger maxInFlight = new AtomicInteger();
    race((thread, i) -> {
      int c = (i + thread) % clients;
      List<Acquisition> request = i % 2 == 0
          ? List.of(Acquisition.of(global, g), Acquisition.of(perClient, ks[c]), Acquisition.of(window, ks[c]),
              Acquisition.of(inFlight, g))
          : List.of(Acquisition.of(inFlight, g), Acquisition.of(window, ks[c]), Acquisition.of(perClient, ks[c]),
              Acquisition.of(global, g));
      Decision d = limiter.acquire(request);
      if (d.allowed()) {
        globalAdmitted.incrementAndGet();
        clientAdmitted.incrementAndGet(c);
        maxInFlight.accumulateAndGet(inFlightNow.incrementAndGet(), Math::max);
        inFlightNow.decrementAndGet();
        limiter.release(d);
      } else {
        assertThat(d.leases()).isEmpty();
      }
    });
    assertThat(maxInFlight.get()).isLessThanOrEqualTo(2);
    assertThat(globalAdmitted.get()).isLessThanOrEqualTo(global.quota()).isPositive();
    assertThat(global.quota() - peek(global, g).remaining())
        .as("global consumed exactly what was admitted").isEqualTo(globalAdmitted.get());
    for (int c = 0; c < clients; c++) {
      long admitted = clientAdmitted.get(c);
      assertThat(admitted).isLessThanOrEqualTo(perClient.quota());
      assertThat(perClient.quota() - peek(perClient, ks[c]).remaining())
          .as("per-client bucket %d consumed exactly what was admitted", c).isEqualTo(admitted);
      assertThat(window.quota() - peek(window, ks[c]).remaining())
          .as("per-client window %d consumed exactly what was admitted", c).isEqualTo(admitted);
    }
    assertThat(peek(inFlight, g).remaining()).isEqualTo(2);
  }
}
