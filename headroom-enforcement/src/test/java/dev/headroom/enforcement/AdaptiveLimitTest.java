package dev.headroom.enforcement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The learnt concurrency limit (AdaptiveLimit's class comment: Gradient2 after Netflix
 * concurrency-limits, with Vegas's back-off on failures), driven by a manual ticker: it grows while
 * the latency holds, falls when the latency doubles, and grows again when the latency returns.
 */
class AdaptiveLimitTest {
  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private AdaptiveLimit limit(AdaptiveConcurrency.Builder b) {
    return new AdaptiveLimit(b.build(), ticker.read());
  }

  /** One window of {@code n} responses of {@code latency}, each with {@code inflight} in flight; the limit after it. */
  private int window(AdaptiveLimit l, int n, Duration latency, int inflight, boolean failed) {
    for (int i = 0; i < n; i++) {
      ticker.advance(Duration.ofMillis(100));
      l.onSample(ticker.read(), latency.toNanos(), inflight, failed);
    }
    return l.limit();
  }

  /** The limit after each of {@code windows} windows in which the callers keep the limit busy. */
  private List<Integer> busy(AdaptiveLimit l, int windows, Duration latency) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < windows; i++) {
      out.add(window(l, 10, latency, l.limit(), false));
    }
    return out;
  }

  private static final AdaptiveConcurrency.Builder TEST = AdaptiveConcurrency.builder().minLimit(2).maxLimit(200)
      .initialLimit(20).smoothing(0.5).window(Duration.ofSeconds(1)).windowSamples(10).longWindow(600);

  @Test
  void theLimitRisesWhileLatencyHoldsFallsWhenItDoublesAndRecoversWhenItReturns() {
    AdaptiveLimit l = limit(TEST);
    List<Integer> steady = busy(l, 20, Duration.ofMillis(10));
    assertThat(steady).isSorted();
    int healthy = l.limit();
    assertThat(healthy).as("grown from 20 under a steady latency: %s", steady).isGreaterThan(80);

    List<Integer> slow = busy(l, 10, Duration.ofMillis(20));
    int degraded = l.limit();
    assertThat(degraded).as("after the latency doubled: %s", slow).isLessThan(healthy * 3 / 4);

    List<Integer> healed = busy(l, 10, Duration.ofMillis(10));
    assertThat(l.limit()).as("after the latency returned: %s", healed).isGreaterThan(degraded + 10);
    assertThat(l.latencyNanos()).isEqualTo(Duration.ofMillis(10).toNanos());
  }

  /** As {@link #busy}, each response's latency {@code delay} longer, all of it the front end's own delay. */
  private List<Integer> busyDelayed(AdaptiveLimit l, int windows, Duration latency, Duration delay) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < windows; i++) {
      for (int j = 0; j < 10; j++) {
        ticker.advance(Duration.ofMillis(100));
        l.onSample(ticker.read(), latency.plus(delay).toNanos(), delay.toNanos(), l.limit(), false);
      }
      out.add(l.limit());
    }
    return out;
  }

  /**
   * A front end that reads every response late (its own event loop saturated) does not take its
   * own delay for the upstream's: the limit keeps growing while the upstream's part holds, and
   * still falls when that part rises. Without the discount, 0.3 ms responses read 5 ms late cut the
   * limit to its floor.
   */
  @Test
  void theFrontEndsOwnDelayIsNotTheUpstreams() {
    AdaptiveLimit l = limit(TEST);
    busy(l, 5, Duration.ofNanos(300_000));
    int before = l.limit();
    List<Integer> saturated = busyDelayed(l, 10, Duration.ofNanos(300_000), Duration.ofMillis(5));
    assertThat(saturated).as("the front end 5 ms late, the upstream as fast as before").isSorted();
    assertThat(l.limit()).isGreaterThan(before);

    AdaptiveLimit undiscounted = limit(TEST);
    busy(undiscounted, 5, Duration.ofNanos(300_000));
    busy(undiscounted, 10, Duration.ofMillis(5).plus(Duration.ofNanos(300_000)));
    assertThat(undiscounted.limit()).as("the same latencies, the delay not told").isLessThan(before / 2);

    int healthy = l.limit();
    List<Integer> slow = busyDelayed(l, 10, Duration.ofMillis(3), Duration.ofMillis(5));
    assertThat(l.limit()).as("the upstream's own part ten times slower, the front end still late: %s", slow)
        .isLessThan(healthy / 2);
  }

  /** The discount stops at the healthy latency: an over-stated delay cannot teach a baseline below it. */
  @Test
  void theDiscountNeverGoesBelowTheHealthyLatency() {
    AdaptiveLimit l = limit(TEST);
    busy(l, 5, Duration.ofMillis(10));
    busyDelayed(l, 5, Duration.ofMillis(0), Duration.ofMillis(10)); // a delay as long as the whole latency
    assertThat(l.latencyNanos()).isEqualTo(Duration.ofMillis(10).toNanos());
    int before = l.limit();
    List<Integer> same = busy(l, 5, Duration.ofMillis(10));
    assertThat(same).as("10 ms is still the healthy latency").isSorted();
    assertThat(l.limit()).isGreaterThan(before);
  }

  @Test
  void aSlowColdStartDoesNotPassForTheHealthyLatency() {
    AdaptiveLimit l = limit(TEST);
    busy(l, 3, Duration.ofSeconds(1)); // a process's first responses, while code compiles and pools fill
    busy(l, 10, Duration.ofMillis(10));
    int warm = l.limit();
    List<Integer> slow = busy(l, 5, Duration.ofMillis(200));
    // the baseline took the 10 ms at once: 200 ms is twenty times it, not a fifth of the cold start
    assertThat(l.limit()).as("after the upstream slowed to 200 ms: %s", slow).isLessThan(warm * 3 / 4);
  }

  @Test
  void aWindowIsOneSampleOnlyOnceItIsLongEnoughAndHasEnoughResponses() {
    AdaptiveLimit l = limit(TEST);
    // nine responses in 0.9 s: neither long enough nor enough responses
    assertThat(window(l, 9, Duration.ofMillis(10), 20, false)).isEqualTo(20);
    assertThat(l.latencyNanos()).isZero();
    // the tenth closes the window: 20 * 0.5 + (20 + sqrt 20) * 0.5 = 22.2, rounded 22
    assertThat(window(l, 1, Duration.ofMillis(10), 20, false)).isEqualTo(22);
    // ten responses at once are not a window until a second has passed
    for (int i = 0; i < 10; i++) {
      l.onSample(ticker.read(), Duration.ofMillis(10).toNanos(), 22, false);
    }
    assertThat(l.limit()).isEqualTo(22);
  }

  @Test
  void callersThatDoNotUseHalfTheLimitCannotRaiseItButASlowUpstreamLowersIt() {
    AdaptiveLimit l = limit(TEST);
    for (int i = 0; i < 10; i++) {
      window(l, 10, Duration.ofMillis(10), 5, false);
    }
    assertThat(l.limit()).as("application-limited: no proof that more would be served as fast").isEqualTo(20);
    window(l, 10, Duration.ofMillis(100), 5, false);
    // the upstream slowed all the same: 20 * 0.5 + (20 * 0.5 + sqrt 20) * 0.5 = 17.2
    assertThat(l.limit()).as("a latency ten times the baseline lowers it all the same").isEqualTo(17);
  }

  @Test
  void aFailedWindowBacksOffAndTheLimitNeverLeavesItsBounds() {
    AdaptiveLimit l = limit(TEST);
    assertThat(window(l, 10, Duration.ofMillis(10), 20, true)).isEqualTo(18); // 20 * 0.9
    for (int i = 0; i < 50; i++) {
      window(l, 10, Duration.ofMillis(10), 20, true);
    }
    assertThat(l.limit()).isEqualTo(2);
    busy(l, 100, Duration.ofMillis(10));
    assertThat(l.limit()).isEqualTo(200);
  }

  @Test
  void badSettingsAreRefusedNamingTheFieldTheValueAndWhatWasExpected() {
    assertThatThrownBy(() -> AdaptiveConcurrency.builder().minLimit(0).build())
        .hasMessage("adaptive: minLimit: 0 is not valid; expected a whole number of requests of at least 1");
    assertThatThrownBy(() -> AdaptiveConcurrency.builder().minLimit(5).maxLimit(4).build())
        .hasMessage("adaptive: maxLimit: 4 is not valid; expected a whole number of requests of at least minLimit (5)");
    assertThatThrownBy(() -> AdaptiveConcurrency.builder().maxLimit(10).initialLimit(11).build())
        .hasMessage("adaptive: initialLimit: 11 is not valid; expected a whole number of requests from minLimit to maxLimit (1 to 10)");
    assertThatThrownBy(() -> AdaptiveConcurrency.builder().smoothing(0).build()).hasMessageContaining("smoothing: 0.0");
    assertThatThrownBy(() -> AdaptiveConcurrency.builder().backoff(1).build()).hasMessageContaining("backoff: 1.0");
    assertThatThrownBy(() -> AdaptiveConcurrency.builder().name("9 bad").build())
        .hasMessageStartingWith("adaptive: name: '9 bad' is not valid; expected a policy name");
    assertThat(AdaptiveConcurrency.builder().maxLimit(10).build().initialLimit()).isEqualTo(10);
  }
}
