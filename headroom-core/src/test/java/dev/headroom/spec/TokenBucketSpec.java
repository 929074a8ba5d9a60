package dev.headroom.spec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The token bucket kept as GCRA, as documented on {@code dev.headroom.internal.Gcra}: emission
 * interval {@code T = ceil(w / q)}, tolerance {@code tau = q * T}, {@code r} the tokens in the
 * bucket, {@code t} the time until it is full, Retry-After the time until {@code n} tokens are
 * there (draft-ietf-httpapi-ratelimit-headers-09 sections 4.1.1 and 4.1.2).
 */
public abstract class TokenBucketSpec extends StoreSpecification {

  /** q = 10, w = 60 s: T = 6 s, tau = 60 s. */
  private final QuotaPolicy bucket = policy("bucket", 10, seconds(60), Algorithm.TOKEN_BUCKET);

  @Test
  @DisplayName("Gcra worked numbers: burst of exactly q=10, r counts down, draft-09 t grows by T=6s, draft-10 t stays 6 s, the 11th waits 6 s")
  void burstOfExactlyQ() {
    PartitionKey k = key("client");
    for (int i = 1; i <= 10; i++) {
      PolicyOutcome o = acquire(bucket, k);
      assertThat(o.allowed()).as("request %d", i).isTrue();
      assertThat(o.remaining()).as("r after request %d", i).isEqualTo(10 - i);
      assertThat(o.reset()).as("draft-09 t after request %d", i).isEqualTo(seconds(6L * i));
      assertThat(o.nextQuota()).as("draft-10 t after request %d: the next token", i).isEqualTo(seconds(6));
    }
    PolicyOutcome refused = acquire(bucket, k);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.remaining()).isZero();
    assertThat(refused.reset()).isEqualTo(seconds(60));
    assertThat(refused.nextQuota()).isEqualTo(seconds(6));
    assertThat(refused.retryAfter()).as("one token's refill").isEqualTo(seconds(6));
    assertThat(refused.retryAfterSeconds()).isEqualTo(6);
  }

  @Test
  @DisplayName("refill rate: one token every T = 6 s, not a nanosecond sooner")
  void refillRate() {
    PartitionKey k = key("client");
    assertThat(admit(bucket, k, 10)).isEqualTo(10);
    advance(seconds(6).minusNanos(1));
    PolicyOutcome early = acquire(bucket, k);
    assertThat(early.allowed()).isFalse();
    assertThat(early.retryAfter()).isEqualTo(nanos(1));
    assertThat(early.retryAfterSeconds()).isEqualTo(1);
    advanceNanos(1);
    assertThat(acquire(bucket, k).allowed()).isTrue();
    assertThat(acquire(bucket, k).allowed()).isFalse();
    // Steady state: one request per T is always allowed, for as long as it lasts.
    for (int i = 0; i < 100; i++) {
      advance(seconds(6));
      PolicyOutcome o = acquire(bucket, k);
      assertThat(o.allowed()).isTrue();
      assertThat(o.remaining()).isZero();
      assertThat(acquire(bucket, k).allowed()).isFalse();
    }
  }

  @Test
  @DisplayName("remaining and reset mid-refill: 13 s after emptying, r = floor(13/6) = 2 and t = 47 s")
  void remainingAndResetMidRefill() {
    PartitionKey k = key("client");
    admit(bucket, k, 10);
    advance(seconds(13));
    PolicyOutcome now = peek(bucket, k);
    assertThat(now.allowed()).isTrue();
    assertThat(now.remaining()).isEqualTo(2);
    assertThat(now.reset()).isEqualTo(seconds(47));
    assertThat(admit(bucket, k, 5)).isEqualTo(2);
  }

  @Test
  @DisplayName("no accumulation beyond q: after an idle hour the burst is still exactly q")
  void idleDoesNotAccumulate() {
    PartitionKey k = key("client");
    admit(bucket, k, 3);
    advance(seconds(3600));
    PolicyOutcome full = peek(bucket, k);
    assertThat(full.remaining()).isEqualTo(10);
    assertThat(full.reset()).as("a full bucket resets in 0").isZero();
    assertThat(admit(bucket, k, 20)).isEqualTo(10);
  }

  @Test
  @DisplayName("a fresh key is a full bucket: r = q, t = 0")
  void freshKey() {
    PolicyOutcome o = peek(bucket, key("new"));
    assertThat(o.allowed()).isTrue();
    assertThat(o.remaining()).isEqualTo(10);
    assertThat(o.reset()).isZero();
    assertThat(o.resetSeconds()).isZero();
  }

  @Test
  @DisplayName("cost-weighted: cost 4 moves TAT 24 s (r=6); cost 7 then waits 24 + 42 - 60 = 6 s")
  void costWeighted() {
    PartitionKey k = key("client");
    PolicyOutcome four = acquire(bucket, k, 4);
    assertThat(four.remaining()).isEqualTo(6);
    assertThat(four.reset()).isEqualTo(seconds(24));
    PolicyOutcome seven = acquire(bucket, k, 7);
    assertThat(seven.allowed()).isFalse();
    assertThat(seven.remaining()).isEqualTo(6);
    assertThat(seven.retryAfter()).isEqualTo(seconds(6));
    advance(seven.retryAfter());
    PolicyOutcome later = acquire(bucket, k, 7);
    assertThat(later.allowed()).isTrue();
    assertThat(later.remaining()).isZero();
    assertThat(later.reset()).isEqualTo(seconds(60));
  }

  @Test
  @DisplayName("T rounds up when q does not divide w: burst still exactly q, rate never above q per w")
  void intervalRoundsUp() {
    QuotaPolicy p = policy("thirds", 3, seconds(1), Algorithm.TOKEN_BUCKET);
    PartitionKey k = key("client");
    assertThat(admit(p, k, 10)).isEqualTo(3);
    PolicyOutcome refused = acquire(p, k);
    // T = ceil(1e9 / 3) = 333_333_334 ns; tau = 1_000_000_002 ns.
    assertThat(refused.retryAfter()).isEqualTo(nanos(333_333_334));
    assertThat(refused.reset()).isEqualTo(nanos(1_000_000_002));
    advance(seconds(1));
    assertThat(admit(p, k, 10)).as("after exactly w, only q-1 tokens: the rate is just below q per w")
        .isEqualTo(2);
  }

  @Test
  @DisplayName("debt: a charge of 3q puts TAT 180 s ahead; requests wait 180 + 6 - 60 = 126 s")
  void debt() {
    PartitionKey k = key("client");
    limiter.charge(bucket, k, 30);
    PolicyOutcome refused = acquire(bucket, k);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.remaining()).isZero();
    assertThat(refused.reset()).isEqualTo(seconds(180));
    assertThat(refused.retryAfter()).isEqualTo(seconds(126));
    advance(seconds(126).minusNanos(1));
    assertThat(acquire(bucket, k).allowed()).isFalse();
    advanceNanos(1);
    PolicyOutcome allowed = acquire(bucket, k);
    assertThat(allowed.allowed()).isTrue();
    assertThat(allowed.remaining()).isZero();
  }
}
