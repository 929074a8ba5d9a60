package dev.headroom.http.body;

import java.util.Optional;

/**
 * The problem types registered by draft-ietf-httpapi-ratelimit-headers-09 (sections 5 and 10.2),
 * each with the extension member {@code violated-policies}: the names of the policies whose quota
 * was exceeded.
 */
public enum ProblemType {
  /** Section 5.1: the requests exceed one or more quota policies. Recommended status 429. */
  QUOTA_EXCEEDED("https://iana.org/assignments/http-problem-types#quota-exceeded", "Quota Exceeded", 429,
      "rate_limit_exceeded"),
  /**
   * Section 5.2: the requests cannot be satisfied now because capacity is temporarily reduced.
   * Recommended status 503.
   */
  TEMPORARY_REDUCED_CAPACITY("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity",
      "Temporary Reduced Capacity", 503, "temporary_reduced_capacity"),
  /**
   * Section 5.3: a pattern of requests suggesting unintentional or malicious behaviour was
   * detected. Recommended status 429.
   */
  ABNORMAL_USAGE_DETECTED("https://iana.org/assignments/http-problem-types#abnormal-usage-detected",
      "Abnormal Usage Detected", 429, "abnormal_usage_detected");

  private final String uri;
  private final String title;
  private final int status;
  private final String error;

  ProblemType(String uri, String title, int status, String error) {
    this.uri = uri;
    this.title = title;
    this.status = status;
    this.error = error;
  }

  /** The type URI, as sent in the problem details {@code type} member. */
  public String uri() {
    return uri;
  }

  /** The registered title (section 10.2). */
  public String title() {
    return title;
  }

  /** The recommended HTTP status code. */
  public int status() {
    return status;
  }

  /**
   * The Graceful Boundaries {@code error} token sent with this type: {@code rate_limit_exceeded}
   * (the token Graceful Boundaries agents match on) for quota-exceeded, the type's name in
   * snake_case otherwise.
   */
  public String error() {
    return error;
  }

  /** The type with this URI, if it is one of the three. */
  public static Optional<ProblemType> fromUri(String uri) {
    for (ProblemType t : values()) {
      if (t.uri.equals(uri)) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }
}
