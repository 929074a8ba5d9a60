package dev.headroom.gateway.internal;

import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The steps of a close, each run whatever the others did. A step that throws (anything: an
 * exception, or an error such as a class that no longer loads) is logged at once, naming the step,
 * and the next step runs; {@link #rethrow()} then throws the first failure, the later ones
 * attached as suppressed.
 *
 * <p>Why: the gateway's close ends with its event loops, whose threads are not daemons. A close
 * that stopped at its first failure (a store whose connection was torn down under it, a listener
 * whose close failed) left them running, and a JVM whose {@code main} had returned waited for
 * them for ever (issue 36). Every close of the gateway runs its steps through one of these.
 *
 * <p>State: the first failure (null while every step succeeded). Not thread-safe: one per close.
 */
public final class CloseSequence {
  private static final Logger LOG = LoggerFactory.getLogger(CloseSequence.class);

  private final String what;
  private Throwable first;

  /** A sequence closing {@code what} (named in the log lines). */
  public CloseSequence(String what) {
    this.what = what;
  }

  /** Runs {@code step}; a failure is logged and kept, and the sequence goes on. */
  public void run(String step, Runnable action) {
    try {
      action.run();
    } catch (Throwable t) { // whatever it is, the steps after it still run
      failed(step, t);
    }
  }

  /**
   * Runs {@code step} and returns what it returned (a future to wait for, say); null when it
   * failed, the failure logged and kept.
   */
  public <T> T call(String step, Supplier<T> action) {
    try {
      return action.get();
    } catch (Throwable t) {
      failed(step, t);
      return null;
    }
  }

  /** Records a failure found otherwise (a future that failed, say), as a step that threw. */
  public void failed(String step, Throwable t) {
    if (first == null) {
      first = t;
    } else if (first != t) {
      first.addSuppressed(t);
    }
    try {
      LOG.error("closing {}: {} failed ({}); the remaining steps run", what, step, t.toString(), t);
    } catch (Throwable logging) {
      // the logger failed too (a class of it that no longer loads): the failure is still thrown
      // by rethrow, and the remaining steps still run
      t.addSuppressed(logging);
    }
  }

  /** Whether a step failed. */
  public boolean anyFailed() {
    return first != null;
  }

  /** Throws the first failure (the others suppressed in it); nothing when every step succeeded. */
  public void rethrow() {
    if (first instanceof RuntimeException e) {
      throw e;
    }
    if (first instanceof Error e) {
      throw e;
    }
    if (first != null) {
      // a checked exception thrown sneakily by a step (Runnable cannot declare one)
      throw new IllegalStateException("closing " + what + ": " + first, first);
    }
  }
}
