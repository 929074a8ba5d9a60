package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Refusals remembered (issue 17, item 2; headroom-redis/README.md, "Refusals remembered"): a
 * request equal to one Redis refused, made while that refusal's Retry-After runs, is refused
 * without a round trip, with durations never shorter than Redis would give; a give-back by this
 * store ends the memory at once, one by another process within the bound; concurrency policies
 * and different requests always go to Redis. Each test runs a Redis of its own, whose
 * {@code INFO commandstats} counts the round trips.
 */
class RefusalMemoryTest {

  private static final PartitionKey KEY = PartitionKey.of("client-7");

  private static QuotaPolicy hourly(int quota) {
    return QuotaPolicy.builder("hourly").quota(quota).window(Duration.ofHours(1))
        .algorithm(Algorithm.FIXED_WINDOW).build();
  }

  private static RedisStore.Builder patient(RedisServer server) {
    return RedisStore.builder().uri(server.uri()).decisionDeadline(Duration.ofSeconds(10))
        .writeTimeout(Duration.ofSeconds(30));
  }

  @Test
  void anEqualRequestWhileTheRetryRunsIsRefusedWithoutARoundTrip() throws Exception {
    QuotaPolicy hourly = hourly(3);
    try (RedisServer server = RedisServer.launch(); RedisStore store = patient(server).build()) {
      for (int i = 0; i < 3; i++) {
        assertThat(store.acquire(List.of(Acquisition.of(hourly, KEY))).allowed()).isTrue();
      }
      long before = System.nanoTime();
      Decision first = store.acquire(List.of(Acquisition.of(hourly, KEY)));
      assertThat(first.allowed()).isFalse();
      long calls = server.fcalls();

      for (int i = 0; i < 200; i++) {
        Decision again = store.acquire(List.of(Acquisition.of(hourly, KEY)));
        long elapsed = System.nanoTime() - before;
        assertThat(again.allowed()).isFalse();
        assertThat(again.outcomes().get(0).remaining()).isZero();
        // Redis would say the first refusal's retry less the time passed on Redis, which is at
        // most the time passed here since the first call began: never shorter than that.
        assertThat(again.retryAfter()).isLessThanOrEqualTo(first.retryAfter())
            .isGreaterThanOrEqualTo(first.retryAfter().minusNanos(elapsed));
        assertThat(again.outcomes().get(0).reset()).isLessThanOrEqualTo(first.outcomes().get(0).reset())
            .isGreaterThanOrEqualTo(first.outcomes().get(0).reset().minusNanos(elapsed));
      }
      assertThat(server.fcalls() - calls).as("FCALLs for 200 refusals remembered").isZero();
      assertThat(store.refusalsRemembered()).isEqualTo(200);
    }
  }

  @Test
  void aDifferentRequestOnTheSameKeysStillGoesToRedis() throws Exception {
    QuotaPolicy hourly = hourly(3);
    try (RedisServer server = RedisServer.launch(); RedisStore store = patient(server).build()) {
      store.acquire(List.of(Acquisition.of(hourly, KEY, 3)));
      assertThat(store.acquire(List.of(Acquisition.of(hourly, KEY, 1))).allowed()).isFalse();
      long calls = server.fcalls();
      assertThat(store.acquire(List.of(Acquisition.of(hourly, KEY, 2))).allowed()).isFalse();
      assertThat(store.acquire(List.of(Acquisition.of(hourly, PartitionKey.of("client-8")))).allowed()).isTrue();
      assertThat(server.fcalls() - calls).isEqualTo(2);
      assertThat(store.refusalsRemembered()).isZero();
    }
  }

  @Test
  void aRefundByThisStoreEndsTheMemoryAtOnce() throws Exception {
    QuotaPolicy hourly = hourly(2);
    try (RedisServer server = RedisServer.launch(); RedisStore store = patient(server).build()) {
      QuotaLimiter limiter = QuotaLimiter.of(store);
      assertThat(limiter.tryAcquire(hourly, KEY)).isTrue();
      assertThat(limiter.tryAcquire(hourly, KEY)).isTrue();
      assertThat(limiter.tryAcquire(hourly, KEY)).isFalse();
      store.refund(Acquisition.of(hourly, KEY));
      assertThat(limiter.tryAcquire(hourly, KEY)).as("admitted right after the refund").isTrue();
      assertThat(limiter.tryAcquire(hourly, KEY)).isFalse();
    }
  }

  /**
   * Another process's refund cannot be seen here: a refusal of an hourly window is remembered at
   * most the store's bound, not the hour its Retry-After says, so the refund is seen within it.
   */
  @Test
  void aRefundByAnotherStoreIsSeenWithinTheBound() throws Exception {
    QuotaPolicy hourly = hourly(1);
    try (RedisServer server = RedisServer.launch();
        RedisStore here = patient(server).refusalMemory(Duration.ofMillis(200)).build();
        RedisStore elsewhere = patient(server).build()) {
      assertThat(here.acquire(List.of(Acquisition.of(hourly, KEY))).allowed()).isTrue();
      Decision refused = here.acquire(List.of(Acquisition.of(hourly, KEY)));
      assertThat(refused.allowed()).isFalse();
      // The hourly window is aligned to Redis's clock, so the wait is anything up to an hour (under a
      // minute in the last minute of an hour); what matters is that it outlasts the 200 ms memory.
      assertThat(refused.retryAfter()).isGreaterThan(Duration.ofMillis(200));
      elsewhere.refund(Acquisition.of(hourly, KEY));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      boolean admitted = false;
      while (!admitted && System.nanoTime() < deadline) {
        admitted = here.acquire(List.of(Acquisition.of(hourly, KEY))).allowed();
        Thread.onSpinWait();
      }
      assertThat(admitted).as("admitted after another store's refund, within the 200 ms bound").isTrue();
    }
  }

  @Test
  void concurrencyPoliciesAreNeverRemembered() throws Exception {
    QuotaPolicy one = QuotaPolicy.builder("in-flight").quota(1).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).build();
    try (RedisServer server = RedisServer.launch();
        RedisStore here = patient(server).build();
        RedisStore elsewhere = patient(server).build()) {
      Decision held = elsewhere.acquire(List.of(Acquisition.of(one, KEY)));
      assertThat(held.allowed()).isTrue();
      assertThat(here.acquire(List.of(Acquisition.of(one, KEY))).allowed()).isFalse();
      long calls = server.fcalls();
      assertThat(here.acquire(List.of(Acquisition.of(one, KEY))).allowed()).isFalse();
      assertThat(server.fcalls() - calls).as("a refused lease is asked of Redis again").isEqualTo(1);
      QuotaLimiter.of(elsewhere).release(held);
      assertThat(here.acquire(List.of(Acquisition.of(one, KEY))).allowed()).as("admitted once released").isTrue();
    }
  }

  @Test
  void zeroSendsEveryRequestToRedis() throws Exception {
    QuotaPolicy hourly = hourly(1);
    try (RedisServer server = RedisServer.launch();
        RedisStore store = patient(server).refusalMemory(Duration.ZERO).build()) {
      store.acquire(List.of(Acquisition.of(hourly, KEY)));
      long calls = server.fcalls();
      for (int i = 0; i < 20; i++) {
        assertThat(store.acquire(List.of(Acquisition.of(hourly, KEY))).allowed()).isFalse();
      }
      assertThat(server.fcalls() - calls).isEqualTo(20);
    }
  }

  /** A token bucket refusing many callers stays exact: the memory never admits, Redis does. */
  @Test
  void aRefusingTokenBucketUnderManyCallersAdmitsWhatRedisAdmits() throws Exception {
    QuotaPolicy perSecond = QuotaPolicy.builder("per-second").quota(50).window(Duration.ofSeconds(1)).build();
    try (RedisServer server = RedisServer.launch(); RedisStore store = patient(server).build()) {
      QuotaLimiter limiter = QuotaLimiter.of(store);
      AtomicLong admitted = new AtomicLong();
      AtomicLong refused = new AtomicLong();
      long start = System.nanoTime();
      Thread[] threads = new Thread[16];
      for (int t = 0; t < threads.length; t++) {
        threads[t] = new Thread(() -> {
          while (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(600)) {
            (limiter.tryAcquire(perSecond, KEY) ? admitted : refused).incrementAndGet();
          }
        });
        threads[t].start();
      }
      for (Thread t : threads) {
        t.join(TimeUnit.MINUTES.toMillis(2));
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      // a full bucket of 50, then 50 a second: never more, whatever the memory answered
      assertThat(admitted.get()).isPositive().isLessThanOrEqualTo(50 + (long) Math.ceil(50 * seconds) + 1);
      assertThat(refused.get()).isPositive();
      assertThat(store.failures()).isZero();
    }
  }

  @Test
  void aBoundOutsideZeroToAnHourIsRefusedNamingTheSetting() {
    assertThatThrownBy(() -> RedisStore.builder().refusalMemory(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("refusalMemory: expected from 0 to 1 hour, got PT-0.001S");
    assertThatThrownBy(() -> RedisStore.builder().refusalMemory(Duration.ofHours(2)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("refusalMemory").hasMessageContaining("PT2H");
  }
}
