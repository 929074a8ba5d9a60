package dev.headroom.servlet.internal;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import jakarta.servlet.http.HttpServletResponse;
import java.util.List;
import java.util.function.IntPredicate;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaUnit;
import dev.headroom.QuotaLimiter;
import dev.headroom.StoreException;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * What happens once an allowed request's response is complete: content bytes are charged (for
 * {@code content-bytes} policies, after the fact, possibly into debt) and concurrency leases are
 * released (DESIGN.md, request step 4). Runs exactly once: when the filter chain returns for a
 * synchronous request, or on {@link #onComplete} (or {@link #onError}) for an asynchronous one,
 * re-registering itself when the application starts a new asynchronous cycle.
 *
 * <p>Thread-safe: the container may call it from any thread.
 */
public final class Completion implements AsyncListener {

  private final QuotaLimiter limiter;
  private final Decision decision;
  private final LimitedResponse metered;
  private final Consumer<StoreException> failures;
  private final AtomicBoolean done = new AtomicBoolean();
  private volatile boolean async;
  private volatile IntPredicate counts;
  private volatile List<Acquisition> conditional = List.of();
  private volatile HttpServletResponse response;

  /**
   * Gives back {@code acquisitions} at completion when the response's status does not count
   * ({@code counts} false: a route counting only failures, or only successes).
   */
  public void refundUnless(IntPredicate counts, List<Acquisition> acquisitions, HttpServletResponse response) {
    // only units a requests policy counted can be given back
    this.conditional = acquisitions.stream().filter(a -> a.cost() > 0 && a.policy().unit() == QuotaUnit.REQUESTS).toList();
    this.response = response;
    this.counts = counts;
  }

  /**
   * @param metered the counted response, or null when nothing is charged for content bytes (no
   *     content-bytes policy, or a HEAD request)
   * @param failures told when the store fails to charge or release
   */
  public Completion(QuotaLimiter limiter, Decision decision, LimitedResponse metered, Consumer<StoreException> failures) {
    this.limiter = limiter;
    this.decision = decision;
    this.metered = metered;
    this.failures = failures;
  }

  /** Marks the request asynchronous: completion now waits for the container's event. */
  public void asyncStarted() {
    async = true;
  }

  /** Whether completion waits for an asynchronous event. */
  public boolean isAsync() {
    return async;
  }

  /** Charges and releases, once. */
  public void finish() {
    if (!done.compareAndSet(false, true)) {
      return;
    }
    try {
      IntPredicate c = counts;
      if (c != null && !c.test(response.getStatus())) {
        for (Acquisition a : conditional) {
          limiter.store().refund(a);
        }
      }
      if (metered != null) {
        long n = metered.bytesWritten();
        if (n > 0) {
          for (PolicyOutcome o : decision.outcomes()) {
            if (o.policy().unit() == QuotaUnit.CONTENT_BYTES) {
              limiter.charge(o.policy(), o.key(), n);
            }
          }
        }
      }
    } catch (StoreException e) {
      failures.accept(e);
    } finally {
      try {
        limiter.release(decision);
      } catch (StoreException e) {
        failures.accept(e);
      }
    }
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
