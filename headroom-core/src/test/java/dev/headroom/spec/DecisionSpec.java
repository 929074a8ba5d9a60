package dev.headroom.spec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * What a {@link Decision} reports for a request with several policies: {@code violated()}, the
 * request's Retry-After (the longest of the violated policies') and {@code mostConstraining()},
 * the one policy to report when only one can be (draft-polli-ratelimit-headers-02 section 4).
 */
public abstract class DecisionSpec extends StoreSpecification {

  private final QuotaPolicy small = policy("small", 10, seconds(60), Algorithm.TOKEN_BUCKET);
  private final QuotaPolicy large = policy("large", 100, seconds(3600), Algorithm.FIXED_WINDOW);

  private Decision both(PartitionKey k) {
    return limiter.acquire(List.of(Acquisition.of(small, k), Acquisition.of(large, k)));
  }

  @Test
  @DisplayName("allowed: mostConstraining is the policy closest to exhaustion, violated() is empty")
  void closestToExhaustionWhenAllowed() {
    PartitionKey k = key("client");
    Decision first = both(k);
    assertThat(first.allowed()).isTrue();
    assertThat(first.violated()).isEmpty();
    assertThat(first.retryAfter()).isZero();
    assertThat(first.retryAfterSeconds()).isZero();
    // small 9/10 left (0.1 used), large 99/100 (0.01 used).
    assertThat(first.mostConstraining().policy()).isEqualTo(small);
    acquire(large, k, 95);
    Decision later = both(k);
    // small 8/10 (0.2 used), large 3/100 (0.97 used).
    assertThat(later.mostConstraining().policy()).isEqualTo(large);
    assertThat(later.mostConstraining().remaining()).isEqualTo(3);
  }

  @Test
  @DisplayName("allowed with equal shares: the longer reset wins")
  void tieBrokenByLongerReset() {
    PartitionKey k = key("client");
    QuotaPolicy hourly = policy("hourly", 10, seconds(3600), Algorithm.FIXED_WINDOW);
    QuotaPolicy minutely = policy("minutely", 10, seconds(60), Algorithm.FIXED_WINDOW);
    Decision d = limiter.acquire(List.of(Acquisition.of(minutely, k), Acquisition.of(hourly, k)));
    assertThat(d.outcomes()).extracting(PolicyOutcome::remaining).containsExactly(9L, 9L);
    assertThat(d.mostConstraining().policy()).isEqualTo(hourly);
  }

  @Test
  @DisplayName("refused by two: violated() lists both in order, Retry-After and mostConstraining are the longest wait")
  void longestRetryWhenRefused() {
    PartitionKey k = key("client");
    acquire(small, k, 10);
    acquire(large, k, 100);
    at(seconds(600));
    Decision d = both(k);
    assertThat(d.allowed()).isFalse();
    assertThat(d.violated()).extracting(PolicyOutcome::policy).containsExactly(large);
    at(seconds(3600 - 60));
    acquire(small, k, 10);
    Decision twice = limiter.acquire(List.of(Acquisition.of(large, k), Acquisition.of(small, k)));
    assertThat(twice.violated()).extracting(PolicyOutcome::policy).containsExactly(large, small);
    assertThat(twice.outcomes().get(0).retryAfter()).isEqualTo(seconds(60));
    assertThat(twice.outcomes().get(1).retryAfter()).isEqualTo(seconds(6));
    assertThat(twice.retryAfter()).isEqualTo(seconds(60));
    assertThat(twice.retryAfterSeconds()).isEqualTo(60);
    assertThat(twice.mostConstraining()).isSameAs(twice.outcomes().get(0));
    Decision reversed = both(k);
    assertThat(reversed.violated()).extracting(PolicyOutcome::policy).containsExactly(small, large);
    assertThat(reversed.mostConstraining().policy()).as("not simply the last violated").isEqualTo(large);
  }

  @Test
  @DisplayName("refused by one of two: the other is reported allowed, only the violated one counts for Retry-After")
  void onlyViolatedPoliciesCount() {
    PartitionKey k = key("client");
    acquire(small, k, 10);
    Decision d = both(k);
    assertThat(d.allowed()).isFalse();
    assertThat(d.violated()).extracting(PolicyOutcome::policy).containsExactly(small);
    assertThat(d.retryAfter()).isEqualTo(seconds(6));
    assertThat(d.mostConstraining().policy()).isEqualTo(small);
    assertThat(d.outcomes().get(1).allowed()).isTrue();
    assertThat(d.outcomes().get(1).retryAfter()).isZero();
  }
}
