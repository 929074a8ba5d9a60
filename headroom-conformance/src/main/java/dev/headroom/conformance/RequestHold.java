package dev.headroom.conformance;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Holds requests of the {@link SpecEndpoint#BLOCKING} endpoints until a test lets them go, so that
 * a test can look at the server while a request is in flight. Waits are bounded: a request held
 * longer than {@link #MAX_HOLD} is let go, so a failing test never hangs a server thread.
 *
 * <p>Thread-safe.
 */
public final class RequestHold {

  /** Longest a request is held, and longest a test waits for a request to arrive. */
  public static final Duration MAX_HOLD = Duration.ofSeconds(10);

  private final Semaphore entered = new Semaphore(0);
  private volatile CountDownLatch open = new CountDownLatch(1);

  /** Called by the endpoint: records the arrival, then waits until {@link #open()}. */
  public void enter() {
    CountDownLatch latch = open;
    entered.release();
    try {
      latch.await(MAX_HOLD.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Waits until {@code n} requests have entered since the last call.
   *
   * @throws AssertionError when they do not arrive within {@link #MAX_HOLD}
   */
  public void awaitEntered(int n) throws InterruptedException {
    if (!entered.tryAcquire(n, MAX_HOLD.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError(n + " request(s) expected to reach the endpoint within " + MAX_HOLD + ", got "
          + entered.availablePermits());
    }
  }

  /** Lets every held request go, and closes the gate for the requests that come after. */
  public void open() {
    CountDownLatch latch = open;
    open = new CountDownLatch(1);
    latch.countDown();
  }
}
