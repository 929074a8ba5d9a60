package dev.headroom.gateway.internal.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * Space-Saving's guarantees (Metwally et al. 2005, Lemma 3.4 and Theorem 3.5), checked against exact
 * counts on random streams: every monitored key's true count lies in {@code [count - error, count]};
 * every key seen more than {@code n / capacity} times is monitored; never more than {@code capacity}
 * keys are held, whatever the number of distinct keys.
 */
class HeavyHittersTest {

  @RepeatedTest(20)
  void boundsHoldAndFrequentKeysAreNeverLost() {
    Random random = new Random(System.nanoTime());
    int capacity = 1 + random.nextInt(32);
    HeavyHitters<Integer> h = new HeavyHitters<>(capacity);
    Map<Integer, Long> exact = new HashMap<>();
    int n = 1 + random.nextInt(20_000);
    int distinct = 1 + random.nextInt(5_000);
    for (int i = 0; i < n; i++) {
      // a skewed stream: a few keys carry most of it, a long tail the rest
      int key = random.nextInt(4) == 0 ? random.nextInt(distinct) : (int) Math.abs(random.nextGaussian() * 3);
      h.add(key, 1);
      exact.merge(key, 1L, Long::sum);
    }
    assertThat(h.size()).isLessThanOrEqualTo(capacity);
    for (HeavyHitters.Entry<Integer> e : h.entries()) {
      long truth = exact.getOrDefault(e.key(), 0L);
      assertThat(truth).as("key %d", e.key()).isBetween(e.count() - e.error(), e.count());
    }
    Map<Integer, HeavyHitters.Entry<Integer>> held = new HashMap<>();
    h.entries().forEach(e -> held.put(e.key(), e));
    exact.forEach((key, count) -> {
      if (count > n / capacity) {
        assertThat(held).as("key %d seen %d times of %d, capacity %d", key, count, n, capacity).containsKey(key);
      }
    });
  }

  @Test
  void aFloodOfDistinctKeysCannotHideOneHeavyKey() {
    HeavyHitters<String> h = new HeavyHitters<>(16);
    for (int i = 0; i < 1_000_000; i++) {
      h.add("flood-" + i, 1);
      if (i % 10 == 0) {
        h.add("heavy", 1);
      }
    }
    assertThat(h.size()).isEqualTo(16);
    HeavyHitters.Entry<String> heavy = h.entries().stream().filter(e -> e.key().equals("heavy")).findFirst().orElseThrow();
    assertThat(heavy.count() - heavy.error()).isLessThanOrEqualTo(100_000).isPositive();
    assertThat(heavy.count()).isGreaterThanOrEqualTo(100_000);
    assertThat(h.entries()).allMatch(e -> e.key().equals("heavy") || e.count() < heavy.count());
  }

  @Test
  void weightsAddAndCountsSaturate() {
    HeavyHitters<String> h = new HeavyHitters<>(2);
    h.add("a", Long.MAX_VALUE - 1);
    h.add("a", 5);
    h.add("b", 3);
    assertThat(h.entries()).anyMatch(e -> e.key().equals("a") && e.count() == Long.MAX_VALUE)
        .anyMatch(e -> e.key().equals("b") && e.count() == 3 && e.error() == 0);
  }
}
