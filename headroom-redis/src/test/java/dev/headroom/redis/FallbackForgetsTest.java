package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The fallback after an outage (issue 36, item 4: the soak's heap stepped up at each Redis
 * restart). The store {@link RedisStore} builds for {@link FailurePolicy#FALLBACK} kept every key
 * of an outage after Redis returned: an in-memory store sweeps keys at rest only as new keys enter,
 * and none enter once Redis decides again. It now forgets them once the longest window it decided
 * has passed with Redis deciding, and not before: an outage soon after finds them as they were.
 */
class FallbackForgetsTest {

  private static final QuotaPolicy SHORT = QuotaPolicy.builder("short").quota(3).window(Duration.ofSeconds(3))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  private static final QuotaPolicy HOURLY = QuotaPolicy.builder("hourly").quota(3).window(Duration.ofHours(1))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  private static final Duration DEADLINE = Duration.ofMillis(150);

  @Test
  void anOutagesKeysAreForgottenAWindowAfterRedisReturns() throws Exception {
    RedisServer server = RedisServer.launch();
    try (RedisStore store = RedisStore.builder().uri(server.uri()).failurePolicy(FailurePolicy.FALLBACK)
        .decisionDeadline(DEADLINE).build()) {
      InMemoryStore fallback = (InMemoryStore) store.fallback().orElseThrow();
      assertThat(store.acquire(List.of(Acquisition.of(SHORT, PartitionKey.of("warm")))).allowed()).isTrue();
      server.kill();
      for (int i = 0; i < 2_000; i++) {
        store.acquire(List.of(Acquisition.of(SHORT, PartitionKey.of("outage-" + i))));
      }
      assertThat(fallback.trackedKeys()).as("the outage's keys, decided locally").isGreaterThanOrEqualTo(1_000);

      server.start(); // the same port
      waitUntilRedisDecides(store, SHORT);

      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      while (fallback.trackedKeys() > 0 && System.nanoTime() < until) {
        Thread.sleep(50);
      }
      assertThat(fallback.trackedKeys()).as("a window after Redis returned, nothing is kept").isZero();
      assertThat(store.fallback()).as("the same store stands ready for the next outage").containsSame(fallback);
    } finally {
      server.close();
    }
  }

  @Test
  void anOutageWithinTheWindowFindsTheLastOnesCounts() throws Exception {
    RedisServer server = RedisServer.launch();
    try (RedisStore store = RedisStore.builder().uri(server.uri()).failurePolicy(FailurePolicy.FALLBACK)
        .decisionDeadline(DEADLINE).build()) {
      PartitionKey victim = PartitionKey.of("victim");
      assertThat(store.acquire(List.of(Acquisition.of(HOURLY, PartitionKey.of("warm")))).allowed()).isTrue();
      server.kill();
      for (int i = 0; i < 3; i++) {
        assertThat(store.acquire(List.of(Acquisition.of(HOURLY, victim))).allowed()).isTrue();
      }
      assertThat(store.acquire(List.of(Acquisition.of(HOURLY, victim))).allowed()).isFalse();

      server.start();
      waitUntilRedisDecides(store, HOURLY);
      Thread.sleep(1_500); // longer than any wheel tick: a forget planned too early would have run
      server.kill();

      assertThat(store.acquire(List.of(Acquisition.of(HOURLY, victim))).allowed())
          .as("refused in the first outage, still refused in the second within the hour").isFalse();
    } finally {
      server.close();
    }
  }

  private static void waitUntilRedisDecides(RedisStore store, QuotaPolicy p) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < until) {
      long f = store.failures();
      store.acquire(List.of(Acquisition.of(p, PartitionKey.of("probe"), 0)));
      if (store.failures() == f) {
        return;
      }
      Thread.sleep(20);
    }
    throw new AssertionError("the store never went back to Redis");
  }
}
