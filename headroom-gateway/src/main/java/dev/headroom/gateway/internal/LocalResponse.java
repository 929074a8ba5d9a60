package dev.headroom.gateway.internal;

import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;

/** A response the gateway produces itself (refusals, errors, discovery). Small, fully in memory. */
record LocalResponse(HttpResponseStatus status, String contentType, byte[] body, HttpHeaders headers) {
  LocalResponse(HttpResponseStatus status, String contentType, byte[] body) {
    this(status, contentType, body, new DefaultHttpHeaders());
  }

  /** Collects header lines, then renders a refusal in the negotiated format. Not thread-safe. */
  static final class Builder {
    private final HttpHeaders headers = new DefaultHttpHeaders();

    void header(String name, String value) {
      headers.add(name, value);
    }

    void set(String name, String value) {
      headers.set(name, value);
    }

    HttpHeaders headers() {
      return headers;
    }

    /**
     * The response. For HTML the page links to {@code path}, where the same refusal is served as
     * JSON to a caller that asks for JSON (Graceful Boundaries section 2, HTML 429 responses).
     */
    LocalResponse build(HttpResponseStatus status, RefusalFormat format, Refusal refusal, String path) {
      return new LocalResponse(status, format.mediaType(), format.body(refusal, path), headers);
    }
  }
}
