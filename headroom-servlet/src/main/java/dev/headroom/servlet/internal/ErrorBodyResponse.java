package dev.headroom.servlet.internal;

import dev.headroom.http.body.ServiceErrors;
import dev.headroom.servlet.ErrorBodies;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.net.URI;

/**
 * The response of a request when the filter's error bodies are on
 * ({@code HeadroomFilter.Builder.errorBodies}): a {@code sendError} of the application or the
 * container's default servlet (404, 405, 500, ...) is answered with the Graceful Boundaries body
 * every front end sends for that status (headroom-http {@link ServiceErrors#forStatus}: {@code error},
 * {@code detail}, {@code why}, and {@code allowedMethods} on 405 from the {@code Allow} field the
 * application set; Graceful Boundaries section 6), written by {@link ErrorBodies}, instead of the container's error page. The message given to
 * {@code sendError(int, String)} is not sent: it is written for a log, not for a caller.
 *
 * <p>Written from one thread at a time (the servlet contract).
 */
public final class ErrorBodyResponse extends HttpServletResponseWrapper {

  private final HttpServletRequest request;
  private final String path;
  private final String discoveryPath;
  private final URI origin;

  /**
   * @param path the path inside the application, as the filter matched it
   * @param discoveryPath where the discovery document is served, or null
   * @param origin the service's origin, or null
   */
  public ErrorBodyResponse(HttpServletRequest request, HttpServletResponse response, String path, String discoveryPath,
      URI origin) {
    super(response);
    this.request = request;
    this.path = path;
    this.discoveryPath = discoveryPath;
    this.origin = origin;
  }

  @Override
  public void sendError(int sc) throws IOException {
    if (!write(sc)) {
      super.sendError(sc);
    }
  }

  @Override
  public void sendError(int sc, String msg) throws IOException {
    if (!write(sc)) {
      super.sendError(sc, msg);
    }
  }

  /**
   * Answers an exception the application let through, when nothing was sent yet: 500 with its
   * body. Returns false when the response was committed already (the container handles it then).
   */
  public boolean internalError() throws IOException {
    return write(500);
  }

  private boolean write(int status) throws IOException {
    if (isCommitted() || status < 400 || status > 599) {
      return false;
    }
    ErrorBodies.write(request, this, status, path, discoveryPath, origin);
    flushBuffer();
    return true;
  }
}
