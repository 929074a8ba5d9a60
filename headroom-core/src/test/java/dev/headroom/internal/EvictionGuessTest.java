package dev.headroom.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * PolicyPartitions, "Where a new key's time goes": the victim guessed without the lock only saves
 * work. The locked eviction folds the key it evicts under that key's own sketch hash, whatever was
 * guessed, and uses the hash computed before the lock only for the same key object.
 */
class EvictionGuessTest {

  private static final long NOW = 1_000_000_000_000L;

  private final QuotaPolicy policy = QuotaPolicy.builder("guess").quota(10).window(Duration.ofMinutes(1))
      .algorithm(Algorithm.TOKEN_BUCKET).build();

  /** A table holding one refused key: its TAT is now + tau. */
  private PolicyPartitions tableWithRefused(String key) {
    PolicyPartitions t = new PolicyPartitions(policy, UseSketch.MIN_WIDTH);
    t.partitions.insert(key, key.hashCode(), NOW + policy.burstToleranceNanos(), null);
    return t;
  }

  @Test
  void theGuessOutsideTheLockNamesTheKeyTheLockedEvictionTakes() {
    String key = "only";
    PolicyPartitions t = tableWithRefused(key);
    int guessed = t.guessVictim(NOW, "newcomer".hashCode());
    assertThat(t.partitions.slots().key(guessed)).isSameAs(key);
  }

  @Test
  void aStaleGuessNeverFoldsTheVictimUnderAnotherKeysHash() {
    String key = "only";
    PolicyPartitions t = tableWithRefused(key);
    long otherHash = t.sketchHash("someone-else");
    t.partitions.lock.lock();
    try {
      long evicted = t.evictSample(NOW, true, "newcomer".hashCode(), "someone-else", otherHash);
      assertThat(PolicyPartitions.live(evicted)).isEqualTo(1);
      assertThat(t.startingWord(t.sketchHash(key), NOW, LocalStore.EMPTY_TAT))
          .as("the victim comes back refused").isEqualTo(NOW + policy.burstToleranceNanos());
      assertThat(t.startingWord(otherHash, NOW, LocalStore.EMPTY_TAT))
          .as("nothing was folded under the stale guess").isEqualTo(LocalStore.EMPTY_TAT);
    } finally {
      t.partitions.lock.unlock();
    }
  }

  @Test
  void aGuessOfTheSameKeyObjectLendsTheLockedFoldItsHash() {
    String key = "only";
    PolicyPartitions t = tableWithRefused(key);
    long hashBeforeTheLock = t.sketchHash(key);
    t.partitions.lock.lock();
    try {
      long evicted = t.evictSample(NOW, true, "newcomer".hashCode(), key, hashBeforeTheLock);
      assertThat(PolicyPartitions.live(evicted)).isEqualTo(1);
      assertThat(t.startingWord(hashBeforeTheLock, NOW, LocalStore.EMPTY_TAT)).isEqualTo(NOW + policy.burstToleranceNanos());
    } finally {
      t.partitions.lock.unlock();
    }
  }
}
