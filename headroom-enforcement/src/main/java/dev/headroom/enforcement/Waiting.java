package dev.headroom.enforcement;

import java.time.Duration;
import java.util.Objects;

/**
 * How requests refused by one policy wait for their turn instead of being refused at once
 * ({@code policies.NAME.queue}; off unless configured): a request the policy refuses with a
 * Retry-After of at most {@link #maxWait()} waits, first come first served within its partition,
 * and is admitted when the store admits it; a full queue (more than {@link #maxQueued()} requests
 * of the policy waiting across its partitions) or a longer wait is the ordinary refusal. nginx's
 * {@code limit_req burst=N delay=M} does the same for a leaky bucket.
 *
 * <p>Nothing blocks a thread while a request waits: the gate re-decides it on a {@link Timer} and
 * completes its asynchronous verdict ({@link Gate#decideAsync(GateRequest, Object)}). The
 * blocking {@link Gate#decide(GateRequest, Object)} never waits.
 *
 * @param maxWait the longest a request waits, from its first refusal; positive, at most an hour
 * @param maxQueued how many requests of the policy may wait at once; 1 to 1,000,000
 */
public record Waiting(Duration maxWait, int maxQueued) {

  /** The longest {@link #maxWait()} allowed. */
  public static final Duration MAX_WAIT = Duration.ofHours(1);

  /** The {@link #maxQueued()} of a queue that does not set one. */
  public static final int DEFAULT_MAX_QUEUED = 1000;

  /** The most {@link #maxQueued()} allowed. */
  public static final int MAX_QUEUED = 1_000_000;

  /**
   * Checks the values.
   *
   * @throws IllegalArgumentException naming the value and what was expected
   */
  public Waiting {
    Objects.requireNonNull(maxWait, "maxWait");
    if (maxWait.isNegative() || maxWait.isZero() || maxWait.compareTo(MAX_WAIT) > 0) {
      throw new IllegalArgumentException("maxWait: " + maxWait + " is not a wait; expected a positive duration of at most "
          + MAX_WAIT);
    }
    if (maxQueued < 1 || maxQueued > MAX_QUEUED) {
      throw new IllegalArgumentException("maxQueued: " + maxQueued + " is out of range; expected 1 to " + MAX_QUEUED);
    }
  }

  /**
   * Runs the re-decisions of waiting requests later. Implementations are thread-safe and run a task
   * once, not before its delay has passed on the gate's ticker: a timer that wakes on real time
   * reads the ticker when it wakes and waits again when early (the default one does), and a test's
   * runs the tasks when it moves a manual ticker. A task does not block.
   */
  @FunctionalInterface
  public interface Timer {
    /**
     * Runs {@code task} after {@code delay}.
     *
     * @return what cancels the task if it has not run yet
     */
    Runnable schedule(Duration delay, Runnable task);
  }
}
