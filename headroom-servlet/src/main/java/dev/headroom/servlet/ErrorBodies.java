package dev.headroom.servlet;

import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.body.ServiceErrors;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.List;

/**
 * Writes the Graceful Boundaries body (section 6) of a non-success status a servlet application's
 * framework or container answered: the texts every Headroom front end sends for it (headroom-http
 * {@link ServiceErrors#forStatus}), as problem+json, JSON or HTML by the request's {@code Accept},
 * with {@code Cache-Control: no-store} and {@code Vary: Accept}. The filter's opt-in error bodies
 * ({@link HeadroomFilter.Builder#errorBodies}) and the Spring Boot starter's error controller both
 * answer through it. Stateless.
 */
public final class ErrorBodies {
  private ErrorBodies() {}

  /**
   * Writes the body of {@code status} for the request, replacing whatever was buffered; a 405 whose
   * response has no {@code Allow} field is answered 400, since a 405 must name the methods allowed.
   *
   * @param path the request's path, as the caller sent it
   * @param discoveryPath where the discovery document is served, or null when there is none
   * @param origin the service's origin, or null
   * @return the status written
   * @throws IllegalStateException when the response is committed already
   */
  public static int write(HttpServletRequest request, HttpServletResponse response, int status, String path,
      String discoveryPath, URI origin) throws IOException {
    List<String> allowed = ServiceErrors.allowedMethods(response.getHeader("Allow"));
    int sent = status == 405 && allowed.isEmpty() ? 400 : status;
    Refusal body = ServiceErrors.forStatus(sent, request.getMethod(), path, allowed, discoveryPath);
    if (origin != null) {
      body = body.toBuilder().origin(origin).build();
    }
    RefusalFormat format = RefusalFormat.negotiate(request.getHeader("Accept"));
    byte[] bytes = format.body(body, null);
    response.resetBuffer();
    response.setStatus(sent);
    response.setContentType(format.mediaType());
    RefusalFormat.refusalFields(response::setHeader);
    response.setContentLength(bytes.length);
    if (!request.getMethod().equals("HEAD")) {
      response.getOutputStream().write(bytes);
    }
    return sent;
  }
}
