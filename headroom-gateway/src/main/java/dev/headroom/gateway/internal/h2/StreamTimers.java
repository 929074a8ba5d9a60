package dev.headroom.gateway.internal.h2;

import dev.headroom.gateway.internal.Timers;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayDeque;

/**
 * The timers of one HTTP/2 connection's streams: one task on the gateway's {@link Timers} for all of
 * them, where each stream's handler scheduled a task of its own when it opened (its timeouts, the
 * first due {@code min(timeouts.idle, timeouts.response)} later) and cancelled it when it closed: a
 * priority-queue insert and removal on the event loop per stream, about 4% of the loop's time under
 * h2load with 32 streams per connection (JFR).
 *
 * <p>How: the streams' deadlines are kept in a queue in the order they fall due. Streams open one
 * after another and arm the same step from their opening, so a new deadline is nearly always at or
 * after the last one and is appended; the rare one that falls earlier (a shorter timeout after a
 * reload) is scheduled on the gateway's timers on its own, as before. A cancelled entry is only
 * marked; marked entries leave the queue's head at once, and the whole queue is swept of them when
 * more than half of it is marked (a long stream at the head holds the rest behind it), so the queue
 * stays within twice the live timers plus {@link #SLACK}. The one task is due at the head's
 * deadline; when it fires it runs every due entry in order and re-arms for the next. A task
 * scheduled from another thread, or for another loop, goes to the gateway's timers.
 *
 * <p>Thread-safety: confined to the connection's event loop, where its streams run; calls from
 * elsewhere are handed to the gateway's timers, which are thread-safe.
 */
final class StreamTimers implements Timers {
  /** Marked entries the queue may hold beyond the live ones before it is swept. */
  static final int SLACK = 64;

  private final Timers timers;
  private final EventExecutor loop;
  private final ArrayDeque<Entry> queue = new ArrayDeque<>();
  /** Entries not cancelled and not run. */
  private int live;
  /** The one task on the gateway's timers, and when it is due; null when none is. */
  private Timer task;
  private long taskAt;

  StreamTimers(Timers timers, EventExecutor loop) {
    this.timers = timers;
    this.loop = loop;
  }

  @Override
  public long now() {
    return timers.now();
  }

  @Override
  public Timer schedule(EventExecutor on, long deadline, Runnable run) {
    Entry last = queue.peekLast();
    if (on != loop || !loop.inEventLoop() || last != null && deadline - last.deadline < 0) {
      return timers.schedule(on, deadline, run);
    }
    Entry e = new Entry(deadline, run);
    queue.addLast(e);
    live++;
    arm();
    return e;
  }

  private void arm() {
    Entry first = queue.peekFirst();
    if (first == null || task != null && taskAt - first.deadline <= 0) {
      return;
    }
    if (task != null) {
      task.cancel();
    }
    taskAt = first.deadline;
    task = timers.schedule(loop, first.deadline, this::fire);
  }

  private void fire() {
    task = null;
    long now = timers.now();
    Entry e;
    while ((e = queue.peekFirst()) != null && (e.run == null || now - e.deadline >= 0)) {
      queue.pollFirst();
      Runnable run = e.run;
      if (run != null) {
        e.run = null;
        live--;
        run.run(); // may schedule again: appended behind what is due now
      }
    }
    arm();
  }

  private void cancelled() {
    live--;
    Entry first;
    while ((first = queue.peekFirst()) != null && first.run == null) {
      queue.pollFirst();
    }
    if (queue.size() > 2 * live + SLACK) {
      queue.removeIf(x -> x.run == null);
    }
  }

  /** The entries the queue holds, marked ones included: what its bound is about. */
  int held() {
    return queue.size();
  }

  /** One stream's timer: its deadline and task; the task is null once cancelled or run. */
  private final class Entry implements Timer {
    final long deadline;
    Runnable run;

    Entry(long deadline, Runnable run) {
      this.deadline = deadline;
      this.run = run;
    }

    @Override
    public void cancel() {
      if (run == null) {
        return;
      }
      if (!loop.inEventLoop()) {
        loop.execute(this::cancel);
        return;
      }
      run = null;
      cancelled();
    }
  }
}
