package dev.headroom;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link InMemoryStore#forgetAll()}: a store whose decisions stopped mattering (a fallback whose
 * primary decides again) gives back what it holds, while its counters and lease ids go on.
 */
class InMemoryStoreForgetTest {

  private static final QuotaPolicy HOURLY = QuotaPolicy.builder("hourly").quota(2).window(Duration.ofHours(1))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  private static final QuotaPolicy ONE_AT_A_TIME = QuotaPolicy.builder("one").quota(1)
      .unit(QuotaUnit.CONCURRENT_REQUESTS).window(Duration.ofMinutes(1)).algorithm(Algorithm.CONCURRENCY).build();

  @Test
  void forgetsEveryKeyAndStartsAgainAsNew() {
    InMemoryStore store = InMemoryStore.builder().maxKeys(100).ticker(ManualTicker.atFixedInstant()).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    for (int i = 0; i < 1_000; i++) {
      limiter.acquire(HOURLY, PartitionKey.of("k" + i));
    }
    limiter.acquire(HOURLY, PartitionKey.of("victim"));
    limiter.acquire(HOURLY, PartitionKey.of("victim"));
    assertThat(limiter.acquire(HOURLY, PartitionKey.of("victim")).allowed()).isFalse();
    assertThat(store.trackedKeys()).isEqualTo(100);
    long sketch = store.sketchDecisions();
    long evicted = store.evictedLiveKeys();
    assertThat(sketch + evicted).isPositive();

    store.forgetAll();

    assertThat(store.trackedKeys()).isZero();
    assertThat(limiter.acquire(HOURLY, PartitionKey.of("victim")).allowed())
        .as("the hour's count is forgotten, the sketch's too").isTrue();
    assertThat(store.sketchDecisions()).as("counters go on, never back").isEqualTo(sketch);
    assertThat(store.evictedLiveKeys()).isEqualTo(evicted);
    assertThat(store.maxKeys()).isEqualTo(100);
  }

  @Test
  void aLeaseFromBeforeNeverReleasesOneHandedOutAfter() {
    InMemoryStore store = InMemoryStore.builder().ticker(ManualTicker.atFixedInstant()).build();
    PartitionKey k = PartitionKey.of("k");
    Lease before = store.acquire(List.of(Acquisition.of(ONE_AT_A_TIME, k))).leases().get(0);

    store.forgetAll();

    Decision after = store.acquire(List.of(Acquisition.of(ONE_AT_A_TIME, k)));
    assertThat(after.allowed()).as("the lease held before is forgotten").isTrue();
    Lease held = after.leases().get(0);
    assertThat(held.id()).isNotEqualTo(before.id());
    store.release(before); // a lease the new tables never handed out: nothing happens
    assertThat(store.acquire(List.of(Acquisition.of(ONE_AT_A_TIME, k))).allowed())
        .as("the lease handed out after the forget is still held").isFalse();
    store.release(held);
    assertThat(store.acquire(List.of(Acquisition.of(ONE_AT_A_TIME, k))).allowed()).isTrue();
  }
}
