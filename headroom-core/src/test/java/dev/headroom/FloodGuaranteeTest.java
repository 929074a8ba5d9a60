package dev.headroom;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What a flood of distinct partition keys cannot buy from a bounded {@link InMemoryStore}
 * (project issue 14, item 2): a key refused at its quota stays refused until its use expires, for
 * every algorithm, however many keys push it out of the store.
 */
class FloodGuaranteeTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private static QuotaPolicy policy(Algorithm algorithm) {
    return QuotaPolicy.builder("flood-" + algorithm.token()).quota(50).window(Duration.ofHours(1))
        .algorithm(algorithm).build();
  }

  private static final Algorithm[] RATES = {Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW, Algorithm.TOKEN_BUCKET};

  /** Spends the victim's whole quota, one request at a time; returns when it may ask again. */
  private Duration exhaust(QuotaLimiter limiter, QuotaPolicy p, PartitionKey victim) {
    for (int i = 0; i < 50; i++) {
      assertThat(limiter.acquire(p, victim).allowed()).as("request %d of 50", i + 1).isTrue();
    }
    PolicyOutcome refused = limiter.acquire(p, victim).outcomes().get(0);
    assertThat(refused.allowed()).as("the 51st").isFalse();
    return refused.retryAfter();
  }

  /** The victim is refused up to 1 ms before {@code retry}, and allowed at it. */
  private void refusedUntil(QuotaLimiter limiter, QuotaPolicy p, PartitionKey victim, Duration retry) {
    ticker.advance(retry.minusMillis(1));
    assertThat(limiter.acquire(p, victim).allowed()).as("1 ms before the victim's retry time").isFalse();
    ticker.advance(Duration.ofMillis(1));
    assertThat(limiter.acquire(p, victim).allowed()).as("at the victim's retry time").isTrue();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  @DisplayName("the issue's scenario: refused at 50/50, 10,000 new keys into maxKeys=1000, still refused")
  void aRefusedKeyStaysRefusedThroughAFloodOfNewKeys(Algorithm algorithm) {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(1_000).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy p = policy(algorithm);
    PartitionKey victim = PartitionKey.of("victim");
    Duration retry = exhaust(limiter, p, victim);
    for (int i = 0; i < 10_000; i++) {
      assertThat(limiter.acquire(p, PartitionKey.of("flood-" + i)).allowed()).isTrue();
    }
    assertThat(store.trackedKeys()).isEqualTo(1_000);
    // 10,001 live keys for 1,000 places: each of the 9,001 beyond the bound was kept out (decided
    // from the sketch) or, when the doorkeeper took it for a returning key, entered and evicted one
    assertThat(store.sketchDecisions() + store.evictedLiveKeys()).isEqualTo(9_001);
    assertThat(store.evictedLiveKeys()).as("doorkeeper false positives").isLessThan(90);
    assertThat(limiter.acquire(p, victim).allowed()).as("after the flood").isFalse();
    refusedUntil(limiter, p, victim, retry);
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  @DisplayName("pushed out by keys as exhausted as it is, the refused key comes back refused from the sketch")
  void aRefusedKeyEvictedAndRestoredComesBackRefused(Algorithm algorithm) {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(1_000).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy p = policy(algorithm);
    PartitionKey victim = PartitionKey.of("victim");
    Duration retry = exhaust(limiter, p, victim);
    int victimRestored = 0;
    int flood = 0;
    for (int batch = 0; batch < 40 && victimRestored < 3; batch++) {
      for (int i = 0; i < 1_000; i++) {
        // one request of 50 units: as consumed as the victim, so the victim is as likely to go;
        // kept out of the full store at first, each comes back (cost 0) and enters, evicting one
        PartitionKey heavy = PartitionKey.of("heavy-" + flood++);
        limiter.acquire(List.of(Acquisition.of(p, heavy, 50)));
        limiter.acquire(List.of(Acquisition.of(p, heavy, 0)));
      }
      long before = store.restoredKeys();
      assertThat(limiter.acquire(p, victim).allowed()).as("after %d exhausted keys", flood).isFalse();
      victimRestored += (int) (store.restoredKeys() - before);
    }
    assertThat(victimRestored).as("the victim was evicted and came back from the sketch").isGreaterThanOrEqualTo(3);
    assertThat(store.trackedKeys()).isLessThanOrEqualTo(1_000);
    refusedUntil(limiter, p, victim, retry);
  }

  @Test
  @DisplayName("held leases are never forgotten: evicted, they stay held until they time out")
  void heldLeasesSurviveEviction() {
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).maxKeys(100).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy leases = QuotaPolicy.builder("uploads").quota(3).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).leaseTimeout(Duration.ofSeconds(30)).build();
    PartitionKey victim = PartitionKey.of("victim");
    assertThat(limiter.acquire(List.of(Acquisition.of(leases, victim, 3))).allowed()).isTrue();
    int victimRestored = 0;
    int flood = 0;
    for (int batch = 0; batch < 40 && victimRestored < 2; batch++) {
      for (int i = 0; i < 100; i++) {
        limiter.acquire(List.of(Acquisition.of(leases, PartitionKey.of("holder-" + flood++), 3)));
      }
      long before = store.restoredKeys();
      assertThat(limiter.acquire(leases, victim).allowed()).as("after %d holders", flood).isFalse();
      victimRestored += (int) (store.restoredKeys() - before);
    }
    assertThat(victimRestored).isGreaterThanOrEqualTo(2);
    ticker.advance(Duration.ofSeconds(29));
    assertThat(limiter.acquire(leases, victim).allowed()).as("the leases are still held").isFalse();
    ticker.advance(Duration.ofSeconds(1));
    assertThat(limiter.acquire(leases, victim).allowed()).as("timed out").isTrue();
  }

  @Test
  @DisplayName("property: random floods never admit a caller before the retry time of its last refusal")
  void randomFloodsNeverAdmitACallerBeforeItsRetryTime() {
    Random random = new Random(14);
    for (Algorithm algorithm : RATES) {
      for (int run = 0; run < 4; run++) {
        ManualTicker clock = ManualTicker.atFixedInstant();
        InMemoryStore store = InMemoryStore.builder().ticker(clock).maxKeys(50 + random.nextInt(200)).build();
        QuotaLimiter limiter = QuotaLimiter.of(store);
        QuotaPolicy p = QuotaPolicy.builder("p").quota(5).window(Duration.ofSeconds(60)).algorithm(algorithm).build();
        long windowNanos = Duration.ofSeconds(60).toNanos();
        Map<String, Long> notBefore = new HashMap<>();
        Map<String, Long> admittedInWindow = new HashMap<>();
        for (int step = 0; step < 20_000; step++) {
          boolean caller = random.nextInt(4) == 0;
          // flood keys: half never seen again (kept out of the full store), half from a pool that
          // comes back (they enter and evict, callers among them)
          String key = caller ? "caller-" + random.nextInt(20)
              : random.nextBoolean() ? "flood-" + run + "-" + step : "back-" + run + "-" + random.nextInt(400);
          long cost = 1 + random.nextInt(3);
          PolicyOutcome o = limiter.acquire(List.of(Acquisition.of(p, PartitionKey.of(key), cost))).outcomes().get(0);
          long now = clock.read();
          if (caller && o.allowed()) {
            assertThat(now).as("%s %s admitted before the retry time of its refusal", algorithm, key)
                .isGreaterThanOrEqualTo(notBefore.getOrDefault(key, Long.MIN_VALUE));
            if (algorithm == Algorithm.FIXED_WINDOW) {
              String slot = key + "@" + Math.floorDiv(now, windowNanos);
              assertThat(admittedInWindow.merge(slot, cost, Long::sum)).as("units of %s", slot).isLessThanOrEqualTo(5);
            }
          } else if (caller && cost == 1) {
            notBefore.put(key, now + o.retryAfter().toNanos()); // not even one unit fits before then
          }
          if (random.nextInt(50) == 0) {
            clock.advance(Duration.ofMillis(random.nextInt(5_000)));
          }
        }
        assertThat(store.sketchDecisions()).as("the flood was kept out").isPositive();
        assertThat(store.evictedLiveKeys()).as("returning keys did evict live keys").isPositive();
        assertThat(store.restoredKeys()).as("callers came back from the sketch").isPositive();
      }
    }
  }
}
