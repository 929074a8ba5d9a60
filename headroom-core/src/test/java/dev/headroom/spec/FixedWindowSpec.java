package dev.headroom.spec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The fixed window counter, as documented on {@code dev.headroom.internal.FixedWindow}: windows of
 * {@code w} aligned to the Unix epoch, an exact counter per window, {@code r = q - count},
 * {@code t} and Retry-After the end of the window (draft-ietf-httpapi-ratelimit-headers-09
 * sections 4.1.1 and 4.1.2).
 */
public abstract class FixedWindowSpec extends StoreSpecification {

  private final QuotaPolicy perMinute = policy("per-minute", 100, seconds(60), Algorithm.FIXED_WINDOW);

  @Test
  @DisplayName("FixedWindow worked numbers: q=100, w=60s, full at :50, the 101st waits 10 s")
  void workedNumbers() {
    PartitionKey k = key("client");
    at(seconds(50));
    for (int i = 1; i <= 100; i++) {
      PolicyOutcome o = acquire(perMinute, k);
      assertThat(o.allowed()).as("request %d", i).isTrue();
      assertThat(o.remaining()).as("r after request %d", i).isEqualTo(100 - i);
      assertThat(o.reset()).as("t after request %d", i).isEqualTo(seconds(10));
      assertThat(o.resetSeconds()).isEqualTo(10);
      assertThat(o.retryAfter()).isZero();
    }
    PolicyOutcome refused = acquire(perMinute, k);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.exceedsQuota()).isFalse();
    assertThat(refused.remaining()).isZero();
    assertThat(refused.reset()).isEqualTo(seconds(10));
    assertThat(refused.retryAfter()).isEqualTo(seconds(10));
    assertThat(refused.retryAfterSeconds()).isEqualTo(10);
  }

  @Test
  @DisplayName("windows are aligned to the epoch: a key first seen mid-window resets at the window's end, not w later")
  void windowsAlignToTheEpoch() {
    PartitionKey k = key("late-comer");
    at(seconds(59).plus(millis(999)));
    PolicyOutcome first = acquire(perMinute, k);
    assertThat(first.reset()).isEqualTo(millis(1));
    assertThat(first.resetSeconds()).as("t rounds up").isEqualTo(1);
    assertThat(admit(perMinute, k, 200)).isEqualTo(99);
    at(seconds(60));
    PolicyOutcome next = acquire(perMinute, k);
    assertThat(next.allowed()).isTrue();
    assertThat(next.remaining()).isEqualTo(99);
    assertThat(next.reset()).isEqualTo(seconds(60));
  }

  @Test
  @DisplayName("window rollover: the counter starts from zero in each new window; one nanosecond before, it does not")
  void rollover() {
    PartitionKey k = key("client");
    assertThat(admit(perMinute, k, 150)).isEqualTo(100);
    at(seconds(60).minusNanos(1));
    PolicyOutcome lastNano = acquire(perMinute, k);
    assertThat(lastNano.allowed()).isFalse();
    assertThat(lastNano.retryAfter()).isEqualTo(nanos(1));
    assertThat(lastNano.retryAfterSeconds()).as("Retry-After rounds up").isEqualTo(1);
    advanceNanos(1);
    assertThat(admit(perMinute, k, 150)).isEqualTo(100);
    at(seconds(3600));
    assertThat(peek(perMinute, k).remaining()).as("many windows later").isEqualTo(100);
  }

  @Test
  @DisplayName("Retry-After in seconds rounds up: refused at :50.5 waits 9.5 s, sent as 10")
  void retryAfterRoundsUp() {
    PartitionKey k = key("client");
    at(seconds(50).plus(millis(500)));
    admit(perMinute, k, 100);
    PolicyOutcome refused = acquire(perMinute, k);
    assertThat(refused.retryAfter()).isEqualTo(millis(9500));
    assertThat(refused.retryAfterSeconds()).isEqualTo(10);
    assertThat(refused.resetSeconds()).isEqualTo(10);
  }

  @Test
  @DisplayName("up to 2q pass around a window boundary, never more than q in one window (documented)")
  void boundaryBurst() {
    PartitionKey k = key("client");
    at(seconds(59));
    assertThat(admit(perMinute, k, 150)).isEqualTo(100);
    at(seconds(60));
    assertThat(admit(perMinute, k, 150)).isEqualTo(100);
  }

  @Test
  @DisplayName("cost-weighted: q=10, costs 4, 4 allowed (r=6, r=2); 4 refused with r=2; 2 allowed (r=0)")
  void costWeighted() {
    QuotaPolicy p = policy("bytes", 10, seconds(60), Algorithm.FIXED_WINDOW);
    PartitionKey k = key("client");
    assertThat(acquire(p, k, 4).remaining()).isEqualTo(6);
    assertThat(acquire(p, k, 4).remaining()).isEqualTo(2);
    PolicyOutcome refused = acquire(p, k, 4);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.remaining()).as("nothing consumed by a refusal").isEqualTo(2);
    assertThat(refused.retryAfter()).isEqualTo(seconds(60));
    PolicyOutcome last = acquire(p, k, 2);
    assertThat(last.allowed()).isTrue();
    assertThat(last.remaining()).isZero();
  }

  @Test
  @DisplayName("partitions count apart: one key's exhaustion does not touch another's")
  void partitionsAreIndependent() {
    assertThat(admit(perMinute, key("a"), 150)).isEqualTo(100);
    assertThat(admit(perMinute, key("b"), 150)).isEqualTo(100);
  }

  @Test
  @DisplayName("debt: a charge of 3q at the window start is paid back q per window; requests wait three windows")
  void debtPaidBackOneQuotaPerWindow() {
    QuotaPolicy p = policy("uploads", 10, seconds(60), Algorithm.FIXED_WINDOW);
    PartitionKey k = key("client");
    limiter.charge(p, k, 30);
    PolicyOutcome refused = acquire(p, k);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.remaining()).isZero();
    assertThat(refused.reset()).as("t: the window in which the debt is paid ends").isEqualTo(seconds(180));
    assertThat(refused.retryAfter()).as("count 30 + 1 fits only once 21 units are paid: third window")
        .isEqualTo(seconds(180));
    at(seconds(120));
    PolicyOutcome stillInDebt = acquire(p, k);
    assertThat(stillInDebt.allowed()).isFalse();
    assertThat(stillInDebt.retryAfter()).isEqualTo(seconds(60));
    at(seconds(180));
    PolicyOutcome paid = acquire(p, k);
    assertThat(paid.allowed()).isTrue();
    assertThat(paid.remaining()).isEqualTo(9);
  }

  @Test
  @DisplayName("debt: 25 units on q=10 leave 5 in the third window; t counts until the quota is whole")
  void partialDebt() {
    QuotaPolicy p = policy("uploads", 10, seconds(60), Algorithm.FIXED_WINDOW);
    PartitionKey k = key("client");
    limiter.charge(p, k, 25);
    PolicyOutcome refused = acquire(p, k, 6);
    assertThat(refused.reset()).isEqualTo(seconds(180));
    assertThat(refused.retryAfter()).as("25 + 6 - 10 = 21 to pay: three windows").isEqualTo(seconds(180));
    PolicyOutcome small = acquire(p, k, 5);
    assertThat(small.retryAfter()).as("25 + 5 - 10 = 20 to pay: two windows").isEqualTo(seconds(120));
    at(seconds(120));
    assertThat(peek(p, k).remaining()).isEqualTo(5);
    assertThat(acquire(p, k, 6).allowed()).isFalse();
    assertThat(acquire(p, k, 5).allowed()).isTrue();
  }
}
