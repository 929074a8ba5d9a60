package dev.headroom.enforcement;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.Ticker;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * The requests waiting for their turn under policies with a {@link Waiting} queue, instead of
 * being refused at once.
 *
 * <p>State: one line per (policy, partition) with requests waiting, a FIFO of waiters, removed
 * when it empties; the count waiting per policy, held under its {@code maxQueued} (memory is
 * bounded by the sum of those). Only the head of a line asks the store: it is re-decided when its
 * Retry-After has passed (a token bucket's or GCRA's is exact; a fixed window's is the window's
 * end), and once admitted the next waiter is tried at once, so that a later request never takes
 * the unit an earlier one waits for. A request that arrives while its partition has a line joins
 * its end without asking the store ({@link #behind}). The head is refused, the ordinary refusal,
 * when the store's next Retry-After would carry it past its deadline (its first refusal plus
 * {@code maxWait}); a waiter behind the head whose deadline passes leaves the line and is decided
 * with the head's latest refusal, without taking a unit an earlier waiter waits for.
 *
 * <p>No thread waits: the re-decisions are tasks on the {@link Waiting.Timer} and the store's
 * asynchronous answers. Time is the gate's ticker's: a deadline is a ticker reading, and a task
 * is due when the ticker reaches it (the default timer re-arms a task woken early), so that a test
 * moving a manual ticker moves the waiting too. Thread-safe: a line is guarded by itself.
 *
 * <p>With plans, a plan's version of a queued policy ({@code paced:pro}, {@code Plans}) waits in
 * the queue of the policy it derives from ({@code paced}): its {@code maxWait}, its {@code
 * maxQueued} (shared by every plan's version) and its meters; a line is still per decided policy
 * and partition, since each plan's version keeps counters of its own.
 */
final class Waiters {

  /** One waiting request as the gate knows it: its acquisitions asked again, its verdict made. */
  interface Attempt {
    /** The store asked again for the request's acquisitions. */
    CompletionStage<Decision> acquire();

    /** The request's verdict for {@code decision} (admitted, or the ordinary refusal). */
    CompletionStage<Verdict> decided(Decision decision);

    /** The verdict for a failed store (the gate's store failure mode); throws for a bug. */
    Verdict failed(Throwable e);
  }

  /** What is counted of the waiting; thread-safe; none without a meter registry. */
  interface Meters {
    Meters NONE = new Meters() {
      @Override
      public void waiting(String policy, int delta) {}

      @Override
      public void admitted(String policy) {}

      @Override
      public void timedOut(String policy) {}
    };

    /** {@code delta} more requests of {@code policy} wait. */
    void waiting(String policy, int delta);

    /** A waiting request was admitted. */
    void admitted(String policy);

    /** A waiting request was refused after all. */
    void timedOut(String policy);
  }

  private record Key(String policy, PartitionKey partition) {}

  private static final class Waiter {
    final Attempt attempt;
    final long deadline;
    final CompletableFuture<Verdict> verdict = new CompletableFuture<>();
    volatile Runnable cancelDeadline;

    Waiter(Attempt attempt, long deadline) {
      this.attempt = attempt;
      this.deadline = deadline;
    }
  }

  /** The waiters of one (policy, partition), first come first. Guarded by itself. */
  private static final class Line {
    final Key key;
    /** The queued policy the line's policy follows: its name, or its base's for a plan's version. */
    final String queue;
    final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    /** Removed from the map: a new waiter makes a new line. */
    boolean closed;
    /** The store's latest refusal of the head; null before the first. */
    Decision lastRefusal;

    Line(Key key, String queue) {
      this.key = key;
      this.queue = queue;
    }
  }

  private final Map<String, Waiting> byPolicy;
  private final Map<String, AtomicInteger> queued = new HashMap<>();
  private final Map<Key, Line> lines = new ConcurrentHashMap<>();
  private final Waiting.Timer timer;
  private final Ticker ticker;
  private final Meters meters;
  /** The queued policy a decided policy follows: its base's name for a plan's version ({@code Plans#baseName}). */
  private final UnaryOperator<String> queueOf;

  /**
   * @param queueOf the name of the policy whose queue a decided policy follows: the policy's own
   *     name, or with plans its base policy's ({@code Plans#baseName})
   */
  Waiters(Map<String, Waiting> byPolicy, Waiting.Timer timer, Ticker ticker, Meters meters,
      UnaryOperator<String> queueOf) {
    this.byPolicy = Map.copyOf(byPolicy);
    this.byPolicy.keySet().forEach(p -> queued.put(p, new AtomicInteger()));
    this.timer = timer;
    this.ticker = ticker;
    this.meters = meters;
    this.queueOf = queueOf;
  }

  /** The queues, by policy name. */
  Map<String, Waiting> queues() {
    return byPolicy;
  }

  /** The requests waiting now, by queued policy name. */
  Map<String, Integer> waiting() {
    Map<String, Integer> out = new HashMap<>();
    queued.forEach((policy, n) -> out.put(policy, Math.max(0, n.get()))); // a full queue's refused join counts a moment
    return out;
  }

  /**
   * The verdict of a request that joins the end of a line of its partition without asking the
   * store, so as not to overtake it; null when none of its policies has a line for it (or the line
   * is full: the store decides it as usual).
   */
  CompletionStage<Verdict> behind(List<Acquisition> acquisitions, Attempt attempt) {
    if (lines.isEmpty()) {
      return null;
    }
    for (Acquisition a : acquisitions) {
      Key key = new Key(a.policy().name(), a.key());
      String queue = queueOf.apply(key.policy());
      Waiting w = byPolicy.get(queue);
      if (w != null && lines.containsKey(key)) {
        return join(key, queue, w, attempt, null);
      }
    }
    return null;
  }

  /**
   * The verdict of a request the store refused, once it has waited; null when it is refused now:
   * a policy without a queue refused it, the Retry-After is longer than {@code maxWait}, or the
   * queue is full.
   */
  CompletionStage<Verdict> afterRefusal(Decision refused, Attempt attempt) {
    if (!queues(refused)) {
      return null;
    }
    PolicyOutcome o = refused.mostConstraining();
    String queue = queueOf.apply(o.policy().name());
    Waiting w = byPolicy.get(queue);
    if (refused.retryAfter().compareTo(w.maxWait()) > 0) {
      return null;
    }
    return join(new Key(o.policy().name(), o.key()), queue, w, attempt, refused);
  }

  /** Whether every policy that refused has a queue. */
  private boolean queues(Decision refused) {
    for (PolicyOutcome o : refused.violated()) {
      if (!byPolicy.containsKey(queueOf.apply(o.policy().name()))) {
        return false;
      }
    }
    return !refused.violated().isEmpty();
  }

  private CompletionStage<Verdict> join(Key key, String queue, Waiting w, Attempt attempt, Decision refused) {
    AtomicInteger count = queued.get(queue);
    if (count.incrementAndGet() > w.maxQueued()) {
      count.decrementAndGet();
      return null;
    }
    Waiter waiter = new Waiter(attempt, ticker.read() + w.maxWait().toNanos());
    Line line;
    boolean head;
    while (true) {
      line = lines.computeIfAbsent(key, k -> new Line(k, queue));
      synchronized (line) {
        if (line.closed) {
          continue;
        }
        line.waiters.addLast(waiter);
        head = line.waiters.size() == 1;
        if (refused != null) {
          line.lastRefusal = refused;
        }
        break;
      }
    }
    meters.waiting(queue, 1);
    Line joined = line;
    waiter.cancelDeadline = timer.schedule(w.maxWait(), () -> expire(joined, waiter));
    if (head) {
      timer.schedule(refused == null ? Duration.ZERO : refused.retryAfter(), () -> tryHead(joined));
    }
    return waiter.verdict;
  }

  /** The head of {@code line} asks the store again; the line closes when empty. */
  private void tryHead(Line line) {
    Waiter head;
    synchronized (line) {
      head = line.waiters.peekFirst();
      if (head == null) {
        line.closed = true;
        lines.remove(line.key, line);
        return;
      }
    }
    CompletionStage<Decision> s;
    try {
      s = head.attempt.acquire();
    } catch (RuntimeException e) {
      s = CompletableFuture.failedFuture(e);
    }
    s.whenComplete((d, e) -> tried(line, head, d, e));
  }

  private void tried(Line line, Waiter head, Decision d, Throwable e) {
    if (e == null && !d.allowed() && queues(d)) {
      long retry = Math.max(d.retryAfter().toNanos(), TimeUnit.MILLISECONDS.toNanos(1));
      if (ticker.read() + retry <= head.deadline) {
        synchronized (line) {
          line.lastRefusal = d;
        }
        timer.schedule(Duration.ofNanos(retry), () -> tryHead(line));
        return; // still the head: later requests do not overtake it
      }
    }
    synchronized (line) {
      line.waiters.remove(head);
    }
    finish(line.queue, head, d, e);
    timer.schedule(Duration.ZERO, () -> tryHead(line)); // the next waiter, from a fresh stack
  }

  /**
   * A waiter behind the head reaches its deadline: it leaves the line, refused as the head was last
   * (it does not take a unit an earlier waiter waits for); asked once more of the store only when
   * its line has no refusal yet.
   */
  private void expire(Line line, Waiter waiter) {
    Decision refused;
    synchronized (line) {
      if (line.waiters.peekFirst() == waiter || !line.waiters.remove(waiter)) {
        return; // the head is decided by its own attempts; a finished waiter is gone
      }
      refused = line.lastRefusal;
    }
    if (refused != null) {
      finish(line.queue, waiter, refused, null);
      return;
    }
    CompletionStage<Decision> s;
    try {
      s = waiter.attempt.acquire();
    } catch (RuntimeException e) {
      s = CompletableFuture.failedFuture(e);
    }
    s.whenComplete((d, e) -> finish(line.queue, waiter, d, e));
  }

  /** The waiter leaves: counted, its deadline cancelled, its verdict completed. */
  private void finish(String policy, Waiter waiter, Decision d, Throwable e) {
    queued.get(policy).decrementAndGet();
    meters.waiting(policy, -1);
    Runnable cancel = waiter.cancelDeadline;
    if (cancel != null) {
      cancel.run();
    }
    try {
      if (e != null) {
        waiter.verdict.complete(waiter.attempt.failed(e));
        return;
      }
      if (d.allowed()) {
        meters.admitted(policy);
      } else {
        meters.timedOut(policy);
      }
      waiter.attempt.decided(d).whenComplete((v, x) -> {
        if (x != null) {
          waiter.verdict.completeExceptionally(x);
        } else {
          waiter.verdict.complete(v);
        }
      });
    } catch (RuntimeException | Error x) {
      waiter.verdict.completeExceptionally(x);
    }
  }

  /**
   * The timer of a gate given none: a task is due when the gate's {@code ticker} reaches its delay,
   * and one shared daemon thread wakes it; a task woken before the ticker reached its due time (the
   * thread counts real time, the ticker may be a test's) is armed again for the rest. The thread
   * only starts tasks (they do not block).
   */
  static Waiting.Timer defaultTimer(Ticker ticker) {
    return (delay, task) -> new TickerTask(ticker, ticker.read() + delay.toNanos(), task).arm(delay.toNanos());
  }

  /** The least wait before the ticker is read again: a ticker that stands still costs a wake-up per millisecond at most. */
  static final long MIN_REARM_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /** A task due at a reading of the gate's ticker, on the shared thread. Thread-safe. */
  private static final class TickerTask implements Runnable {
    private final Ticker ticker;
    private final long due;
    private final Runnable task;
    private volatile boolean cancelled;
    private volatile Future<?> armed;

    TickerTask(Ticker ticker, long due, Runnable task) {
      this.ticker = ticker;
      this.due = due;
      this.task = task;
    }

    Runnable arm(long nanos) {
      armed = DefaultTimer.EXECUTOR.schedule(this, nanos, TimeUnit.NANOSECONDS);
      return this::cancel;
    }

    @Override
    public void run() {
      if (cancelled) {
        return;
      }
      long early = due - ticker.read();
      if (early > 0) {
        arm(Math.max(early, MIN_REARM_NANOS));
        return;
      }
      task.run();
    }

    private void cancel() {
      cancelled = true;
      Future<?> f = armed;
      if (f != null) {
        f.cancel(false);
      }
    }
  }

  private static final class DefaultTimer {
    static final ScheduledThreadPoolExecutor EXECUTOR = executor();

    private static ScheduledThreadPoolExecutor executor() {
      ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "headroom-queue");
        t.setDaemon(true);
        return t;
      });
      executor.setRemoveOnCancelPolicy(true);
      return executor;
    }
  }
}
