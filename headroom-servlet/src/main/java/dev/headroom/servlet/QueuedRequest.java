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
 * <p>A refusal is written without a second dispatch, on a container thread, so that it never
 * reaches the application whatever dispatcher types the filter is mapped for; an admission needs
 * the filter on the {@code ASYNC} dispatch to write its fields and complete it (without it the
 * admission is completed when the request completes, without fields).
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
  /** Whether the filter took the verdict on the {@code ASYNC} dispatch. */
  private volatile boolean taken;
  private final URI origin;

  private QueuedRequest(CompletableFuture<Verdict> verdict, URI origin) {
    this.verdict = verdict;
    this.origin = origin;
  }

  /**
   * Starts waiting: asynchronous processing with a timeout of {@code longestWait} plus
   * {@link #MARGIN}. When {@code verdict} completes, an answer of the gate's own (a refusal) is
   * written on a container thread ({@link AsyncContext#start}) without running the application;
   * any other verdict dispatches the request again, for the filter to run the application with it.
   */
  static void start(HttpServletRequest request, HttpServletResponse response, CompletableFuture<Verdict> verdict,
      Duration longestWait, URI origin) {
    QueuedRequest q = new QueuedRequest(verdict, origin);
    request.setAttribute(ATTRIBUTE, q);
    AsyncContext context = request.startAsync(request, response);
    context.setTimeout(longestWait.plus(MARGIN).toMillis());
    context.addListener(q);
    verdict.whenComplete((v, e) -> {
      if (!q.claimed.compareAndSet(false, true)) {
        if (v != null && v.kind() == Verdict.Kind.ADMIT) {
          v.admission().completeAsync(CLIENT_CLOSED, 0);
        }
      } else if (v != null && v.kind() == Verdict.Kind.ANSWER) {
        context.start(() -> q.answer(context, v));
      } else {
        context.dispatch();
      }
    });
  }

  /** Writes the gate's answer on a container thread and completes the request. */
  private void answer(AsyncContext context, Verdict v) {
    HttpServletRequest request = (HttpServletRequest) context.getRequest();
    request.removeAttribute(ATTRIBUTE);
    try {
      RefusalResponses.write(request, (HttpServletResponse) context.getResponse(), v.answer());
    } catch (IOException | RuntimeException e) {
      request.getServletContext().log("a refusal after waiting could not be written", e);
    } finally {
      context.complete();
    }
  }

  /** The waiting request of an {@code ASYNC} dispatch, taken off the request; null when there is none. */
  static QueuedRequest take(HttpServletRequest request) {
    Object q = request.getAttribute(ATTRIBUTE);
    if (!(q instanceof QueuedRequest)) {
      return null;
    }
    request.removeAttribute(ATTRIBUTE);
    QueuedRequest queued = (QueuedRequest) q;
    queued.taken = true;
    return queued;
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

  /**
   * The request is over. An admission the filter never took (it is not mapped for the
   * {@code ASYNC} dispatcher type, so the application ran without it) is completed here with the
   * response's status, so that its leases are given back; its RateLimit fields were not written.
   */
  @Override
  public void onComplete(AsyncEvent event) {
    claimed.set(true);
    Verdict v = verdict.isDone() && !verdict.isCompletedExceptionally() ? verdict.join() : null;
    if (!taken && v != null && v.kind() == Verdict.Kind.ADMIT) {
      HttpServletResponse response = (HttpServletResponse) event.getSuppliedResponse();
      v.admission().completeAsync(response.getStatus(), 0);
    }
  }

  @Override
  public void onStartAsync(AsyncEvent event) {
    // Only the waiting cycle is ours; the application's own cycles have their own listeners.
  }
}
