package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.Lease;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.Store;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Quota leasing against real Redis (ARCHITECTURE.md scale path step 4; headroom-redis README "Quota
 * leasing"). Time is a manual ticker shared by the Redis script and the leasing store, so every
 * slice size and expiry is exact; a counting wrapper counts round trips to Redis.
 */
class LeasingStoreTest {

  static final QuotaPolicy WINDOW = QuotaPolicy.builder("lw").quota(10_000).window(Duration.ofMinutes(1))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  static final QuotaPolicy BUCKET = QuotaPolicy.builder("lb").quota(10_000).window(Duration.ofMinutes(1))
      .algorithm(Algorithm.TOKEN_BUCKET).build();
  static final PartitionKey KEY = PartitionKey.of("hot");

  private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00.000Z"));
  private String prefix;
  private RedisStore redis;
  private Counting counting;

  @BeforeEach
  void open() {
    prefix = LocalRedis.uniquePrefix("leasing");
    redis = RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix).ticker(ticker)
        .decisionDeadline(Duration.ofSeconds(5)).build();
    counting = new Counting(redis);
  }

  @AfterEach
  void clean() {
    redis.close();
    LocalRedis.deleteAll(prefix);
  }

  private LeasingStore leasing(QuotaPolicy... policies) {
    Leasing.Builder b = Leasing.builder().ticker(ticker).targetInterval(Duration.ofMillis(100)).maxFraction(0.05)
        .maxHold(Duration.ofSeconds(1)).idleReturn(Duration.ofMillis(500));
    for (QuotaPolicy p : policies) {
      b.policy(p);
    }
    return LeasingStore.wrap(counting, b.build());
  }

  /** What Redis says is left, read at cost 0 by a store without leasing. */
  private long centralRemaining(QuotaPolicy policy) {
    return redis.acquire(List.of(Acquisition.of(policy, KEY, 0))).outcomes().get(0).remaining();
  }

  @Test
  void aHotKeyTakesSlicesSizedByItsRateAndReportsTheGlobalRemaining() {
    try (LeasingStore store = leasing(WINDOW)) {
      for (int i = 1; i <= 1000; i++) {
        PolicyOutcome o = store.acquire(List.of(Acquisition.of(WINDOW, KEY))).outcomes().get(0);
        assertThat(o.allowed()).isTrue();
        // One node: what is globally left is exactly q minus what it admitted; r says exactly that,
        // never the slice alone and never more.
        assertThat(o.remaining()).as("r after decision %d", i).isEqualTo(10_000 - i);
        ticker.advance(Duration.ofMillis(1)); // 1,000 requests per second
      }
      // 1,000/s for 100 ms is 100 units a slice: the first request is central, then about ten
      // slices instead of 999 round trips.
      assertThat(counting.acquires.get()).isBetween(8L, 16L);
      assertThat(store.localDecisions()).isGreaterThan(980);
      long held = store.unitsHeld(WINDOW, KEY);
      assertThat(held).isBetween(0L, 200L);
      assertThat(centralRemaining(WINDOW)).isEqualTo(10_000 - 1000 - held);
    }
    // Closing returned the rest: Redis counts exactly what was admitted.
    assertThat(centralRemaining(WINDOW)).isEqualTo(9_000);
  }

  @Test
  void slicesShrinkAsTheQuotaRunsOutTheLastUnitsAreDecidedCentrallyAndRefusalsRepeatLocally() {
    QuotaPolicy small = QuotaPolicy.builder("ls").quota(2_000).window(Duration.ofMinutes(1))
        .algorithm(Algorithm.FIXED_WINDOW).build();
    try (LeasingStore store = leasing(small)) {
      long admitted = 0;
      long centralAtTheEnd = 0;
      long refusedRoundTrips = 0;
      for (int i = 0; i < 2_100; i++) {
        long before = counting.acquires.get();
        Decision d = store.acquire(List.of(Acquisition.of(small, KEY)));
        if (d.allowed()) {
          admitted++;
          assertThat(d.outcomes().get(0).remaining()).isEqualTo(2_000 - admitted);
          if (admitted > 2_000 - 40) {
            // floor(G * 0.05) <= 1 below 40 left: one round trip for each request, no slice.
            centralAtTheEnd += counting.acquires.get() - before;
          }
        } else {
          refusedRoundTrips += counting.acquires.get() - before;
          assertThat(d.outcomes().get(0).remaining()).isZero();
          // Fixed window: Retry-After is the rest of the window (it started at 00:00:00).
          assertThat(d.retryAfter()).isEqualTo(Duration.ofMinutes(1).minusNanos(100_000L * i));
        }
        ticker.advanceNanos(100_000); // 10,000 requests per second: the cap of 100 units applies
      }
      assertThat(admitted).isEqualTo(2_000);
      assertThat(centralAtTheEnd).isGreaterThanOrEqualTo(30);
      // The first refusal came from Redis; the 99 after it repeat it locally until its Retry-After.
      assertThat(refusedRoundTrips).isEqualTo(1);
      assertThat(store.unitsHeld(small, KEY)).isZero();
      ticker.advance(Duration.ofMinutes(1));
      assertThat(store.acquire(List.of(Acquisition.of(small, KEY))).allowed()).as("a new window").isTrue();
    }
  }

  @Test
  void aTokenBucketSliceAdvancesTheTatByNEmissionIntervals() {
    long t = BUCKET.emissionIntervalNanos(); // 6 ms
    try (LeasingStore store = leasing(BUCKET)) {
      store.acquire(List.of(Acquisition.of(BUCKET, KEY)));
      ticker.advanceNanos(1); // time moves by far less than T: no refill between the two calls
      store.acquire(List.of(Acquisition.of(BUCKET, KEY)));
      long held = store.unitsHeld(BUCKET, KEY);
      // Two requests asked within 1 ns, measured over the 1 ms minimum: 2,000/s, so 100 ms of it
      // is a slice of 200 (under the caps 500 and floor(9,999 * 0.05) = 499), of which it spent one.
      assertThat(held).isEqualTo(199);
      assertThat(centralRemaining(BUCKET)).isEqualTo(10_000 - 1 - 200);
      // GCRA: TAT - now = (1 + 200) * T, less the nanosecond that passed.
      assertThat(redis.acquire(List.of(Acquisition.of(BUCKET, KEY, 0))).outcomes().get(0).reset().toNanos())
          .isEqualTo(201 * t - 1);
      // Not spent within maxHold (1 s): the timer's sweep gives the 199 units back (GCRA: TAT
      // moves back by 199 T; a bucket refilled meanwhile stays full, never above q).
      ticker.advance(Duration.ofSeconds(2));
      store.returnIdleSlices();
      assertThat(store.unitsHeld(BUCKET, KEY)).isZero();
      assertThat(store.unitsReturned()).isEqualTo(199);
      assertThat(centralRemaining(BUCKET)).isEqualTo(10_000);
    }
    assertThat(centralRemaining(BUCKET)).isEqualTo(10_000);
  }

  @Test
  void aQuietKeyReturnsItsSlice() {
    try (LeasingStore store = leasing(WINDOW)) {
      store.acquire(List.of(Acquisition.of(WINDOW, KEY)));
      ticker.advanceNanos(1_000);
      store.acquire(List.of(Acquisition.of(WINDOW, KEY)));
      assertThat(store.unitsHeld(WINDOW, KEY)).isEqualTo(199);
      store.returnIdleSlices();
      assertThat(store.unitsHeld(WINDOW, KEY)).as("not quiet yet").isEqualTo(199);
      ticker.advance(Duration.ofMillis(500));
      store.returnIdleSlices();
      assertThat(store.unitsHeld(WINDOW, KEY)).isZero();
      assertThat(store.unitsReturned()).isEqualTo(199);
      assertThat(centralRemaining(WINDOW)).isEqualTo(9_998);
    }
  }

  @Test
  void aFixedWindowSliceIsNeverSpentOrReturnedIntoTheNextWindow() {
    // Start 0.3 s before the minute ends: the slice expires with its window, and with less than
    // the 0.5 s guard left it cannot be returned (a late refund would credit the next window).
    ticker.set(Instant.parse("2026-01-01T00:00:59.700Z"));
    try (LeasingStore store = leasing(WINDOW)) {
      store.acquire(List.of(Acquisition.of(WINDOW, KEY)));
      ticker.advanceNanos(1_000);
      store.acquire(List.of(Acquisition.of(WINDOW, KEY)));
      assertThat(store.unitsHeld(WINDOW, KEY)).isEqualTo(199);
      ticker.advance(Duration.ofMillis(300)); // the new window
      PolicyOutcome o = store.acquire(List.of(Acquisition.of(WINDOW, KEY))).outcomes().get(0);
      assertThat(o.remaining()).as("a fresh window, decided centrally, not from the old slice")
          .isEqualTo(9_999);
      assertThat(store.unitsReturned()).isZero();
    }
    assertThat(centralRemaining(WINDOW)).isEqualTo(9_999);
  }

  @Test
  void aRequestMixingLeasedAndCentralPoliciesIsAllOrNothing() {
    QuotaPolicy tiny = QuotaPolicy.builder("lt").quota(1).window(Duration.ofMinutes(1))
        .algorithm(Algorithm.FIXED_WINDOW).build();
    try (LeasingStore store = leasing(WINDOW)) {
      store.acquire(List.of(Acquisition.of(WINDOW, KEY)));
      ticker.advanceNanos(1_000);
      store.acquire(List.of(Acquisition.of(WINDOW, KEY)));
      long held = store.unitsHeld(WINDOW, KEY);
      Decision first = store.acquire(List.of(Acquisition.of(WINDOW, KEY), Acquisition.of(tiny, KEY)));
      assertThat(first.allowed()).isTrue();
      assertThat(store.unitsHeld(WINDOW, KEY)).isEqualTo(held - 1);
      Decision refused = store.acquire(List.of(Acquisition.of(WINDOW, KEY), Acquisition.of(tiny, KEY)));
      assertThat(refused.allowed()).isFalse();
      assertThat(refused.violated()).extracting(o -> o.policy().name()).containsExactly("lt");
      // The leased unit was put back, and the outcome reports the state before the request.
      assertThat(store.unitsHeld(WINDOW, KEY)).isEqualTo(held - 1);
      assertThat(refused.outcomes().get(0).remaining()).isEqualTo(first.outcomes().get(0).remaining());
    }
    assertThat(centralRemaining(WINDOW)).isEqualTo(10_000 - 3);
  }

  @Test
  void policiesThatCannotBeLeasedAreRefusedWhenBuilt() {
    QuotaPolicy sliding = QuotaPolicy.builder("sw").quota(10).window(Duration.ofMinutes(1))
        .algorithm(Algorithm.SLIDING_WINDOW).build();
    QuotaPolicy inflight = QuotaPolicy.builder("inflight").quota(10).window(Duration.ofSeconds(10))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).build();
    assertThatThrownBy(() -> Leasing.builder().policy(sliding).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leasing.policies").hasMessageContaining("'sw'").hasMessageContaining("sliding-window")
        .hasMessageContaining("expected fixed-window or token-bucket");
    assertThatThrownBy(() -> Leasing.builder().policy(WINDOW).policy(inflight).build())
        .hasMessageContaining("'inflight'").hasMessageContaining("concurrency");
    assertThatThrownBy(() -> Leasing.builder().build()).hasMessageContaining("leasing.policies")
        .hasMessageContaining("got none");
    assertThatThrownBy(() -> Leasing.builder().maxFraction(1.5))
        .hasMessage("leasing.maxFraction: expected a number above 0 and at most 1, got 1.5");
    assertThatThrownBy(() -> Leasing.builder().targetInterval(Duration.ZERO))
        .hasMessageContaining("leasing.targetInterval").hasMessageContaining("PT0S");
  }

  @Test
  void aKeySeenOnceNeverHoldsASliceAndOtherPoliciesPassThrough() {
    QuotaPolicy other = QuotaPolicy.builder("lo").quota(100).window(Duration.ofMinutes(1)).build();
    try (LeasingStore store = leasing(WINDOW)) {
      assertThat(store.acquire(List.of(Acquisition.of(WINDOW, KEY))).allowed()).isTrue();
      assertThat(store.unitsHeld(WINDOW, KEY)).isZero();
      for (int i = 0; i < 5; i++) {
        assertThat(store.acquire(List.of(Acquisition.of(other, KEY))).outcomes().get(0).remaining())
            .isEqualTo(99 - i);
      }
      assertThat(counting.acquires.get()).isEqualTo(6);
      assertThat(store.slicesTaken()).isZero();
    }
  }

  @Test
  void eightThreadsSharingSlicesAdmitExactlyWhatRedisCounts() throws Exception {
    // Real time on both sides (Redis TIME, system ticker): takes are in flight while other
    // threads of the key wait for them. A 366-day window does not end during the test.
    QuotaPolicy year = QuotaPolicy.builder("ly").quota(5_000).window(Duration.ofDays(366))
        .algorithm(Algorithm.FIXED_WINDOW).build();
    RedisStore real = RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix)
        .decisionDeadline(Duration.ofSeconds(10)).build();
    AtomicLong admitted = new AtomicLong();
    LeasingStore store = LeasingStore.wrap(real, Leasing.builder().policy(year).build());
    Thread[] threads = new Thread[8];
    for (int t = 0; t < threads.length; t++) {
      threads[t] = new Thread(() -> {
        for (int i = 0; i < 800; i++) {
          if (store.acquire(List.of(Acquisition.of(year, KEY))).allowed()) {
            admitted.incrementAndGet();
          }
        }
      });
      threads[t].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(admitted.get()).isLessThanOrEqualTo(5_000);
    assertThat(store.slicesTaken()).isPositive();
    store.close(); // returns the rest, closes the Redis store
    try (RedisStore reader = RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix)
        .decisionDeadline(Duration.ofSeconds(10)).build()) {
      assertThat(reader.acquire(List.of(Acquisition.of(year, KEY, 0))).outcomes().get(0).remaining())
          .isEqualTo(5_000 - admitted.get());
    }
  }

  /** Counts the round trips the leasing store makes to the store it wraps. */
  static final class Counting implements Store {
    final Store inner;
    final AtomicLong acquires = new AtomicLong();
    final AtomicLong refunds = new AtomicLong();

    Counting(Store inner) {
      this.inner = inner;
    }

    @Override
    public Decision acquire(List<Acquisition> acquisitions) {
      acquires.incrementAndGet();
      return inner.acquire(acquisitions);
    }

    @Override
    public CompletionStage<Decision> acquireAsync(List<Acquisition> acquisitions) {
      acquires.incrementAndGet();
      return inner.acquireAsync(acquisitions);
    }

    @Override
    public void charge(Acquisition acquisition) {
      inner.charge(acquisition);
    }

    @Override
    public void refund(Acquisition acquisition) {
      refunds.incrementAndGet();
      inner.refund(acquisition);
    }

    @Override
    public void release(Lease lease) {
      inner.release(lease);
    }

    @Override
    public void close() {
      // the test closes the Redis store itself
    }
  }
}
