package dev.headroom.servlet;

import dev.headroom.enforcement.GateResponse;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.body.ServiceErrors;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.util.Map;

/**
 * How the filter writes the responses it answers itself (refusals, a store that cannot decide, vend
 * errors): the body in its negotiated format with {@code Cache-Control: no-store} and
 * {@code Vary: Accept} ({@link RefusalFormat#refusalFields}), a refused request's unread body
 * settled first so that its connection can carry the next request. Stateless.
 */
final class RefusalResponses {
  private RefusalResponses() {}

  /**
   * Writes a response the gate answered itself ({@link GateResponse}): its status and fields, then its
   * body (none for HEAD), a refusal's unread request content settled first.
   */
  static void write(HttpServletRequest request, HttpServletResponse response, GateResponse answer) throws IOException {
    if (answer.refusal()) {
      settleUnreadBody(request, response);
    }
    response.setStatus(answer.status());
    for (Map.Entry<String, String> f : answer.fields()) {
      response.addHeader(f.getKey(), f.getValue());
    }
    if (answer.contentType().isEmpty()) {
      return; // 304
    }
    response.setContentType(answer.contentType().get());
    response.setContentLength(answer.contentLength());
    if (!request.getMethod().equals("HEAD")) {
      response.getOutputStream().write(answer.body());
    }
  }

  /**
   * 503 temporary-reduced-capacity with the Retry-After every front end sends, for a store that
   * cannot decide under {@code StoreFailureMode.REFUSE} (headroom-http {@link ServiceErrors#storeUnavailable}).
   */
  static void unavailable(HttpServletRequest request, HttpServletResponse response, URI origin) throws IOException {
    Refusal refusal = ServiceErrors.storeUnavailable(false, origin);
    response.setStatus(refusal.status());
    response.setHeader(HeaderNames.RETRY_AFTER, Long.toString(ServiceErrors.storeRetryAfterSeconds(false)));
    RefusalFormat format = RefusalFormat.negotiate(request.getHeader("Accept"));
    writeBody(request, response, format, format.body(refusal, null));
  }

  /** Bytes of a refused request's body read and dropped so that its connection can stay open. */
  static final int SWALLOW_BYTES = 64 * 1024;

  /**
   * A refused request's body is not for the application: up to {@link #SWALLOW_BYTES} of it are
   * read and dropped so that the connection can carry the next request, and a larger or
   * unreadable one ends the connection ({@code Connection: close}, RFC 9112 section 9.6). A
   * container that finds content unread after a committed response closes the connection without
   * being able to say so, and a client that reuses it meanwhile finds it gone.
   */
  static void settleUnreadBody(HttpServletRequest request, HttpServletResponse response) {
    long declared = request.getContentLengthLong();
    if (declared == 0 || declared < 0 && request.getHeader("Transfer-Encoding") == null) {
      return;
    }
    if (declared > SWALLOW_BYTES) {
      response.setHeader("Connection", "close");
      return;
    }
    try {
      InputStream in = request.getInputStream();
      byte[] buf = new byte[8192];
      long n = 0;
      int r;
      while ((r = in.read(buf)) >= 0) {
        n += r;
        if (n > SWALLOW_BYTES) {
          response.setHeader("Connection", "close");
          return;
        }
      }
    } catch (IOException | IllegalStateException e) {
      response.setHeader("Connection", "close");
    }
  }

  static void writeBody(HttpServletRequest request, HttpServletResponse response, RefusalFormat format, byte[] body)
      throws IOException {
    settleUnreadBody(request, response);
    response.setContentType(format.mediaType());
    RefusalFormat.refusalFields(response::setHeader); // Cache-Control: no-store, Vary: Accept
    response.setContentLength(body.length);
    if (!request.getMethod().equals("HEAD")) {
      response.getOutputStream().write(body);
    }
  }
}
