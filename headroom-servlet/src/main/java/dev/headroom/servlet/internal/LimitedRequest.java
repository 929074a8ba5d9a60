package dev.headroom.servlet.internal;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

/**
 * The request passed down the chain for an allowed, limited request.
 *
 * <ul>
 * <li>When the application starts asynchronous processing, the {@link Completion} is registered on
 *   the new context at once, so no completion can be missed however fast another thread completes it.
 * <li>{@link #startAsync()} starts it with this request and the {@link LimitedResponse}, not the
 *   container's originals, so that what the application writes from another thread
 *   ({@code asyncContext.getResponse()}) and what an asynchronous dispatch writes still passes
 *   through the limited response and commits its RateLimit fields with the real status.
 * <li>The context returned writes the fields, if nothing did yet, before
 *   {@link AsyncContext#complete()} lets the container commit an empty response.
 * </ul>
 */
public final class LimitedRequest extends HttpServletRequestWrapper {

  private final LimitedResponse response;
  private final Completion completion;
  private volatile LimitedAsyncContext context;

  public LimitedRequest(HttpServletRequest request, LimitedResponse response, Completion completion) {
    super(request);
    this.response = response;
    this.completion = completion;
  }

  @Override
  public AsyncContext startAsync() {
    return register(super.startAsync(this, response));
  }

  @Override
  public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
    return register(super.startAsync(request, response));
  }

  @Override
  public AsyncContext getAsyncContext() {
    AsyncContext current = super.getAsyncContext();
    LimitedAsyncContext ours = context;
    return ours != null && ours.delegate == current ? ours : current;
  }

  private AsyncContext register(AsyncContext started) {
    if (!completion.isAsync()) {
      completion.asyncStarted();
      started.addListener(completion);
    }
    LimitedAsyncContext ours = new LimitedAsyncContext(started, response);
    context = ours;
    return ours;
  }

  /** Delegates everything; writes the pending fields before completing. */
  static final class LimitedAsyncContext implements AsyncContext {
    final AsyncContext delegate;
    private final LimitedResponse response;

    LimitedAsyncContext(AsyncContext delegate, LimitedResponse response) {
      this.delegate = delegate;
      this.response = response;
    }

    @Override
    public ServletRequest getRequest() {
      return delegate.getRequest();
    }

    @Override
    public ServletResponse getResponse() {
      return delegate.getResponse();
    }

    @Override
    public boolean hasOriginalRequestAndResponse() {
      return delegate.hasOriginalRequestAndResponse();
    }

    @Override
    public void dispatch() {
      delegate.dispatch();
    }

    @Override
    public void dispatch(String path) {
      delegate.dispatch(path);
    }

    @Override
    public void dispatch(ServletContext context, String path) {
      delegate.dispatch(context, path);
    }

    @Override
    public void complete() {
      response.commitFields();
      delegate.complete();
    }

    @Override
    public void start(Runnable run) {
      delegate.start(run);
    }

    @Override
    public void addListener(AsyncListener listener) {
      delegate.addListener(listener);
    }

    @Override
    public void addListener(AsyncListener listener, ServletRequest request, ServletResponse response) {
      delegate.addListener(listener, request, response);
    }

    @Override
    public <T extends AsyncListener> T createListener(Class<T> clazz) throws ServletException {
      return delegate.createListener(clazz);
    }

    @Override
    public void setTimeout(long timeout) {
      delegate.setTimeout(timeout);
    }

    @Override
    public long getTimeout() {
      return delegate.getTimeout();
    }
  }
}
