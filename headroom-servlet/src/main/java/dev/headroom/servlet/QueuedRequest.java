package dev.headroom.servlet;

import dev.headroom.enforcement.Verdict;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A request waiting in a policy's queue (headroom-enforcement's {@code Waiting}) without holding a
 * container thread: the filter starts asynchronous processing and returns; when the gate's verdict
 * comes (on the queue's timer or the store's thread), the request is dispatched again
 * ({@link AsyncContext#dispatch()}, an {@code ASYNC} dispatch) and the filter writes the verdict
 * there, as it would have on the first dispatch.
 *
 * <p>State: the verdict's stage and who claimed the request first, the verdict or the container
 * (a timeout, or an error such as the client going away). Only the first acts; an admission that
 * comes after the container claimed the request is completed at once, with nginx's 499, so that
 * its leases are not held until they time out. The container's timeout is the longest wait plus
 * {@link #MARGIN}, so it fires only when the store does not answer: the request is then answered
 * 503 as a store that cannot decide.
 *
 * <p>Thread-safe: the verdict and the container may arrive on any thread.
 */
final class QueuedRequest implements AsyncListener {

  /** The request attribute holding a waiting request between its two dispatches. */
  static final String ATTRIBUTE = QueuedRequest.class.getName();

  /** How long past the longest wait the container waits for the verdict (the store's answer) before answering 503. */
  static final Duration MARGIN = Duration.ofSeconds(30);

  /** The status an admission completes with when the request was claimed by the container (nginx's 499). */
  static final int CLIENT_CLOSED = 499;

  private final CompletableFuture<Verdict> verdict;
  private final AtomicBoolean claimed = new AtomicBoolean();
  private final URI origin;

  private QueuedRequest(CompletableFuture<Verdict> verdict, URI origin) {
    this.verdict = verdict;
    this.origin = origin;
  }

  /**
   * Starts waiting: asynchronous processing with a timeout of {@code longestWait} plus
   * {@link #MARGIN}, dispatched again when {@code verdict} completes.
   */
  static void start(HttpServletRequest request, HttpServletResponse response, CompletableFuture<Verdict> verdict,
      Duration longestWait, URI origin) {
    QueuedRequest q = new QueuedRequest(verdict, origin);
    request.setAttribute(ATTRIBUTE, q);
    AsyncContext context = request.startAsync(request, response);
    context.setTimeout(longestWait.plus(MARGIN).toMillis());
    context.addListener(q);
    verdict.whenComplete((v, e) -> {
      if (q.claimed.compareAndSet(false, true)) {
        context.dispatch();
      } else if (v != null && v.kind() == Verdict.Kind.ADMIT) {
        v.admission().completeAsync(CLIENT_CLOSED, 0);
      }
    });
  }

  /** The waiting request of an {@code ASYNC} dispatch, taken off the request; null when there is none. */
  static QueuedRequest take(HttpServletRequest request) {
    Object q = request.getAttribute(ATTRIBUTE);
    if (!(q instanceof QueuedRequest)) {
      return null;
    }
    request.removeAttribute(ATTRIBUTE);
    return (QueuedRequest) q;
  }

  /** The verdict, complete on the dispatch it brought; a bug the gate threw is thrown here. */
  Verdict verdict() throws ServletException {
    return join(verdict);
  }

  /** A completed verdict; a bug the gate threw is thrown here. */
  static Verdict join(CompletableFuture<Verdict> verdict) throws ServletException {
    try {
      return verdict.join();
    } catch (CompletionException e) {
      Throwable why = e.getCause() == null ? e : e.getCause();
      if (why instanceof RuntimeException r) {
        throw r;
      }
      throw new ServletException(why);
    }
  }

  @Override
  public void onTimeout(AsyncEvent event) throws IOException {
    if (claimed.compareAndSet(false, true)) {
      HttpServletRequest request = (HttpServletRequest) event.getSuppliedRequest();
      request.removeAttribute(ATTRIBUTE);
      RefusalResponses.unavailable(request, (HttpServletResponse) event.getSuppliedResponse(), origin);
      event.getAsyncContext().complete();
    }
  }

  @Override
  public void onError(AsyncEvent event) {
    claimed.set(true); // the client went away: an admission coming later is completed at once
  }

  @Override
  public void onComplete(AsyncEvent event) {
    claimed.set(true);
  }

  @Override
  public void onStartAsync(AsyncEvent event) {
    // Only the waiting cycle is ours; the application's own cycles have their own listeners.
  }
}
