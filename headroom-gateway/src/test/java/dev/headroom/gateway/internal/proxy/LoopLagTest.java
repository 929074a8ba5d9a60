package dev.headroom.gateway.internal.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.gateway.internal.Timers;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.Test;

/**
 * An event loop's own delay, as LoopLag measures it in virtual time: the average lateness of a
 * task due every 10 ms, which the gateway discounts from the upstream latencies an adaptive route
 * learns from.
 */
class LoopLagTest {

  /** Timers whose tasks the test runs, each when it says, late or not. */
  private static final class HeldTimers implements Timers {
    record Armed(long deadline, Runnable task) {}

    final Deque<Armed> armed = new ArrayDeque<>();
    long now;

    @Override
    public long now() {
      return now;
    }

    @Override
    public Timer schedule(EventExecutor loop, long deadline, Runnable task) {
      Armed a = new Armed(deadline, task);
      armed.add(a);
      return () -> armed.remove(a);
    }

    /** Runs the next task {@code lateNanos} after it was due. */
    void runLate(long lateNanos) {
      Armed a = armed.poll();
      now = a.deadline() + lateNanos;
      a.task().run();
    }
  }

  private final HeldTimers timers = new HeldTimers();
  private final LoopLag lag = new LoopLag(timers);
  private final EventExecutor loop = ImmediateEventExecutor.INSTANCE;

  @Test
  void aLoopIsMeasuredFromItsFirstExchangeAndItsDelayFollowsHowLateItRuns() {
    assertThat(timers.armed).as("no loop is woken before an exchange asks").isEmpty();
    assertThat(lag.of(loop)).isZero();
    assertThat(timers.armed).hasSize(1);
    assertThat(timers.armed.peek().deadline()).isEqualTo(LoopLag.PERIOD_NANOS);

    for (int i = 0; i < 40; i++) {
      timers.runLate(4_000_000L); // a saturated loop: each run 4 ms late
    }
    assertThat(lag.of(loop)).isBetween(3_900_000L, 4_000_000L);
    assertThat(timers.armed).as("one task per loop, re-armed by each run").hasSize(1);

    for (int i = 0; i < 40; i++) {
      timers.runLate(0); // the load went away
    }
    assertThat(lag.of(loop)).isLessThan(10_000L);
  }

  @Test
  void oneLateRunMovesTheAverageByItsWeight() {
    lag.of(loop);
    timers.runLate(8_000_000L);
    assertThat(lag.of(loop)).isEqualTo((long) (8_000_000L * LoopLag.WEIGHT));
    lag.of(loop);
    assertThat(timers.armed).hasSize(1);
  }
}
