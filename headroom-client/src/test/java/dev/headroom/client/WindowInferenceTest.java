package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link WindowInference}, driven on a fake clock by headroom-core limiters that answer in GitHub's
 * form: {@code X-RateLimit-Reset} in epoch seconds rounded up, read against a {@code Date} truncated
 * to the second (draft-ietf-httpapi-ratelimit-headers-09, "RateLimit header fields currently used
 * on the web"): {@code t = reset - Date}, whole seconds, up to two seconds late. No window is
 * stated; the client sends one request at a time, each decided 5 ms after it is sent and answered
 * 5 ms later, as soon as the limiter allows it.
 */
class WindowInferenceTest {

  private static final int QUOTA = 10;
  private static final Duration WINDOW = Duration.ofSeconds(5);
  private static final long MS = 1_000_000L;

  /** A token bucket's window is learnt from above: the refill credited is never faster than the server's. */
  @ParameterizedTest(name = "first request {0} ms into a second")
  @ValueSource(ints = {0, 300, 700, 950})
  void aTokenBucketIsRecognisedWithAWindowNoShorterThanItsOwn(int phaseMillis) {
    TrackedBudget e = drive(Algorithm.TOKEN_BUCKET, phaseMillis, 30);
    assertThat(e.kind()).isEqualTo(ObservedAlgorithm.Kind.TOKEN_BUCKET);
    assertThat(e.inferred.bucketWindow()).isBetween(WINDOW.toNanos(), WINDOW.toNanos() * 11 / 10);
  }

  /**
   * A sliding window's {@code t} (time until its estimate is empty, up to two windows) and the
   * units it gives back rule out the token bucket, and every whole-second window but its own.
   */
  @ParameterizedTest(name = "first request {0} ms into a second")
  @ValueSource(ints = {0, 300, 700, 950})
  void aSlidingWindowIsModelledWithItsOwnWindowOnly(int phaseMillis) {
    TrackedBudget e = drive(Algorithm.SLIDING_WINDOW, phaseMillis, 40);
    assertThat(e.kind()).isEqualTo(ObservedAlgorithm.Kind.REFILLING);
    assertThat(e.inferred.bucketOnly()).isFalse();
    assertThat(e.inferred.windows()).containsExactly(WINDOW.toSeconds());
  }

  /** A fixed window needs no window (its reset says when the units come back); it is recognised as before. */
  @Test
  void aFixedWindowIsStillAFixedWindow() {
    TrackedBudget e = drive(Algorithm.FIXED_WINDOW, 300, 30);
    assertThat(e.kind()).isEqualTo(ObservedAlgorithm.Kind.FIXED_WINDOW);
  }

  /** Until the reports bound the window, nothing is inferred and the client spends as it did without it. */
  @Test
  void nothingIsSaidBeforeTheReportsBoundTheWindow() {
    WindowInference inference = new WindowInference(QUOTA);
    SlidingWindowModel base = new SlidingWindowModel(true, 0, -1);
    base.admitted(1, 0);
    base.reported(1, 0, 10 * MS, QUOTA - 1, 5_000 * MS, Long.MIN_VALUE, ResetMeaning.UNTIL_RESET);
    inference.report(QUOTA - 1, 0, 10 * MS, 5_000 * MS, Long.MIN_VALUE, 1, 1, base);
    assertThat(inference.nextAllowed(10 * MS, 0, 0, 10 * MS)).isEqualTo(-1);
    assertThat(inference.bucketOnly()).isFalse();
  }

  /** A refusal ends the inference: the premise (this client alone spends the budget) failed. */
  @Test
  void aRefusalEndsTheInference() {
    TrackedBudget e = drive(Algorithm.TOKEN_BUCKET, 300, 30);
    e.received(1_000, 0, 0, true);
    assertThat(e.kind()).isEqualTo(ObservedAlgorithm.Kind.REFILLING);
    assertThat(e.nextAllowed(0, 0)).isEqualTo(-1);
  }

  /** Numbers from the wire at the ends of their ranges never overflow into a wrong answer or an exception. */
  @Test
  void hugeNumbersSaturate() {
    WindowInference inference = new WindowInference(Long.MAX_VALUE);
    SlidingWindowModel base = new SlidingWindowModel(true, 0, -1);
    long t = Long.MAX_VALUE;
    for (int i = 1; i <= 5; i++) {
      base.admitted(i, i);
      base.reported(i, i, i + 1, Long.MAX_VALUE - i, t, Long.MIN_VALUE, ResetMeaning.UNTIL_RESET);
      inference.report(Long.MAX_VALUE - i, i, i + 1, t, Long.MIN_VALUE, i, Long.MAX_VALUE, base);
      inference.report(0, Long.MIN_VALUE, Long.MAX_VALUE, 0, Long.MIN_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, base);
    }
    assertThat(inference.nextAllowed(Long.MAX_VALUE, 0, 0, Long.MAX_VALUE)).isIn(-1L, Long.MAX_VALUE);
    assertThat(inference.bucketWindow()).isPositive();
  }

  /**
   * Sends {@code requests} requests one at a time to {@code algorithm} (10 per 5 s), each when the
   * limiter allows it, and records every answer in a budget as {@link BudgetTracker} does.
   */
  private static TrackedBudget drive(Algorithm algorithm, int phaseMillis, int requests) {
    ManualTicker ticker = ManualTicker.at(Instant.ofEpochSecond(1_800_000_000L).plusMillis(phaseMillis));
    QuotaPolicy policy = Peers.policy(QUOTA, WINDOW, algorithm);
    QuotaLimiter limiter = Peers.limiter(ticker);
    TrackedBudget e = new TrackedBudget("default", null, null);
    e.quota = QUOTA;
    e.sliding = new SlidingWindowModel(true, ticker.read(), -1);
    for (int seq = 1; seq <= requests; seq++) {
      long admitted = ticker.read();
      ticker.advanceNanos(5 * MS);
      Decision d = limiter.acquire(policy, PartitionKey.of("client"));
      while (!d.allowed()) {
        // Not sent: the client would have waited this long.
        ticker.advance(d.retryAfter());
        admitted = ticker.read() - 5 * MS;
        d = limiter.acquire(policy, PartitionKey.of("client"));
      }
      long decided = ticker.read();
      PolicyOutcome o = d.outcomes().get(0);
      long epochReset = Math.floorDiv(decided + o.reset().toNanos() - 1, 1_000_000_000L) + 1;
      long t = (epochReset - Math.floorDiv(decided, 1_000_000_000L)) * 1_000_000_000L;
      ticker.advanceNanos(5 * MS);
      long received = ticker.read();
      e.admitted(seq, admitted);
      e.received(seq, admitted, received, false);
      e.reported(seq, admitted, received, o.remaining(), t, Long.MIN_VALUE, seq, seq, true, ResetMeaning.UNTIL_RESET);
      e.learn(o.remaining(), admitted, received, t, Long.MIN_VALUE, seq - 1, seq - 1, true, 0);
      e.resetAt = received + t;
      e.remaining = o.remaining();
    }
    return e;
  }
}
