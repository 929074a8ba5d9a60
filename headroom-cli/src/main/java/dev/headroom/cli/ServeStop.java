package dev.headroom.cli;

import dev.headroom.gateway.Gateway;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How {@code headroom serve} stops. The first SIGTERM or SIGINT, or the end of a drain begun by
 * {@code POST /drain}, asks for the graceful stop, which the command's own thread then runs
 * ({@link Gateway#drain()}, up to {@code shutdown.drainTimeout}). A second signal while it runs
 * forces the stop: the gateway closes at once ({@link Gateway#close()}: listeners, store, event
 * loops; the exchanges still in flight are cut), its drain ends with that close, and the command
 * exits with {@link #FORCED}. Should even that close not end within {@link #FORCE_WAIT} (a part
 * that hangs), the JVM is halted with the same status: a second signal always ends the process.
 *
 * <p>State: whether a stop was asked (the future the command waits on) and whether it was forced.
 * Thread-safe: signals arrive on threads of their own.
 */
final class ServeStop {
  private static final Logger LOG = LoggerFactory.getLogger(ServeStop.class);
  /** The exit status after a forced stop. */
  static final int FORCED = 5;
  /** How long a forced close may take before the JVM is halted. */
  static final Duration FORCE_WAIT = Duration.ofSeconds(15);

  private final Gateway gateway;
  private final CompletableFuture<Void> asked = new CompletableFuture<>();
  private final AtomicBoolean forced = new AtomicBoolean();

  ServeStop(Gateway gateway) {
    this.gateway = gateway;
    gateway.drained().thenRun(() -> asked.complete(null)); // POST /drain on the admin port
  }

  /** What SIGTERM and SIGINT do: the first asks for the drain, the next forces the stop. */
  void signal() {
    if (!asked.complete(null)) {
      force();
    }
  }

  /**
   * Asks for the stop on behalf of the JVM's shutdown hook (the JVM stops for another reason than
   * a signal handled here); returns whether the hook is the first to ask, and so drains itself.
   */
  boolean claimForShutdownHook() {
    return asked.complete(null);
  }

  /** Waits until a stop is asked for. */
  void await() throws InterruptedException {
    try {
      asked.get();
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause()); // never: the future is only ever completed
    }
  }

  /** Whether the stop was forced (a second signal). */
  boolean forced() {
    return forced.get();
  }

  private void force() {
    if (!forced.compareAndSet(false, true)) {
      return; // a third signal: the forced stop is under way, and bounded
    }
    // first the bound, then the rest: whatever fails below (even logging, when a class no longer
    // loads from a jar replaced under the running process), the process ends
    Thread halt = new Thread(ServeStop::haltAfterWait, "headroom-forced-stop");
    halt.setDaemon(true); // the JVM exits without waiting for it once the close is done
    halt.start();
    try {
      LOG.warn("second signal during the drain: stopping now; exchanges still in flight are cut");
    } finally {
      try {
        gateway.close(); // the command's thread returns FORCED once its drain ends with this close
      } catch (RuntimeException | Error e) {
        // logged by the close, step by step; the event loops are closed all the same
      }
    }
  }

  private static void haltAfterWait() {
    try {
      Thread.sleep(FORCE_WAIT.toMillis());
      LOG.error("the gateway did not close within {} of the second signal; halting", FORCE_WAIT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      Runtime.getRuntime().halt(FORCED);
    }
  }
}
