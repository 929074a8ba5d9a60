package dev.headroom.spec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The sliding window counter, as documented on {@code dev.headroom.internal.SlidingWindow}:
 * {@code estimate = floor(previous * (w - e) / w) + count}, allowed iff {@code estimate + n <= q},
 * {@code r = q - estimate}, Retry-After the earliest instant the request fits, and the error bound
 * (draft-ietf-httpapi-ratelimit-headers-09 sections 4.1.1 and 4.1.2).
 */
public abstract class SlidingWindowSpec extends StoreSpecification {

  private final QuotaPolicy perMinute = policy("sliding", 100, seconds(60), Algorithm.SLIDING_WINDOW);
  private final QuotaPolicy tenPerTen = policy("sliding-10", 10, seconds(10), Algorithm.SLIDING_WINDOW);

  @Test
  @DisplayName("SlidingWindow worked numbers: 80 before, 30 now, 15 s in: estimate 90, 10 more allowed")
  void workedNumbers() {
    PartitionKey k = key("client");
    assertThat(acquire(perMinute, k, 80).remaining()).isEqualTo(20);
    at(seconds(75));
    PolicyOutcome before = peek(perMinute, k);
    assertThat(before.remaining()).as("floor(80 * 45 / 60) = 60 counted").isEqualTo(40);
    assertThat(before.reset()).as("only the previous window counts: floor(80 * (60 - e) / 60) is 0 past e = 59.25 s")
        .isEqualTo(millis(44_250).plusNanos(1));
    PolicyOutcome thirty = acquire(perMinute, k, 30);
    assertThat(thirty.allowed()).isTrue();
    assertThat(thirty.remaining()).isEqualTo(10);
    assertThat(thirty.reset()).as("this window's 30 weigh nothing past 58 s into the next window")
        .isEqualTo(seconds(45 + 58).plusNanos(1));
    assertThat(acquire(perMinute, k, 11).allowed()).isFalse();
    PolicyOutcome ten = acquire(perMinute, k, 10);
    assertThat(ten.allowed()).isTrue();
    assertThat(ten.remaining()).isZero();
  }

  @Test
  @DisplayName("t is when the estimate is zero again: one request 4 s into a window weighs nothing 1 ns into the next")
  void resetOfASingleRequest() {
    PartitionKey k = key("client");
    at(seconds(4));
    PolicyOutcome one = acquire(tenPerTen, k);
    assertThat(one.remaining()).isEqualTo(9);
    assertThat(one.reset()).isEqualTo(seconds(6).plusNanos(1));
    assertThat(one.resetSeconds()).isEqualTo(7);
    at(seconds(10).plusNanos(1));
    PolicyOutcome whole = peek(tenPerTen, k);
    assertThat(whole.remaining()).isEqualTo(10);
    assertThat(whole.reset()).isZero();
  }

  @Test
  @DisplayName("Retry-After is the earliest instant the previous window has decayed enough: 2.25 s + 1 ns")
  void retryAfterWithinTheWindow() {
    PartitionKey k = key("client");
    acquire(perMinute, k, 80);
    at(seconds(75));
    acquire(perMinute, k, 30);
    // 14 more fit once floor(80 * (60 - e) / 60) <= 56, that is for e > 17.25 s.
    PolicyOutcome refused = acquire(perMinute, k, 14);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.remaining()).isEqualTo(10);
    assertThat(refused.retryAfter()).isEqualTo(millis(2250).plusNanos(1));
    assertThat(refused.retryAfterSeconds()).isEqualTo(3);
    advance(millis(2250));
    assertThat(acquire(perMinute, k, 14).allowed()).as("one nanosecond early").isFalse();
    advanceNanos(1);
    PolicyOutcome allowed = acquire(perMinute, k, 14);
    assertThat(allowed.allowed()).isTrue();
    assertThat(allowed.remaining()).isZero();
  }

  @Test
  @DisplayName("rollover: a full window becomes the previous one; the next request waits for its weight to decay")
  void rolloverIntoTheNextWindow() {
    PartitionKey k = key("client");
    assertThat(admit(tenPerTen, k, 20)).isEqualTo(10);
    PolicyOutcome refused = acquire(tenPerTen, k);
    assertThat(refused.reset()).as("t: floor(10 * (10 s - e) / 10 s) is 0 past e = 9 s of the next window")
        .isEqualTo(seconds(19).plusNanos(1));
    // Next window, floor(10 * (10 s - e) / 10 s) <= 9 from e = 1 ns.
    assertThat(refused.retryAfter()).isEqualTo(seconds(10).plusNanos(1));
    assertThat(refused.retryAfterSeconds()).isEqualTo(11);
    at(seconds(10));
    assertThat(acquire(tenPerTen, k).allowed()).as("at the boundary the previous window weighs all").isFalse();
    advanceNanos(1);
    assertThat(acquire(tenPerTen, k).allowed()).isTrue();
    at(seconds(15));
    PolicyOutcome half = peek(tenPerTen, k);
    assertThat(half.remaining()).as("floor(10 * 5 / 10) + 1 = 6 counted").isEqualTo(4);
    at(seconds(30));
    assertThat(peek(tenPerTen, k).remaining()).as("two windows later everything is forgotten").isEqualTo(10);
    assertThat(peek(tenPerTen, k).reset()).isZero();
  }

  @Test
  @DisplayName("weighting: uniform traffic in the previous window gives the exact count of the last w seconds")
  void uniformTrafficIsExact() {
    QuotaPolicy p = policy("uniform", 60, seconds(60), Algorithm.SLIDING_WINDOW);
    PartitionKey k = key("client");
    for (int s = 0; s < 60; s++) {
      at(seconds(s));
      assertThat(acquire(p, k).allowed()).isTrue();
    }
    at(seconds(90));
    // The requests at 30..59 s are the 30 within the last 60 s.
    assertThat(peek(p, k).remaining()).isEqualTo(30);
  }

  @Test
  @DisplayName("no 2q burst at a boundary: q at the end of a window leaves nothing at the start of the next")
  void noBoundaryBurst() {
    PartitionKey k = key("client");
    at(seconds(10).minusNanos(1));
    assertThat(admit(tenPerTen, k, 20)).isEqualTo(10);
    at(seconds(10));
    assertThat(admit(tenPerTen, k, 20)).isZero();
  }

  @Test
  @DisplayName("error bound: a greedy client never gets more than q in one window nor 2q in any w seconds")
  void errorBound() {
    PartitionKey k = key("greedy");
    List<Long> admittedAt = new ArrayList<>();
    long step = 100_000_000L;
    long w = 10_000_000_000L;
    for (long t = 0; t < 6 * w; t += step) {
      at(nanos(t));
      while (acquire(tenPerTen, k).allowed()) {
        admittedAt.add(t);
      }
    }
    for (long windowStart = 0; windowStart < 6 * w; windowStart += w) {
      long from = windowStart;
      assertThat(admittedAt.stream().filter(t -> t >= from && t < from + w).count())
          .as("window at %d ns", from).isLessThanOrEqualTo(10);
    }
    for (long from = 0; from < 6 * w; from += step) {
      long start = from;
      assertThat(admittedAt.stream().filter(t -> t >= start && t < start + w).count())
          .as("any w seconds from %d ns", from).isLessThan(20);
    }
    // A greedy client is held close to q per w: between 6q and 6 * 2q over six windows.
    assertThat(admittedAt).hasSizeBetween(60, 70);
  }

  @Test
  @DisplayName("debt: count above q becomes the previous window and holds the estimate up; forgiven after two windows")
  void debt() {
    PartitionKey k = key("client");
    limiter.charge(tenPerTen, k, 30);
    PolicyOutcome refused = acquire(tenPerTen, k);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.remaining()).isZero();
    assertThat(refused.reset()).as("floor(30 * (10 s - e) / 10 s) is 0 past e = 9.666... s of the next window")
        .isEqualTo(nanos(19_666_666_667L));
    // Next window: floor(30 * (10 s - e) / 10 s) <= 9 for e > 20/3 s.
    assertThat(refused.retryAfter()).isEqualTo(nanos(10_000_000_000L + 6_666_666_667L));
    advance(refused.retryAfter().minusNanos(1));
    assertThat(acquire(tenPerTen, k).allowed()).isFalse();
    advanceNanos(1);
    assertThat(acquire(tenPerTen, k).allowed()).isTrue();
  }
}
