package dev.headroom.checker;

import dev.headroom.http.HeaderNames;
import dev.headroom.http.headers.RateLimitFields;
import java.net.URI;
import java.net.http.HttpHeaders;
import java.util.Locale;

/** One observed exchange. */
record Seen(String method, URI uri, int status, HttpHeaders headers, byte[] body, RateLimitFields fields) {
  String where() {
    String q = uri.getRawQuery();
    return method + " " + (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
        + (q == null ? "" : "?" + q) + " -> " + status;
  }

  boolean success() {
    return status >= 200 && status < 300;
  }

  boolean refusal() {
    return status == 429 || (status == 503 && headers.firstValue(HeaderNames.RETRY_AFTER).isPresent());
  }

  String contentType() {
    return headers.firstValue("Content-Type").orElse("").toLowerCase(Locale.ROOT);
  }
}
