package dev.headroom.enforcement;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.Ticker;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The timer of a gate given none ({@code GateBuilder.waitTimer} unset) counts on the gate's
 * ticker: its thread wakes on real time, but a task runs only once the ticker has reached its due
 * time, so a manual ticker that stands still holds it and moving the ticker releases it.
 */
class DefaultWaitTimerTest {

  @Test
  void aTaskWaitsForTheGatesTickerNotForRealTime() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    AtomicBoolean ran = new AtomicBoolean();
    CountDownLatch done = new CountDownLatch(1);
    Waiters.defaultTimer(ticker).schedule(Duration.ofMillis(1), () -> {
      ran.set(true);
      done.countDown();
    });
    // 50 ms of real time later, on the same thread (tasks run in the order they are due): the
    // task due 1 ms after scheduling on the standing ticker has not run; then the ticker moves
    AtomicBoolean ranBeforeTheTickerMoved = new AtomicBoolean(true);
    CountDownLatch checked = new CountDownLatch(1);
    Waiters.defaultTimer(Ticker.system()).schedule(Duration.ofMillis(50), () -> {
      ranBeforeTheTickerMoved.set(ran.get());
      ticker.advance(Duration.ofMillis(1));
      checked.countDown();
    });
    assertThat(checked.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ranBeforeTheTickerMoved).as("ran while the ticker stood still").isFalse();
    assertThat(done.await(10, TimeUnit.SECONDS)).as("ran once the ticker reached its due time").isTrue();
  }

  @Test
  void aCancelledTaskNeverRuns() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    AtomicBoolean ran = new AtomicBoolean();
    Runnable cancel = Waiters.defaultTimer(ticker).schedule(Duration.ofMillis(1), () -> ran.set(true));
    cancel.run();
    ticker.advance(Duration.ofSeconds(1));
    CountDownLatch after = new CountDownLatch(1);
    Waiters.defaultTimer(Ticker.system()).schedule(Duration.ofMillis(20), after::countDown);
    assertThat(after.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran).isFalse();
  }
}
