package dev.headroom.redis.internal;

import dev.headroom.redis.StoreOverloadedException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * How long a decision waits for Redis, and whether it may be asked at all.
 *
 * <h2>How is this designed, and why?</h2>
 * A decision's time has two parts: the wait in this process's own queue until Lettuce's I/O
 * thread writes the command to the socket, then Redis's round trip. Under load the first part
 * grows with this process's backlog (the I/O thread shares two cores with the gateway's event
 * loops, and one connection's commands are written in order), while Redis answers in
 * microseconds; counting the deadline from the request blamed a healthy Redis for it. So:
 * <ul>
 *   <li>the <b>decision deadline</b> counts from the write ({@link WriteStamp}): a Redis that does
 *       not answer within it after receiving the command is slow or away, and the failure policy
 *       decides;</li>
 *   <li>a command not yet written is still ours: it may wait up to the <b>write timeout</b>, then
 *       it is refused as this process's overload ({@link StoreOverloadedException}), not as a
 *       Redis failure. Without a connection nothing will write it: the deadline then counts from
 *       the request, as a Redis failure;</li>
 *   <li><b>admission control</b>: at most {@code maxOutstanding} decisions await Redis's reply at
 *       once; one more is refused at once as overload, which bounds what a flood can pin in the
 *       connection's queues.</li>
 * </ul>
 * A waiter that sees no write yet looks again after at most one deadline, since a write meanwhile
 * moves the expiry. Worked numbers (deadline 100 ms, write timeout 1 s): a command written 140 ms
 * after the request and answered 30 ms later is Redis's answer (170 ms in all); one written at
 * 5 ms and unanswered is decided by the failure policy at 105 ms; one still unwritten at 1 s is
 * refused as overload.
 *
 * <p>Thread-safe; times are {@link System#nanoTime()} (infrastructure, not quota time).
 */
public final class Deadlines {
  private final Endpoint endpoint;
  private final long deadlineNanos;
  private final long writeTimeoutNanos;
  private final int maxOutstanding;
  /** Decisions sent to Redis whose reply has not arrived yet (a blocking caller's until it took it). */
  private final AtomicInteger outstanding = new AtomicInteger();
  private final LongAdder passed = new LongAdder();
  private final LongAdder shed = new LongAdder();

  /** @param writeTimeout raised to the deadline when shorter */
  public Deadlines(Endpoint endpoint, Duration deadline, Duration writeTimeout, int maxOutstanding) {
    this.endpoint = endpoint;
    this.deadlineNanos = deadline.toNanos();
    this.writeTimeoutNanos = Math.max(deadlineNanos, writeTimeout.toNanos());
    this.maxOutstanding = maxOutstanding;
  }

  public long deadlineNanos() {
    return deadlineNanos;
  }

  /** When a decision stops waiting ({@link System#nanoTime()}); see the class comment. */
  public long expiresAt(WriteStamp s) {
    if (s.written()) {
      return s.writtenAt() + deadlineNanos;
    }
    if (!endpoint.connected()) {
      return s.requestedAt() + deadlineNanos;
    }
    return s.requestedAt() + writeTimeoutNanos;
  }

  /** Whether the decision may still wait. */
  public boolean waiting(WriteStamp s) {
    return expiresAt(s) - System.nanoTime() > 0;
  }

  /**
   * How long to wait before looking at a decision again: until it expires when its command is
   * written; otherwise at most one deadline, since a write meanwhile moves the expiry.
   */
  public long untilCheck(WriteStamp s) {
    long left = expiresAt(s) - System.nanoTime();
    return Math.max(0, s.written() ? left : Math.min(left, deadlineNanos));
  }

  /**
   * Waits for a reply until it expires (looking again whenever the write may have moved the
   * expiry).
   *
   * @throws TimeoutException when it expired first
   */
  public long[] await(CompletableFuture<long[]> reply, WriteStamp s)
      throws InterruptedException, ExecutionException, TimeoutException {
    while (true) {
      try {
        return reply.get(untilCheck(s), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        if (!waiting(s)) {
          throw e;
        }
      }
    }
  }

  /**
   * Hands {@code task} to the event loop that wrote the command, which reads what arrived on the
   * connection before it runs queued tasks: a reply already in this process's socket buffer is
   * read (and its decision completed) first. False without such a loop.
   */
  public boolean runOnWriter(WriteStamp s, Runnable task) {
    Executor io = s.writer();
    try {
      if (io != null) {
        io.execute(task);
        return true;
      }
    } catch (RejectedExecutionException e) {
      // the loop is shutting down: the caller decides itself
    }
    return false;
  }

  /**
   * Whether the event loop that wrote a command ran a task queued now within one more deadline,
   * and so has read whatever reply had arrived ({@link #runOnWriter}). False without such a loop,
   * or when it is stuck.
   */
  public boolean ioCaughtUp(WriteStamp s) {
    CompletableFuture<Void> ran = new CompletableFuture<>();
    if (!runOnWriter(s, () -> ran.complete(null))) {
      return false;
    }
    try {
      ran.get(deadlineNanos, TimeUnit.NANOSECONDS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | TimeoutException e) {
      return false;
    }
  }

  /**
   * Why a decision whose time ran out has no answer: Redis did not answer after the write (or
   * there is no connection): a {@link TimeoutException}, for the failure policy; or the command
   * is still in this process's queue: a {@link StoreOverloadedException}.
   */
  public Exception expired(WriteStamp s) {
    if (s.written() || !endpoint.connected()) {
      return passed();
    }
    shed.increment();
    return new StoreOverloadedException("the Redis store's own queue did not write the decision within "
        + Duration.ofNanos(writeTimeoutNanos).toMillis() + " ms: this process is overloaded, Redis may be healthy");
  }

  /** A deadline passed (counted). */
  public TimeoutException passed() {
    passed.increment();
    return new TimeoutException("Redis did not decide within " + Duration.ofNanos(deadlineNanos).toMillis()
        + " ms of receiving the command");
  }

  /**
   * Admission control: null when one more decision may be sent to Redis, else the refusal
   * (counted): more than {@code maxOutstanding} decisions await their reply.
   */
  public StoreOverloadedException refuseOverLimit() {
    if (outstanding.get() < maxOutstanding) {
      return null;
    }
    shed.increment();
    return new StoreOverloadedException("the Redis store already has " + maxOutstanding
        + " decisions waiting for Redis: this process is overloaded, Redis may be healthy");
  }

  /** Counts a decision in flight until its reply (or failure) arrives. */
  public void track(CompletableFuture<long[]> reply) {
    sent();
    reply.whenComplete((r, e) -> answered());
  }

  /**
   * Counts a decision in flight; its caller calls {@link #answered} exactly once, when the reply
   * (or failure) arrives, from a callback it registers on the reply anyway.
   */
  public void sent() {
    outstanding.incrementAndGet();
  }

  /** A decision counted by {@link #sent} got its reply (or failure). */
  public void answered() {
    outstanding.decrementAndGet();
  }

  public long deadlinesPassed() {
    return passed.sum();
  }

  public long shed() {
    return shed.sum();
  }

  public int outstanding() {
    return outstanding.get();
  }
}
