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
import org.junit.jupiter.params.ParameterizedTest;
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

  @ParameterizedTest(name = "first request {0} ms into the window")
  @ValueSource(longs = {0, 300, 1700, 2500, 4990})
  void everyInstantNamedIsAllowedAndLessThanOneDecayLate(long phaseMillis) {
    ManualTicker ticker = ManualTicker.at(Instant.ofEpochSecond(1_800_000_000L).plusMillis(phaseMillis));
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    var policy = Peers.policy(Q, Duration.ofNanos(W), Algorithm.SLIDING_WINDOW);
    SlidingWindowModel model = new SlidingWindowModel(true, ticker.read(), W);
    int sent = 0;
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
      sent++;
      PolicyOutcome o = d.outcomes().get(0);
      ticker.advanceNanos(1_000_000);
      model.reported(seq, at, ticker.read(), o.remaining(), o.resetSeconds() * SECOND, Long.MIN_VALUE);
    }
    assertThat(sent).isEqualTo(60);
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
      model.reported(seq, sent, answered, o.remaining(), o.resetSeconds() * SECOND, Long.MIN_VALUE);
    }
    long at = model.nextAllowed(answered, Q, W);
    // The server gives the first unit back just after the boundary, the next one w / q later.
    assertThat(at).isGreaterThan(boundary).isLessThan(boundary + W / Q);
    ticker.advanceNanos(at - ticker.read());
    assertThat(limiter.acquire(policy, PartitionKey.of("client")).allowed()).as("the unit at %s ns", at).isTrue();
  }

  /** A refusal turns the model off: it never names an instant again. */
  @org.junit.jupiter.api.Test
  void aDisabledModelSaysNothing() {
    SlidingWindowModel model = new SlidingWindowModel(true, 0, W);
    model.admitted(1, 0);
    model.reported(1, 0, 1_000_000, Q - 1, 5 * SECOND, Long.MIN_VALUE);
    assertThat(model.nextAllowed(2_000_000, Q, W)).isGreaterThanOrEqualTo(0);
    model.disable();
    assertThat(model.nextAllowed(2_000_000, Q, W)).isEqualTo(-1);
  }
}
