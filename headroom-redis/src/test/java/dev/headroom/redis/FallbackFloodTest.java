package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;

/**
 * While Redis is away, {@link FailurePolicy#FALLBACK} decides with the in-memory store this store
 * builds, bounded by {@link RedisStore.Builder#fallbackMaxKeys}; that store keeps its flood
 * guarantee (project issue 14, item 2): a key refused at its quota stays refused however many
 * distinct keys push it out.
 */
class FallbackFloodTest {

  @Test
  void aKeyRefusedByTheFallbackStaysRefusedThroughAKeyFlood() throws Exception {
    int dead;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      dead = s.getLocalPort(); // closed again: connecting to it is refused, Redis stays away
    }
    ManualTicker ticker = ManualTicker.atFixedInstant();
    try (RedisStore store = RedisStore.builder().uri("redis://127.0.0.1:" + dead).failurePolicy(FailurePolicy.FALLBACK)
        .fallbackMaxKeys(1_000).decisionDeadline(Duration.ofMillis(50)).ticker(ticker).build()) {
      InMemoryStore fallback = (InMemoryStore) store.fallback().orElseThrow();
      assertThat(fallback.maxKeys()).isEqualTo(1_000);
      QuotaLimiter limiter = QuotaLimiter.of(store);
      QuotaPolicy p = QuotaPolicy.builder("hourly").quota(50).window(Duration.ofHours(1))
          .algorithm(Algorithm.FIXED_WINDOW).build();
      PartitionKey victim = PartitionKey.of("victim");
      for (int i = 0; i < 50; i++) {
        assertThat(limiter.acquire(p, victim).allowed()).isTrue();
      }
      assertThat(limiter.acquire(p, victim).allowed()).isFalse();
      for (int i = 0; i < 10_000; i++) {
        assertThat(limiter.acquire(p, PartitionKey.of("flood-" + i)).allowed()).isTrue();
      }
      assertThat(fallback.trackedKeys()).isEqualTo(1_000);
      // each flood key beyond the bound was kept out (decided from the sketch) or, when the
      // doorkeeper took it for a returning key, entered in place of a live key
      assertThat(fallback.sketchDecisions() + fallback.evictedLiveKeys()).isEqualTo(9_001);
      assertThat(fallback.evictedLiveKeys()).isLessThan(90);
      assertThat(limiter.acquire(p, victim).allowed()).as("still refused after the flood").isFalse();
      assertThat(store.failures()).as("every decision went to the fallback").isPositive();
    }
  }

  @Test
  void fallbackMaxKeysNamesTheFieldWhenBelowOne() {
    Assertions.assertThatThrownBy(() -> RedisStore.builder().fallbackMaxKeys(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("fallbackMaxKeys: expected at least 1, got 0");
  }
}
