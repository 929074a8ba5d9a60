package dev.headroom.gateway.internal.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.gateway.internal.Timers;
import io.netty.channel.DefaultEventLoop;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** One HTTP/2 connection's stream timers on one task of the gateway's timers, in virtual time. */
class StreamTimersTest {
  private final DefaultEventLoop loop = new DefaultEventLoop();
  private final VirtualTimers gateway = new VirtualTimers();
  private final StreamTimers timers = new StreamTimers(gateway, loop);
  private final List<String> ran = new ArrayList<>();

  @AfterEach
  void stop() {
    loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
  }

  @Test
  void theStreamsOfAConnectionShareOneTaskAndTheirDueTasksRunInOrder() throws Exception {
    List<Timers.Timer> t = onLoop(() -> {
      List<Timers.Timer> l = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        int n = i;
        l.add(timers.schedule(loop, 1000 + i, () -> ran.add("stream " + n)));
      }
      return l;
    });
    assertThat(gateway.armed()).hasSize(1);
    onLoop(() -> {
      t.get(0).cancel(); // stream 0 closed before its deadline
      t.get(2).cancel();
      return null;
    });
    gateway.advanceTo(1003);
    assertThat(ran).containsExactly("stream 1", "stream 3");
    assertThat(gateway.armed()).hasSize(1).allMatch(a -> a.deadline == 1004); // re-armed for the next
    gateway.advanceTo(2000);
    assertThat(ran).hasSize(98);
    assertThat(gateway.armed()).isEmpty();
    assertThat(onLoop(timers::held)).isZero();
  }

  @Test
  void aDeadlineBeforeTheLastIsScheduledOnItsOwn() throws Exception {
    onLoop(() -> {
      timers.schedule(loop, 5000, () -> ran.add("late"));
      timers.schedule(loop, 1000, () -> ran.add("early")); // a shorter timeout after a reload
      return null;
    });
    assertThat(gateway.armed()).extracting(a -> a.deadline).containsExactlyInAnyOrder(5000L, 1000L);
    gateway.advanceTo(1000);
    assertThat(ran).containsExactly("early");
    gateway.advanceTo(5000);
    assertThat(ran).containsExactly("early", "late");
  }

  @Test
  void cancelledTimersBehindALongStreamAreSweptSoTheQueueStaysBounded() throws Exception {
    onLoop(() -> {
      timers.schedule(loop, 1000, () -> ran.add("long stream"));
      for (int i = 0; i < 10_000; i++) {
        timers.schedule(loop, 1000 + i, () -> ran.add("short stream")).cancel();
      }
      return null;
    });
    assertThat(onLoop(timers::held)).isLessThanOrEqualTo(2 + StreamTimers.SLACK);
    gateway.advanceTo(20_000);
    assertThat(ran).containsExactly("long stream");
  }

  private <T> T onLoop(Callable<T> c) throws Exception {
    return loop.submit(c).get();
  }

  /** The gateway's timers in virtual time: {@link #advanceTo} runs the due tasks on their loops, in order. */
  private static final class VirtualTimers implements Timers {
    record Armed(long deadline, EventExecutor loop, Runnable run) {}

    private final List<Armed> armed = new ArrayList<>();
    private volatile long now;

    @Override
    public long now() {
      return now;
    }

    @Override
    public synchronized Timer schedule(EventExecutor loop, long deadline, Runnable run) {
      Armed a = new Armed(deadline, loop, run);
      armed.add(a);
      return () -> {
        synchronized (VirtualTimers.this) {
          armed.remove(a);
        }
      };
    }

    synchronized List<Armed> armed() {
      return List.copyOf(armed);
    }

    void advanceTo(long t) throws Exception {
      while (true) {
        Armed next;
        synchronized (this) {
          next = armed.stream().filter(a -> a.deadline <= t).min((a, b) -> Long.compare(a.deadline, b.deadline))
              .orElse(null);
          if (next == null) {
            now = t;
            return;
          }
          armed.remove(next);
          now = next.deadline;
        }
        next.loop.submit(next.run).get();
      }
    }
  }
}
