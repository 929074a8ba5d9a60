package dev.headroom.servlet.internal;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

/**
 * The request passed down the chain for an allowed, limited request: when the application starts
 * asynchronous processing, the {@link Completion} is registered on the new context at once, so no
 * completion can be missed however fast another thread completes it.
 */
public final class LimitedRequest extends HttpServletRequestWrapper {

  private final Completion completion;

  public LimitedRequest(HttpServletRequest request, Completion completion) {
    super(request);
    this.completion = completion;
  }

  @Override
  public AsyncContext startAsync() {
    return register(super.startAsync());
  }

  @Override
  public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
    return register(super.startAsync(request, response));
  }

  private AsyncContext register(AsyncContext context) {
    if (!completion.isAsync()) {
      completion.asyncStarted();
      context.addListener(completion);
    }
    return context;
  }
}
