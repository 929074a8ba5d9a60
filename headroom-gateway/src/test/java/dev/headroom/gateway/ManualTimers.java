package dev.headroom.gateway;

import dev.headroom.ManualTicker;
import dev.headroom.gateway.internal.Timers;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.time.Duration;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The gateway's connection timers in virtual time: a task runs when {@link #advance} moves the
 * {@link ManualTicker} past its deadline, on the connection's event loop, and {@code advance}
 * returns once it has run. Due tasks run in deadline order, each with the ticker set to its own
 * deadline, so a test sees what the gateway would do at each instant. Thread-safe.
 */
final class ManualTimers implements Timers {
  /** How long a test waits for the gateway's event loops; far above anything they do. */
  private static final Duration PATIENCE = Duration.ofSeconds(10);

  private record Task(long deadline, long seq, EventExecutor loop, Runnable run) {}

  private final ManualTicker ticker;
  private final PriorityQueue<Task> queue = new PriorityQueue<>((a, b) -> a.deadline != b.deadline
      ? Long.compare(a.deadline, b.deadline) : Long.compare(a.seq, b.seq));
  private final Set<EventExecutor> loops = ConcurrentHashMap.newKeySet();
  private long seq;

  ManualTimers(ManualTicker ticker) {
    this.ticker = ticker;
  }

  ManualTicker ticker() {
    return ticker;
  }

  @Override
  public long now() {
    return ticker.read();
  }

  @Override
  public synchronized Timer schedule(EventExecutor loop, long deadline, Runnable run) {
    Task t = new Task(deadline, seq++, loop, run);
    queue.add(t);
    loops.add(loop);
    notifyAll();
    return () -> {
      synchronized (ManualTimers.this) {
        queue.remove(t);
      }
    };
  }

  /** Timers armed and not yet run or cancelled. */
  synchronized int pending() {
    return queue.size();
  }

  /** Waits (on the test's thread, for the gateway's loop) until at least {@code n} timers are armed. */
  synchronized void awaitPending(int n) throws InterruptedException {
    long end = System.nanoTime() + PATIENCE.toNanos();
    while (queue.size() < n) {
      long left = end - System.nanoTime();
      if (left <= 0) {
        throw new AssertionError("expected " + n + " armed timers, found " + queue.size());
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }

  /**
   * Moves time forward by {@code d}: first lets the event loops finish what they are doing, then
   * runs every task due by the new time, in deadline order, each on its loop with the ticker at
   * its deadline; returns once they have run.
   */
  void advance(Duration d) throws Exception {
    settle();
    long target = ticker.read() + d.toNanos();
    while (true) {
      Task t;
      synchronized (this) {
        t = queue.peek();
        if (t == null || t.deadline - target > 0) {
          break;
        }
        queue.poll();
      }
      long behind = t.deadline - ticker.read();
      if (behind > 0) {
        ticker.advanceNanos(behind);
      }
      await(t.loop.submit(t.run));
      settle();
    }
    long rest = target - ticker.read();
    if (rest > 0) {
      ticker.advanceNanos(rest);
    }
    settle();
  }

  /** Waits until every event loop a timer was armed on has run what was queued on it. */
  void settle() throws Exception {
    for (EventExecutor loop : loops) {
      if (!loop.isShuttingDown()) {
        await(loop.submit(() -> { }));
      }
    }
  }

  private static void await(Future<?> f)
      throws InterruptedException, ExecutionException, TimeoutException {
    f.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
  }
}
