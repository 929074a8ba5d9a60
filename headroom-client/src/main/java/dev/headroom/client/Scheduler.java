package dev.headroom.client;

import dev.headroom.ManualTicker;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * How the client waits: a future that completes once a delay has passed. Waiting never blocks a
 * thread of the caller's; the synchronous API blocks only its own calling thread, on the future.
 *
 * <p>Implementations must be thread-safe.
 */
@FunctionalInterface
public interface Scheduler {

  /** A future completed once {@code delay} has passed (at once when it is zero or negative). */
  CompletableFuture<Void> delay(Duration delay);

  /** Waits on {@link CompletableFuture#delayedExecutor}: no thread sleeps. The default. */
  static Scheduler system() {
    return delay -> {
      if (delay.isZero() || delay.isNegative()) {
        return CompletableFuture.completedFuture(null);
      }
      return CompletableFuture.runAsync(() -> { },
          CompletableFuture.delayedExecutor(Ceilings.nanos(delay), TimeUnit.NANOSECONDS));
    };
  }

  /** Waits on the given executor (not shut down by the client). */
  static Scheduler using(ScheduledExecutorService executor) {
    Objects.requireNonNull(executor, "executor");
    return delay -> {
      if (delay.isZero() || delay.isNegative()) {
        return CompletableFuture.completedFuture(null);
      }
      CompletableFuture<Void> f = new CompletableFuture<>();
      executor.schedule(() -> f.complete(null), Ceilings.nanos(delay), TimeUnit.NANOSECONDS);
      return f;
    };
  }

  /**
   * For tests and simulations: waiting moves the given ticker forward to the end of the delay and
   * completes at once, so that paced work runs in virtual time. Waits that overlap move the ticker
   * to the later of their ends, never by their sum.
   */
  static Scheduler advancing(ManualTicker ticker) {
    Objects.requireNonNull(ticker, "ticker");
    return delay -> {
      if (!delay.isZero() && !delay.isNegative()) {
        synchronized (ticker) {
          long target = Ceilings.saturatingAdd(ticker.read(), Ceilings.nanos(delay));
          long now = ticker.read();
          if (target > now) {
            ticker.advanceNanos(target - now);
          }
        }
      }
      return CompletableFuture.completedFuture(null);
    };
  }
}
