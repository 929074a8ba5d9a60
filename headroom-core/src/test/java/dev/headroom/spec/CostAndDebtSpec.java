package dev.headroom.spec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Cost-weighted units, peeks, charges after the fact, debt and refunds: the rules of the
 * {@link dev.headroom.Store} SPI ({@code charge}, {@code refund}) that hold for every counting
 * algorithm alike, run once per algorithm. Quota unit {@code content-bytes} is the case that needs
 * them (draft-ietf-httpapi-ratelimit-headers-09 section 3.1.2).
 */
public abstract class CostAndDebtSpec extends StoreSpecification {

  private static QuotaPolicy bytes(Algorithm algorithm, long quota) {
    return QuotaPolicy.builder("bytes").quota(quota).window(Duration.ofSeconds(60))
        .unit(QuotaUnit.CONTENT_BYTES).algorithm(algorithm).build();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  void costEqualToTheQuotaIsAllowedOnce(Algorithm algorithm) {
    QuotaPolicy p = bytes(algorithm, 1000);
    PartitionKey k = key("client");
    PolicyOutcome all = acquire(p, k, 1000);
    assertThat(all.allowed()).isTrue();
    assertThat(all.remaining()).isZero();
    assertThat(all.exceedsQuota()).isFalse();
    assertThat(acquire(p, k, 1).allowed()).isFalse();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  void costAboveTheQuotaIsRefusedForeverAndConsumesNothing(Algorithm algorithm) {
    QuotaPolicy p = bytes(algorithm, 1000);
    PartitionKey k = key("client");
    PolicyOutcome tooBig = acquire(p, k, 1001);
    assertThat(tooBig.allowed()).isFalse();
    assertThat(tooBig.exceedsQuota()).as("an HTTP layer answers 413, not 429").isTrue();
    assertThat(tooBig.remaining()).isEqualTo(1000);
    assertThat(tooBig.retryAfter()).isPositive();
    advance(Duration.ofDays(1));
    assertThat(acquire(p, k, 1001).allowed()).as("waiting does not help").isFalse();
    assertThat(acquire(p, k, 1000).allowed()).as("nothing was consumed").isTrue();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  void costZeroPeeksWithoutConsuming(Algorithm algorithm) {
    QuotaPolicy p = bytes(algorithm, 1000);
    PartitionKey k = key("client");
    assertThat(peek(p, k).remaining()).isEqualTo(1000);
    acquire(p, k, 400);
    for (int i = 0; i < 5; i++) {
      PolicyOutcome o = peek(p, k);
      assertThat(o.allowed()).isTrue();
      assertThat(o.remaining()).isEqualTo(600);
      assertThat(o.cost()).isZero();
      assertThat(o.reset()).isPositive();
    }
    acquire(p, k, 600);
    PolicyOutcome empty = peek(p, k);
    assertThat(empty.allowed()).as("a peek at an empty (not indebted) quota is allowed").isTrue();
    assertThat(empty.remaining()).isZero();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  void chargeGoesIntoDebtAndRequestsWaitItOutExactly(Algorithm algorithm) {
    QuotaPolicy p = bytes(algorithm, 1000);
    PartitionKey k = key("upload");
    acquire(p, k, 1);
    limiter.charge(p, k, 2999);
    PolicyOutcome refused = acquire(p, k, 100);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.exceedsQuota()).isFalse();
    assertThat(refused.remaining()).isZero();
    assertThat(refused.retryAfter()).isGreaterThan(Duration.ofSeconds(60));
    assertThat(refused.reset()).isGreaterThanOrEqualTo(refused.retryAfter());
    PolicyOutcome peekInDebt = peek(p, k);
    assertThat(peekInDebt.allowed()).as("even a peek is refused while in debt").isFalse();
    assertThat(peekInDebt.remaining()).isZero();
    advance(refused.retryAfter().minusNanos(1));
    assertThat(acquire(p, k, 100).allowed()).as("one nanosecond before Retry-After").isFalse();
    advanceNanos(1);
    assertThat(acquire(p, k, 100).allowed()).as("at Retry-After").isTrue();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  void chargeWithinTheQuotaIsLikeAnAcquisition(Algorithm algorithm) {
    QuotaPolicy p = bytes(algorithm, 1000);
    PartitionKey k = key("client");
    limiter.charge(p, k, 250);
    assertThat(peek(p, k).remaining()).isEqualTo(750);
    store.charge(Acquisition.of(p, k, 0));
    assertThat(peek(p, k).remaining()).as("a zero charge changes nothing").isEqualTo(750);
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  void refundGivesUnitsBackButNeverAboveTheQuota(Algorithm algorithm) {
    QuotaPolicy p = bytes(algorithm, 1000);
    PartitionKey k = key("client");
    acquire(p, k, 500);
    store.refund(Acquisition.of(p, k, 200));
    assertThat(peek(p, k).remaining()).isEqualTo(700);
    store.refund(Acquisition.of(p, k, 100_000));
    PolicyOutcome whole = peek(p, k);
    assertThat(whole.remaining()).isEqualTo(1000);
    assertThat(acquire(p, k, 1000).allowed()).isTrue();
    assertThat(acquire(p, k, 1).allowed()).as("the refund did not create credit").isFalse();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  void refundOfAnUnknownKeyDoesNothing(Algorithm algorithm) {
    QuotaPolicy p = bytes(algorithm, 1000);
    PartitionKey k = key("never-seen");
    store.refund(Acquisition.of(p, k, 10));
    assertThat(peek(p, k).remaining()).isEqualTo(1000);
    assertThat(acquire(p, k, 1000).allowed()).isTrue();
    assertThat(acquire(p, k, 1).allowed()).isFalse();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  void hugeDebtNeverOverflows(Algorithm algorithm) {
    QuotaPolicy p = QuotaPolicy.builder("tiny").quota(1).window(Duration.ofSeconds(1)).algorithm(algorithm).build();
    PartitionKey k = key("abuser");
    // 9300 charges of MAX_QUOTA (~10^15) units: ~9.3 * 10^18 in total, more than a long holds.
    for (int i = 0; i < 9300; i++) {
      limiter.charge(p, k, QuotaPolicy.MAX_QUOTA);
    }
    for (int i = 0; i < 3; i++) {
      PolicyOutcome o = acquire(p, k, 1);
      assertThat(o.allowed()).isFalse();
      assertThat(o.remaining()).isZero();
      assertThat(o.retryAfter()).as("Retry-After after huge debt").isPositive();
      assertThat(o.retryAfterSeconds()).isPositive();
      assertThat(o.reset()).isPositive().isGreaterThanOrEqualTo(o.retryAfter());
      assertThat(o.resetSeconds()).isPositive();
      PolicyOutcome peek = peek(p, k);
      assertThat(peek.remaining()).isZero();
      assertThat(peek.reset()).isPositive();
      advance(Duration.ofMillis(300));
    }
    advance(Duration.ofDays(400));
    PolicyOutcome later = acquire(p, k, 1);
    if (algorithm == Algorithm.SLIDING_WINDOW) {
      assertThat(later.allowed()).as("a sliding window forgives debt after two windows").isTrue();
    } else {
      assertThat(later.allowed()).as("2^63 units at one per second are not paid in 400 days").isFalse();
      assertThat(later.retryAfter()).isPositive();
      assertThat(later.reset()).isGreaterThanOrEqualTo(later.retryAfter());
    }
    store.refund(Acquisition.of(p, k, QuotaPolicy.MAX_QUOTA));
    assertThat(acquire(p, k).retryAfter().isNegative()).isFalse();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  void largestPolicyNeverOverflows(Algorithm algorithm) {
    QuotaPolicy p = QuotaPolicy.builder("yearly").quota(QuotaPolicy.MAX_QUOTA).window(QuotaPolicy.MAX_WINDOW)
        .unit(QuotaUnit.CONTENT_BYTES).algorithm(algorithm).build();
    PartitionKey k = key("client");
    PolicyOutcome fresh = peek(p, k);
    assertThat(fresh.remaining()).isEqualTo(QuotaPolicy.MAX_QUOTA);
    PolicyOutcome all = acquire(p, k, QuotaPolicy.MAX_QUOTA);
    assertThat(all.allowed()).isTrue();
    assertThat(all.remaining()).isZero();
    assertThat(all.reset()).isPositive().isLessThanOrEqualTo(QuotaPolicy.MAX_WINDOW.multipliedBy(2));
    PolicyOutcome refused = acquire(p, k, QuotaPolicy.MAX_QUOTA);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.retryAfter()).isPositive().isLessThanOrEqualTo(QuotaPolicy.MAX_WINDOW.multipliedBy(2));
    for (int i = 0; i < 100; i++) {
      limiter.charge(p, k, QuotaPolicy.MAX_QUOTA);
    }
    PolicyOutcome indebted = acquire(p, k, 1);
    assertThat(indebted.allowed()).isFalse();
    assertThat(indebted.retryAfter()).isPositive();
    assertThat(indebted.reset()).isPositive();
  }
}
