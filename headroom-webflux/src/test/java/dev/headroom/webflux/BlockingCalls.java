package dev.headroom.webflux;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * BlockHound in this module's tests (installed for every test by blockhound-junit-platform, which
 * loads this integration): Reactor Netty's and Lettuce's event-loop threads are non-blocking, and
 * every blocking call found on one is recorded here, with its thread and stack, before it fails
 * the call, so that a test can assert that none happened even when the failure was swallowed on
 * an I/O thread. Nothing is allowed: no blocking call is exempted.
 */
public final class BlockingCalls implements BlockHoundIntegration {

  private static final ConcurrentLinkedQueue<String> FOUND = new ConcurrentLinkedQueue<>();

  /** Every blocking call found on a non-blocking thread so far, with its thread and stack. */
  static List<String> found() {
    return List.copyOf(FOUND);
  }

  @Override
  public void applyTo(BlockHound.Builder builder) {
    builder.nonBlockingThreadPredicate(p -> p.or(t -> t.getName().startsWith("lettuce-")
        || t.getName().startsWith("reactor-http-")));
    builder.blockingMethodCallback(m -> {
      BlockingOperationError e = new BlockingOperationError(m);
      StringWriter w = new StringWriter();
      e.printStackTrace(new PrintWriter(w));
      FOUND.add(Thread.currentThread().getName() + ": " + w);
      throw e;
    });
  }
}
