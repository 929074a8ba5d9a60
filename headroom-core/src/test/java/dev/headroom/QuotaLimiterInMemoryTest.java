package dev.headroom;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The first example of {@link QuotaLimiter}'s class comment and headroom-core/README.md's example,
 * run exactly as written: {@link QuotaLimiter#inMemory()} and one acquire line.
 */
class QuotaLimiterInMemoryTest {

  /** The two lines of the example, unchanged, for one client. */
  private static boolean example(QuotaLimiter limiter, String clientId) {
    boolean allowed = limiter.tryAcquire(QuotaPolicy.builder("per-client").quota(10).window(Duration.ofMinutes(1)).build(), PartitionKey.of(clientId));
    return allowed;
  }

  @Test
  @DisplayName("QuotaLimiter.inMemory(): the example admits 10 requests of a client and refuses the 11th")
  void exampleAdmitsTheQuotaAndRefusesTheNext() {
    QuotaLimiter limiter = QuotaLimiter.inMemory();
    List<Boolean> answers = new ArrayList<>();
    for (int i = 0; i < 11; i++) {
      answers.add(example(limiter, "client-a"));
    }
    // A token bucket of q=10, w=60 s refills one unit every 6 s; eleven calls take far less.
    assertThat(answers.subList(0, 10)).containsOnly(true);
    assertThat(answers.get(10)).isFalse();
    // Each partition counts on its own.
    assertThat(example(limiter, "client-b")).isTrue();
  }

  @Test
  @DisplayName("QuotaLimiter.inMemory() decides through a fresh in-memory store with the default bound on keys")
  void inMemoryBuildsADefaultInMemoryStore() {
    QuotaLimiter first = QuotaLimiter.inMemory();
    QuotaLimiter second = QuotaLimiter.inMemory();
    assertThat(first.store()).isInstanceOf(InMemoryStore.class);
    assertThat(((InMemoryStore) first.store()).maxKeys()).isEqualTo(InMemoryStore.DEFAULT_MAX_KEYS);
    assertThat(first.store()).isNotSameAs(second.store());
    example(first, "client-a");
    assertThat(((InMemoryStore) first.store()).trackedKeys()).isEqualTo(1);
    assertThat(((InMemoryStore) second.store()).trackedKeys()).isZero();
  }
}
