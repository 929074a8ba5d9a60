package dev.headroom.gateway.internal;

import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;

/** A response the gateway produces itself (refusals, errors, discovery). Small, fully in memory. */
record LocalResponse(HttpResponseStatus status, String contentType, byte[] body, HttpHeaders headers) {

  /**
   * Header fields the gateway writes itself, without Netty's per-character validation: every
   * name is a constant and every value comes from headroom-http's emitters (Structured Fields,
   * integers) or from this module's constants, valid by construction. The validation was 18% of
   * the event loop's time on the refusal path (JFR, 1 ms sampling). Fields copied from a request
   * or an upstream response never go into these.
   */
  static HttpHeaders ownHeaders() {
    return DefaultHttpHeadersFactory.headersFactory().withValidation(false).newHeaders();
  }

  LocalResponse(HttpResponseStatus status, String contentType, byte[] body) {
    this(status, contentType, body, ownHeaders());
  }

  /** Collects header lines, then renders a refusal in the negotiated format. Not thread-safe. */
  static final class Builder {
    private final HttpHeaders headers = ownHeaders();

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
