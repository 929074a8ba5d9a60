package dev.headroom;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The default non-blocking updates of the Store SPI (issue 20): for a store that never blocks they
 * run in the caller's thread and complete at once, with the effect of the blocking call.
 */
class AsyncUpdatesTest {
  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());

  @Test
  void releaseAsyncHandsTheLeaseBack() {
    QuotaPolicy inflight = QuotaPolicy.builder("inflight").quota(1).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).build();
    Decision first = limiter.acquire(inflight, PartitionKey.of("c1"));
    assertThat(limiter.acquire(inflight, PartitionKey.of("c1")).allowed()).isFalse();
    assertThat(limiter.releaseAsync(first).toCompletableFuture()).isCompleted();
    assertThat(limiter.acquire(inflight, PartitionKey.of("c1")).allowed()).isTrue();
  }

  @Test
  void chargeAsyncAndRefundAsyncApplyAtOnce() {
    QuotaPolicy bytes = QuotaPolicy.builder("bytes").quota(100).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONTENT_BYTES).build();
    assertThat(limiter.chargeAsync(bytes, PartitionKey.of("c1"), 500).toCompletableFuture()).isCompleted();
    assertThat(limiter.acquire(List.of(Acquisition.of(bytes, PartitionKey.of("c1"), 0))).allowed()).isFalse();
    QuotaPolicy minute = QuotaPolicy.builder("minute").quota(1).window(Duration.ofMinutes(1)).build();
    Acquisition one = Acquisition.of(minute, PartitionKey.of("c1"), 1);
    assertThat(limiter.acquire(List.of(one)).allowed()).isTrue();
    assertThat(limiter.store().refundAsync(one).toCompletableFuture()).isCompleted();
    assertThat(limiter.acquire(List.of(one)).allowed()).isTrue();
  }

  @Test
  void aFailingUpdateIsAFailedStage() {
    Store failing = new Store() {
      @Override
      public Decision acquire(List<Acquisition> acquisitions) {
        throw new StoreException("down", null);
      }

      @Override
      public void charge(Acquisition acquisition) {
        throw new StoreException("down", null);
      }

      @Override
      public void refund(Acquisition acquisition) {}

      @Override
      public void release(Lease lease) {}
    };
    QuotaPolicy bytes = QuotaPolicy.builder("bytes").quota(100).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONTENT_BYTES).build();
    assertThat(failing.chargeAsync(Acquisition.of(bytes, PartitionKey.of("c1"), 5)).toCompletableFuture())
        .isCompletedExceptionally();
  }
}
