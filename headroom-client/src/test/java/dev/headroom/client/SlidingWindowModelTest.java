package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link SlidingWindowModel} against headroom-core's two-counter sliding window, one request at a
 * time: the model is fed each report's {@code r} and {@code t} as a client reads them
 * (draft-ietf-httpapi-ratelimit-headers-09 section 4.1.2: {@code t} in whole seconds, rounded up)
 * and every instant it names is one the server allows (never early: section 7); once three windows
 * have narrowed the phase, less than one decay interval ({@code w / q}) after the first instant the
 * server allows. (One caller paced by the model sends every unit at the same offset from the
 * server's decay points, so its reports stop narrowing the phase: measured here, 5 to 10 ms late
 * at three of the five phases, 60 and 210 ms at the other two. Four concurrent callers, decided
 * at scattered instants, narrow it further: {@link AdaptivePacingTest}.)
 */
class SlidingWindowModelTest {

  private static final long SECOND = 1_000_000_000L;
  private static final long W = 5 * SECOND;
  private static final int Q = 10;

  @ParameterizedTest(name = "first request {0} ms into the window, t {1} read as {2}")
  @MethodSource("phasesAndMeanings")
  void everyInstantNamedIsAllowedAndLessThanOneDecayLate(long phaseMillis, String sent, ResetMeaning meaning) {
    ManualTicker ticker = ManualTicker.at(Instant.ofEpochSecond(1_800_000_000L).plusMillis(phaseMillis));
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    var policy = Peers.policy(Q, Duration.ofNanos(W), Algorithm.SLIDING_WINDOW);
    SlidingWindowModel model = new SlidingWindowModel(true, ticker.read(), W);
    int admitted = 0;
    for (long seq = 1; seq <= 60; seq++) {
      long now = ticker.read();
      long at = model.nextAllowed(now, Q, W);
      if (at < 0) {
        // Nothing reported yet: one request finds out.
        at = now;
      } else {
        assertThat(at).as("request %s", seq).isGreaterThanOrEqualTo(now).isLessThan(Long.MAX_VALUE);
      }
      if (at > now && seq > 3 * Q) {
        // The server's own answer to a request now: refused with the exact wait (it keeps no state
        // for a refusal), which is the first instant it allows.
        Decision probe = limiter.acquire(policy, PartitionKey.of("client"));
        assertThat(probe.allowed()).as("request %s: a unit free before the model's instant", seq).isFalse();
        long first = now + probe.outcomes().get(0).retryAfter().toNanos();
        assertThat(at - first).as("request %s late", seq).isLessThan(W / Q);
      }
      ticker.advanceNanos(at - ticker.read());
      model.admitted(seq, at);
      Decision d = limiter.acquire(policy, PartitionKey.of("client"));
      assertThat(d.allowed()).as("request %s at %s ns", seq, at).isTrue();
      admitted++;
      PolicyOutcome o = d.outcomes().get(0);
      ticker.advanceNanos(1_000_000);
      long t = sent.equals("draft-09") ? o.resetSeconds() : o.nextQuotaSeconds();
      model.reported(seq, at, ticker.read(), o.remaining(), t * SECOND, Long.MIN_VALUE, meaning);
    }
    assertThat(admitted).isEqualTo(60);
  }

  /**
   * Every phase above with {@code t} as draft-09 sends it (until the estimate is empty) and as
   * draft-10 and -11 send it (section 4.1.2 of each: until it falls by one unit), each read as
   * what it is and as either ({@link ResetMeaning#EITHER}, a {@code RateLimit} list field).
   */
  static Stream<Arguments> phasesAndMeanings() {
    return Stream.of(0L, 300L, 1700L, 2500L, 4990L).flatMap(p -> Stream.of(
        Arguments.of(p, "draft-09", ResetMeaning.UNTIL_RESET), Arguments.of(p, "draft-09", ResetMeaning.EITHER),
        Arguments.of(p, "draft-10", ResetMeaning.UNTIL_MORE), Arguments.of(p, "draft-10", ResetMeaning.EITHER)));
  }

  /**
   * A first window shorter than the answers' spread: a burst of {@code q} requests decided just
   * before a boundary. The phases within a grid step of the burst put it on either side of the
   * boundary; the burst's own reports say which ({@code t=1} for the first unit is the rest of its
   * window, five seconds in the next), so its units are counted in the window before and the next
   * unit goes as the next window starts, not a window later.
   */
  @ParameterizedTest(name = "burst {0} ms before the boundary")
  @ValueSource(longs = {200, 100, 50, 10, 1})
  void aBurstJustBeforeABoundaryIsCountedInItsOwnWindow(long beforeMillis) {
    long boundary = 1_800_000_005L * SECOND;
    ManualTicker ticker = ManualTicker.at(Instant.ofEpochSecond(0, boundary - beforeMillis * 1_000_000));
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    var policy = Peers.policy(Q, Duration.ofNanos(W), Algorithm.SLIDING_WINDOW);
    long sent = ticker.read();
    SlidingWindowModel model = new SlidingWindowModel(true, sent, W);
    PolicyOutcome[] outcomes = new PolicyOutcome[Q];
    for (int seq = 1; seq <= Q; seq++) {
      model.admitted(seq, sent);
      Decision d = limiter.acquire(policy, PartitionKey.of("client"));
      assertThat(d.allowed()).isTrue();
      outcomes[seq - 1] = d.outcomes().get(0);
    }
    long answered = sent + 1_000_000;
    for (int seq = 1; seq <= Q; seq++) {
      PolicyOutcome o = outcomes[seq - 1];
      model.reported(seq, sent, answered, o.remaining(), o.resetSeconds() * SECOND, Long.MIN_VALUE, ResetMeaning.UNTIL_RESET);
    }
    long at = model.nextAllowed(answered, Q, W);
    // The server gives the first unit back just after the boundary, the next one w / q later.
    assertThat(at).isGreaterThan(boundary).isLessThan(boundary + W / Q);
    ticker.advanceNanos(at - ticker.read());
    assertThat(limiter.acquire(policy, PartitionKey.of("client")).allowed()).as("the unit at %s ns", at).isTrue();
  }

  /**
   * A first window of 50 ms whose burst is on the wire across its end (four callers, 1 to 20 ms
   * per request, as in {@link AdaptivePacingTest}): the server decided seven of eleven requests
   * before the boundary at 5 s, whose weight gives a unit back every 0.71 s. Under the phases
   * within the burst's flight, counted one at a time in the latest window each may be in, only the
   * four answered before the boundary weighed, and the next unit waited for their decay, a unit
   * every 1.25 s (more than {@code w / q} late). Placed together, the burst's reports (9 down to 3,
   * one each, then 3, 2, 1, 0) count the seven.
   */
  @Test
  void aBurstAcrossAShortFirstWindowsEndIsPlacedTogether() {
    long epoch = 1_800_000_000L * SECOND;
    ManualTicker ticker = ManualTicker.at(Instant.ofEpochSecond(0, epoch));
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    var policy = Peers.policy(Q, Duration.ofNanos(W), Algorithm.SLIDING_WINDOW);
    SlidingWindowModel model = new SlidingWindowModel(true, epoch + 4_950_000_000L, W);
    // seq, admitted, decided, received (milliseconds), in the order the server decided them
    long[][] burst = {
        {1, 4950, 4959, 4959}, {2, 4959, 4972, 4972}, {3, 4959, 4972, 4972}, {5, 4972, 4980, 4998},
        {6, 4972, 4982, 4991}, {4, 4972, 4991, 5018}, {7, 4980, 4998, 5018}, {8, 4991, 5018, 5018},
        {9, 4998, 5026, 5250}, {10, 5018, 5027, 5250}, {11, 5250, 5265, 5265}};
    for (long[] b : burst) {
      model.admitted(b[0], epoch + b[1] * 1_000_000);
    }
    for (long[] b : burst) {
      ticker.advanceNanos(epoch + b[2] * 1_000_000 - ticker.read());
      Decision d = limiter.acquire(policy, PartitionKey.of("client"));
      assertThat(d.allowed()).isTrue();
      PolicyOutcome o = d.outcomes().get(0);
      model.reported(b[0], epoch + b[1] * 1_000_000, epoch + b[3] * 1_000_000, o.remaining(),
          o.resetSeconds() * SECOND, Long.MIN_VALUE, ResetMeaning.UNTIL_RESET);
    }
    long now = epoch + 5_265_000_000L;
    ticker.advanceNanos(now - ticker.read());
    Decision refused = limiter.acquire(policy, PartitionKey.of("client"));
    assertThat(refused.allowed()).isFalse();
    long first = now + refused.outcomes().get(0).retryAfter().toNanos();
    long at = model.nextAllowed(now, Q, W);
    assertThat(at - first).as("late").isBetween(0L, W / Q);
    ticker.advanceNanos(at - ticker.read());
    assertThat(limiter.acquire(policy, PartitionKey.of("client")).allowed()).as("the unit at %s ns", at).isTrue();
  }

  /** A refusal turns the model off: it never names an instant again. */
  @Test
  void aDisabledModelSaysNothing() {
    SlidingWindowModel model = new SlidingWindowModel(true, 0, W);
    model.admitted(1, 0);
    model.reported(1, 0, 1_000_000, Q - 1, 5 * SECOND, Long.MIN_VALUE, ResetMeaning.UNTIL_RESET);
    assertThat(model.nextAllowed(2_000_000, Q, W)).isGreaterThanOrEqualTo(0);
    model.disable();
    assertThat(model.nextAllowed(2_000_000, Q, W)).isEqualTo(-1);
  }

  /**
   * An epoch reset read through the server's {@code Date} is at most {@code t} after the receipt,
   * wherever the request was decided: a request on the wire across a boundary whose report fits
   * only the window before it (decided 4.442 s, answered 6.404 s, {@code r=0}: the first window's
   * ten units, empty at 9.5 s) must not rule out the server's phase. The reports are those of a
   * burst of ten 4.4 s into a 5 s window of phase 0, as {@code X-RateLimit-*} gives them in
   * {@link AdaptivePacingTest} ({@code t} and the reset's lower bound on the client's clock).
   */
  @Test
  void anEpochResetBoundsFromTheReceiptAcrossABoundary() {
    SlidingWindowModel model = new SlidingWindowModel(true, 0, W).copyFor(W, WindowInference.SLACK);
    // seq, admitted, received, r, t, reset's lower bound (milliseconds)
    long[][] reports = {
        {1, 4400, 4402, 9, 2000, 4400}, {2, 4402, 4415, 8, 3987, 6402}, {3, 4402, 4421, 5, 5981, 8402},
        {4, 4402, 4422, 7, 4980, 7402}, {5, 4402, 4422, 6, 4980, 7402}, {6, 4421, 4442, 4, 5960, 8422},
        {7, 4421, 4442, 2, 5960, 8422}, {8, 4422, 4442, 3, 5960, 8422}, {10, 4442, 4447, 1, 5955, 8442},
        {9, 4442, 6404, 0, 3998, 8442}};
    for (long[] r : reports) {
      model.admitted(r[0], r[1] * 1_000_000);
    }
    for (long[] r : reports) {
      model.reported(r[0], r[1] * 1_000_000, r[2] * 1_000_000, r[3], r[4] * 1_000_000, r[5] * 1_000_000, ResetMeaning.UNTIL_RESET);
    }
    long now = 6_404_000_000L;
    assertThat(model.refuted(now, Q, W)).isFalse();
    // Ten units in the window ending at 5 s: the next unit back at 5.5 s, so at once at 6.404 s.
    assertThat(model.nextAllowed(now, Q, W)).isEqualTo(now);
  }
}
