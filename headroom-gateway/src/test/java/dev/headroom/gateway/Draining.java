package dev.headroom.gateway;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** A drain begun on another thread, as a signal begins one, so that a test can act while it runs. */
final class Draining {

  private Draining() {}

  /** {@link Gateway#drain(Duration)} on a pool thread: whether everything finished in time. */
  static CompletableFuture<Boolean> begin(Gateway gateway, Duration timeout) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return gateway.drain(timeout);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CompletionException(e);
      }
    });
  }
}
