package dev.headroom.servlet;

import dev.headroom.servlet.internal.ErrorBodyResponse;
import dev.headroom.servlet.internal.LimitedResponse;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/** How {@link HeadroomFilter} runs the rest of the chain, on a request and on an asynchronous dispatch. Stateless. */
final class FilterChains {
  private FilterChains() {}

  /**
   * Runs the rest of the chain; with error bodies on, an exception the application lets through
   * before anything was sent is answered 500 with its body (and logged), not left to the container.
   */
  static void run(FilterChain chain, HttpServletRequest request, HttpServletResponse response,
      ErrorBodyResponse errors) throws IOException, ServletException {
    if (errors == null) {
      chain.doFilter(request, response);
      return;
    }
    try {
      chain.doFilter(request, response);
    } catch (IOException | ServletException | RuntimeException e) {
      if (!errors.internalError()) {
        throw e;
      }
      request.getServletContext().log("request " + request.getMethod() + " " + request.getRequestURI()
          + " failed; answered 500 with a Graceful Boundaries body", e);
    }
  }

  /**
   * An asynchronous dispatch of a limited request: when it ends without starting another
   * asynchronous cycle, the container completes the response, so fields not yet written are
   * written now.
   */
  static void asyncDispatch(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    chain.doFilter(req, res);
    if (!req.isAsyncStarted()) {
      LimitedResponse limited = LimitedResponse.find(res);
      if (limited != null) {
        limited.commitFields();
      }
    }
  }
}
