package dev.headroom.spec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The two meanings of {@code t} (section 4.1.2 of each draft) on the same scenarios:
 * draft-ietf-httpapi-ratelimit-headers-09's "until the quota resets" ({@link PolicyOutcome#reset()})
 * and draft-ietf-httpapi-ratelimit-headers-10's and -11's "until additional quota is made available"
 * ({@link PolicyOutcome#nextQuota()}, the {@code t} of the default {@code ietf} dialect), with the
 * worked numbers of each algorithm's class comment ({@code dev.headroom.internal}). Every store
 * says the same numbers, to the nanosecond.
 */
public abstract class NextQuotaSpec extends StoreSpecification {

  /** The sliding window of {@code SlidingWindow}'s worked numbers: 100 a minute. */
  private final QuotaPolicy perMinute = policy("sliding", 100, seconds(60), Algorithm.SLIDING_WINDOW);

  /** A key with 80 units of {@link #perMinute} in the first window, the clock {@code into} the second. */
  private PartitionKey eightyBefore(Duration into) {
    PartitionKey k = key("client");
    acquire(perMinute, k, 80);
    at(seconds(60).plus(into));
    return k;
  }

  @Test
  @DisplayName("token bucket, 5 per 10 s, two requests: draft-09 t=4 (full again), draft-10 t=2 (next token)")
  void tokenBucketFivePerTen() {
    QuotaPolicy p = policy("bucket", 5, seconds(10), Algorithm.TOKEN_BUCKET);
    PartitionKey k = key("client");
    acquire(p, k);
    PolicyOutcome second = acquire(p, k);
    assertThat(second.remaining()).isEqualTo(3);
    assertThat(second.resetSeconds()).isEqualTo(4);
    assertThat(second.nextQuotaSeconds()).isEqualTo(2);
    advance(seconds(1));
    PolicyOutcome later = peek(p, k);
    assertThat(later.reset()).isEqualTo(seconds(3));
    assertThat(later.nextQuota()).as("the token due at 2 s is a second away").isEqualTo(seconds(1));
  }

  @Test
  @DisplayName("token bucket, 2 a minute: r=0 with t=60 or t=30 on the 200, then Retry-After 30 with t 30 in both")
  void tokenBucketTwoAMinute() {
    QuotaPolicy p = policy("starter", 2, seconds(60), Algorithm.TOKEN_BUCKET);
    PartitionKey k = key("client");
    acquire(p, k);
    PolicyOutcome second = acquire(p, k);
    assertThat(second.remaining()).isZero();
    assertThat(second.resetSeconds()).isEqualTo(60);
    assertThat(second.nextQuotaSeconds()).isEqualTo(30);
    PolicyOutcome refused = acquire(p, k);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.retryAfterSeconds()).isEqualTo(30);
    assertThat(refused.nextQuotaSeconds()).isEqualTo(30);
  }

  @Test
  @DisplayName("token bucket: a full bucket has no more quota to come (t=0 in both); debt waits out the debt plus one token")
  void tokenBucketFullAndInDebt() {
    QuotaPolicy p = policy("bucket", 10, seconds(60), Algorithm.TOKEN_BUCKET);
    PartitionKey k = key("client");
    PolicyOutcome full = peek(p, k);
    assertThat(full.reset()).isZero();
    assertThat(full.nextQuota()).isZero();
    limiter.charge(p, k, 30); // TAT = 180 s: 120 s of debt beyond the tolerance
    PolicyOutcome debt = peek(p, k);
    assertThat(debt.remaining()).isZero();
    assertThat(debt.reset()).isEqualTo(seconds(180));
    assertThat(debt.nextQuota()).as("the debt (120 s), then one token (6 s)").isEqualTo(seconds(126));
  }

  @Test
  @DisplayName("sliding window, 80 before, 30 now, 15 s in: draft-09 t = 45 s + 58 s + 1 ns, draft-10 t = 1 ns")
  void slidingWindowWorkedNumbers() {
    PolicyOutcome thirty = acquire(perMinute, eightyBefore(seconds(15)), 30);
    assertThat(thirty.remaining()).isEqualTo(10);
    assertThat(thirty.reset()).isEqualTo(seconds(45 + 58).plusNanos(1));
    assertThat(thirty.nextQuota()).as("floor(80 * (60 s - e) / 60 s) drops from 60 to 59 just past e = 15 s")
        .isEqualTo(nanos(1));
    assertThat(thirty.nextQuotaSeconds()).isEqualTo(1);
  }

  @Test
  @DisplayName("sliding window, 10 per 10 s, all 10 at 4 s: draft-09 t = 15 s, draft-10 t = 6 s (the next window)")
  void slidingWindowExhausted() {
    QuotaPolicy p = policy("sliding-10", 10, seconds(10), Algorithm.SLIDING_WINDOW);
    PartitionKey k = key("client");
    at(seconds(4));
    PolicyOutcome all = acquire(p, k, 10);
    assertThat(all.remaining()).isZero();
    assertThat(all.reset()).isEqualTo(seconds(6 + 9).plusNanos(1));
    assertThat(all.nextQuota()).isEqualTo(seconds(6).plusNanos(1));
    PolicyOutcome refused = acquire(p, k);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.nextQuota()).isEqualTo(seconds(6).plusNanos(1));
    assertThat(refused.retryAfter()).as("one unit fits as soon as the estimate is 9").isEqualTo(refused.nextQuota());
    at(seconds(10).plusNanos(1));
    PolicyOutcome next = peek(p, k);
    assertThat(next.remaining()).isEqualTo(1);
    assertThat(next.nextQuota()).as("floor(10 * (10 s - e) / 10 s) reaches 8 just past e = 1 s").isEqualTo(seconds(1));
  }

  @Test
  @DisplayName("sliding window, 80 before, nothing now, 20 s in: draft-09 t = 39.25 s + 1 ns, draft-10 t = 0.25 s + 1 ns")
  void slidingWindowPreviousDecaying() {
    PartitionKey k = eightyBefore(seconds(20));
    PolicyOutcome peeked = peek(perMinute, k);
    assertThat(peeked.remaining()).as("floor(80 * 40 / 60) = 53 counted").isEqualTo(47);
    assertThat(peeked.reset()).as("floor(80 * (60 s - e) / 60 s) is 0 past e = 59.25 s").isEqualTo(millis(39_250).plusNanos(1));
    assertThat(peeked.nextQuota()).as("and 52 past e = 20.25 s").isEqualTo(millis(250).plusNanos(1));
    PolicyOutcome refused = acquire(perMinute, k, 48);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.nextQuota()).isEqualTo(peeked.nextQuota());
    assertThat(refused.retryAfter()).as("48 units fit once the weight is 52, the same instant").isEqualTo(peeked.nextQuota());
    advance(millis(250));
    assertThat(peek(perMinute, k).remaining()).as("one nanosecond early").isEqualTo(47);
    advanceNanos(1);
    assertThat(peek(perMinute, k).remaining()).isEqualTo(48);
  }

  @Test
  @DisplayName("sliding window in debt of 3q: draft-09 waits for the estimate to be 0, draft-10 for it to be q - 1")
  void slidingWindowInDebt() {
    QuotaPolicy p = policy("sliding-10", 10, seconds(10), Algorithm.SLIDING_WINDOW);
    PartitionKey k = key("client");
    limiter.charge(p, k, 30);
    PolicyOutcome debt = peek(p, k);
    assertThat(debt.remaining()).isZero();
    assertThat(debt.reset()).as("floor(30 * (10 s - e) / 10 s) is 0 past e = 9.666... s of the next window")
        .isEqualTo(nanos(19_666_666_667L));
    assertThat(debt.nextQuota()).as("and 9 past e = 6.666... s of the next window").isEqualTo(nanos(16_666_666_667L));
    PolicyOutcome refused = acquire(p, k);
    assertThat(refused.nextQuota()).isEqualTo(debt.nextQuota());
    assertThat(refused.retryAfter()).isEqualTo(debt.nextQuota());
  }

  @Test
  @DisplayName("sliding window refused by another policy: t is the state before the request in both meanings")
  void slidingWindowNotConsumed() {
    QuotaPolicy fixed = policy("fixed", 1, seconds(3600), Algorithm.FIXED_WINDOW);
    PartitionKey other = key("other"); // another partition: in Redis Cluster, likely another slot
    acquire(fixed, other);
    PartitionKey k = eightyBefore(seconds(20));
    Decision d = limiter.acquire(List.of(Acquisition.of(perMinute, k, 40), Acquisition.of(fixed, other, 1)));
    assertThat(d.allowed()).isFalse();
    PolicyOutcome s = d.outcomes().get(0);
    assertThat(s.allowed()).isTrue();
    assertThat(s.remaining()).as("nothing consumed: 47 left").isEqualTo(47);
    assertThat(s.reset()).isEqualTo(millis(39_250).plusNanos(1));
    assertThat(s.nextQuota()).isEqualTo(millis(250).plusNanos(1));
  }

  @Test
  @DisplayName("fixed window: both meanings agree out of debt; in debt of 2.5q draft-10 waits one window less")
  void fixedWindow() {
    QuotaPolicy p = policy("fixed", 10, seconds(10), Algorithm.FIXED_WINDOW);
    PartitionKey k = key("client");
    at(seconds(3));
    PolicyOutcome one = acquire(p, k);
    assertThat(one.reset()).isEqualTo(seconds(7));
    assertThat(one.nextQuota()).isEqualTo(seconds(7));
    limiter.charge(p, k, 24); // 25 counted: 2.5 windows' worth
    PolicyOutcome debt = peek(p, k);
    assertThat(debt.reset()).as("the third window ends").isEqualTo(seconds(27));
    assertThat(debt.nextQuota()).as("the second window ends; the third starts with 5 available").isEqualTo(seconds(17));
    at(seconds(20));
    assertThat(peek(p, k).remaining()).isEqualTo(5);
  }

  @Test
  @DisplayName("concurrency: the first lease to come back is both meanings")
  void concurrency() {
    QuotaPolicy p = QuotaPolicy.builder("uploads").quota(1).window(seconds(60)).unit(QuotaUnit.CONCURRENT_REQUESTS).algorithm(Algorithm.CONCURRENCY)
        .leaseTimeout(seconds(30)).build();
    PartitionKey k = key("client");
    PolicyOutcome held = acquire(p, k);
    assertThat(held.nextQuota()).isEqualTo(held.reset()).isPositive();
  }
}
