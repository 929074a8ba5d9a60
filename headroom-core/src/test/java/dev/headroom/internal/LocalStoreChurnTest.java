package dev.headroom.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Churn at a full store (keys evicted, returning keys inserted, without end) keeps probe chains as short
 * as a fresh table's: inserts take the tombstones on their path (PartitionTable, "Tombstone reuse").
 * Before reuse, chains grew to 12 to 25 slots until the next rebuild.
 */
class LocalStoreChurnTest {

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "FIXED_WINDOW"})
  void probeChainsStayShortUnderChurn(Algorithm algorithm) {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    LocalStore store = new LocalStore(ticker, 20_000);
    QuotaPolicy p = QuotaPolicy.builder("churn").quota(10).window(Duration.ofMinutes(1)).algorithm(algorithm).build();
    for (int i = 0; i < 20_000; i++) {
      store.tryAcquire(p, PartitionKey.of("stable-" + i), 1);
    }
    long longest = 0;
    double worstMean = 0;
    for (int round = 0; round < 30; round++) {
      for (int i = 0; i < 2_000; i++) {
        PartitionKey churn = PartitionKey.of("churn-" + round + "-" + i);
        store.tryAcquire(p, churn, 1); // kept out of the full store (decided from the sketch)...
        store.tryAcquire(p, churn, 1); // ...until it comes back: it enters and evicts one
      }
      long[] probes = store.probeLengths();
      assertThat(probes[2]).isEqualTo(20_000);
      longest = Math.max(longest, probes[0]);
      worstMean = Math.max(worstMean, (double) probes[1] / probes[2]);
    }
    assertThat(store.evictedLive()).isEqualTo(60_000);
    assertThat(worstMean).as("mean probe length over 30 rounds of churn").isLessThan(1.5);
    assertThat(longest).as("longest probe chain").isLessThan(64);
  }
}
