package dev.headroom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Bad input at the request edge: costs ({@link Acquisition}), partition keys
 * (draft-ietf-httpapi-ratelimit-headers-09 section 3.1.4, bounded at 512 characters), the
 * acquisition list of {@link QuotaLimiter}, and {@link ManualTicker}. Each error names the field,
 * the value and what is expected.
 */
class AcquisitionValidationTest {

  private final QuotaPolicy policy = QuotaPolicy.builder("api").quota(10).window(Duration.ofSeconds(60)).build();
  private final PartitionKey key = PartitionKey.of("client");
  private final QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ManualTicker.atFixedInstant()).build());

  @Test
  @DisplayName("a negative cost is refused")
  void negativeCost() {
    assertThatThrownBy(() -> Acquisition.of(policy, key, -1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cost: expected an integer from 0 to 999999999999999 for policy 'api', got -1");
    assertThatThrownBy(() -> limiter.charge(policy, key, Long.MIN_VALUE)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cost: expected an integer from 0 to 999999999999999 for policy 'api', got " + Long.MIN_VALUE);
  }

  @Test
  @DisplayName("a cost above MAX_QUOTA (one that could overflow a counter) is refused")
  void overflowingCost() {
    assertThatThrownBy(() -> Acquisition.of(policy, key, Long.MAX_VALUE)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cost: expected an integer from 0 to 999999999999999 for policy 'api', got " + Long.MAX_VALUE);
    assertThatThrownBy(() -> Acquisition.of(policy, key, QuotaPolicy.MAX_QUOTA + 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("got 1000000000000000");
    assertThat(Acquisition.of(policy, key, QuotaPolicy.MAX_QUOTA).cost()).isEqualTo(QuotaPolicy.MAX_QUOTA);
    assertThat(Acquisition.of(policy, key, 0).cost()).isZero();
    assertThat(Acquisition.of(policy, key).cost()).isEqualTo(1);
  }

  @Test
  @DisplayName("a missing policy or key is a programming error named by its parameter")
  void nulls() {
    assertThatThrownBy(() -> Acquisition.of(null, key)).isInstanceOf(NullPointerException.class).hasMessage("policy");
    assertThatThrownBy(() -> Acquisition.of(policy, null)).isInstanceOf(NullPointerException.class).hasMessage("key");
  }

  @Test
  @DisplayName("partition keys: 1 to 512 characters")
  void partitionKeys() {
    assertThatThrownBy(() -> PartitionKey.of(null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("partition key: expected 1 to 512 characters, got null");
    assertThatThrownBy(() -> PartitionKey.of("")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("partition key: expected 1 to 512 characters, got 0 characters");
    assertThatThrownBy(() -> PartitionKey.of("k".repeat(513))).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("partition key: expected 1 to 512 characters, got 513 characters");
    PartitionKey longest = PartitionKey.of("k".repeat(512));
    assertThat(longest.value()).hasSize(512);
    assertThat(longest.toString()).hasSize(67).endsWith("...");
    assertThat(PartitionKey.of("\u00e9").utf8()).hasSize(2);
    assertThat(PartitionKey.of("a")).isEqualTo(PartitionKey.of("a")).hasSameHashCodeAs(PartitionKey.of("a"));
  }

  @Test
  @DisplayName("QuotaLimiter: an empty or null acquisition list is refused")
  void emptyAcquisitions() {
    assertThatThrownBy(() -> limiter.acquire(List.of())).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("acquisitions: expected at least one policy to decide, got none");
    assertThatThrownBy(() -> limiter.acquire((List<Acquisition>) null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("acquisitions: expected at least one policy to decide, got none");
    assertThatThrownBy(() -> limiter.acquireAsync(new ArrayList<>())).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("acquisitions: expected at least one policy to decide, got none");
  }

  @Test
  @DisplayName("QuotaLimiter: one policy twice for one partition is refused, naming both")
  void duplicateAcquisitions() {
    List<Acquisition> twice = List.of(Acquisition.of(policy, key), Acquisition.of(policy, key, 3));
    assertThatThrownBy(() -> limiter.acquire(twice)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("acquisitions: policy 'api' appears twice for partition 'client'; expected each policy once per partition");
    assertThatThrownBy(() -> limiter.acquireAsync(twice)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("appears twice");
    // The same policy in two partitions is fine.
    assertThat(limiter.acquire(List.of(Acquisition.of(policy, key), Acquisition.of(policy, PartitionKey.of("other"))))
        .allowed()).isTrue();
  }

  @Test
  @DisplayName("the async path decides like the blocking one")
  void asyncDecides() throws Exception {
    Decision d = limiter.acquireAsync(List.of(Acquisition.of(policy, key, 10))).toCompletableFuture().get();
    assertThat(d.allowed()).isTrue();
    assertThat(limiter.acquireAsync(List.of(Acquisition.of(policy, key))).toCompletableFuture().get().allowed()).isFalse();
  }

  @Test
  @DisplayName("ManualTicker refuses to go backwards")
  void tickerGoesForwardOnly() {
    ManualTicker t = ManualTicker.atFixedInstant();
    assertThatThrownBy(() -> t.advance(Duration.ofNanos(-1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("duration: expected zero or positive, got PT-0.000000001S");
    assertThatThrownBy(() -> t.advanceNanos(-5)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delta: expected zero or positive nanoseconds, got -5");
    assertThatThrownBy(() -> t.set(Instant.parse("2025-12-31T23:59:59Z")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("instant: expected no earlier than 2026-01-01T00:00:00Z, got 2025-12-31T23:59:59Z");
  }
}
