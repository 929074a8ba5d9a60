package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.redis.internal.KeyLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The store encodes each call's keys itself ({@link RedisStore}: keys are
 * {@code prefix + policy + ":" + algorithm + ":{partition}"}, the partition escaped): the keys a
 * decision writes in Redis are exactly {@link KeyLayout#key}, for plain, escaped and non-ASCII
 * partitions, and a concurrency policy's lease hash is that key plus {@code :h}.
 */
class KeyEncodingTest {

  private final String prefix = LocalRedis.uniquePrefix("keys");

  @AfterEach
  void clean() {
    LocalRedis.deleteAll(prefix);
  }

  @Test
  void keysWrittenByADecisionAreTheLayoutsKeys() {
    // An hour's window: the bucket's key lives until it is full again (6 minutes after one unit),
    // long after the check below even on a loaded machine (a 1 s window's key expired in 100 ms).
    QuotaPolicy bucket = QuotaPolicy.builder("per-hour").quota(10).window(Duration.ofHours(1)).build();
    QuotaPolicy inflight = QuotaPolicy.builder("inflight").quota(5).window(Duration.ofSeconds(10))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).algorithm(Algorithm.CONCURRENCY).build();
    KeyLayout layout = new KeyLayout(prefix);
    try (RedisStore store = RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix)
        .decisionDeadline(Duration.ofSeconds(5)).build()) {
      QuotaLimiter limiter = QuotaLimiter.of(store);
      for (String partition : List.of("client-1", "a{b}c%7B", "zoë-東京", "")) {
        PartitionKey key = partition.isEmpty() ? PartitionKey.GLOBAL : PartitionKey.of(partition);
        assertThat(limiter.acquire(List.of(Acquisition.of(bucket, key), Acquisition.of(inflight, key))).allowed())
            .as("partition '%s'", partition).isTrue();
        String main = new String(layout.key(bucket, key), StandardCharsets.UTF_8);
        String lease = new String(layout.key(inflight, key), StandardCharsets.UTF_8);
        assertThat(LocalRedis.keys(prefix)).as("partition '%s'", partition).contains(main, lease + ":h");
      }
    }
  }
}
