package dev.headroom.servlet.internal;

import dev.headroom.enforcement.Admission;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletResponse;
import java.util.List;

/**
 * When an allowed request's response is complete, its {@link Admission} completes (headroom-enforcement:
 * units given back when the status does not count, content bytes charged, concurrency leases
 * released; ARCHITECTURE.md, request step 7). Runs exactly once: when the filter chain returns for a
 * synchronous request, or on {@link #onComplete} (or {@link #onError}) for an asynchronous one,
 * re-registering itself when the application starts a new asynchronous cycle.
 *
 * <p>Thread-safe: the container may call it from any thread.
 */
public final class Completion implements AsyncListener {

  private final Admission admission;
  private final HttpServletResponse response;
  private final LimitedResponse metered;
  private volatile boolean async;

  /**
   * @param response the response whose status decides whether the request counts
   * @param metered the counted response, or null when nothing is charged for content bytes
   */
  public Completion(Admission admission, HttpServletResponse response, LimitedResponse metered) {
    this.admission = admission;
    this.response = response;
    this.metered = metered;
  }

  /** Marks the request asynchronous: completion now waits for the container's event. */
  public void asyncStarted() {
    async = true;
  }

  /** Whether completion waits for an asynchronous event. */
  public boolean isAsync() {
    return async;
  }

  /**
   * Gives back, charges (the content bytes, and the units the response states in the route's
   * charge header) and releases, once.
   */
  public void finish() {
    List<String> charge = admission.route().chargeHeader().map(h -> List.copyOf(response.getHeaders(h))).orElse(List.of());
    admission.complete(response.getStatus(), metered == null ? 0 : metered.bytesWritten(), charge);
  }

  @Override
  public void onComplete(AsyncEvent event) {
    finish();
  }

  @Override
  public void onError(AsyncEvent event) {
    finish();
  }

  @Override
  public void onTimeout(AsyncEvent event) {
    // The container follows a timeout with an error dispatch or completion; onComplete finishes.
  }

  @Override
  public void onStartAsync(AsyncEvent event) {
    // A new asynchronous cycle drops the listeners of the previous one (Servlet 6.0, AsyncListener).
    event.getAsyncContext().addListener(this);
  }
}
