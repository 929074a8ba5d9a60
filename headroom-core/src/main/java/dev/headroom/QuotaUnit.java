package dev.headroom;

import java.util.Locale;

/**
 * What a quota counts, as registered by draft-ietf-httpapi-ratelimit-headers-09 section 3.1.2
 * (the {@code qu} parameter).
 */
public enum QuotaUnit {
  /** Each request consumes one unit (or a configured cost). The draft's default unit. */
  REQUESTS("requests"),
  /** Each request consumes the number of content bytes it transfers. */
  CONTENT_BYTES("content-bytes"),
  /** A request holds one unit while it is in flight and gives it back when it completes. */
  CONCURRENT_REQUESTS("concurrent-requests");

  private final String token;

  QuotaUnit(String token) {
    this.token = token;
  }

  /** The registered name, as sent in {@code qu}. */
  public String token() {
    return token;
  }

  /**
   * Parses a registered name ({@code requests}, {@code content-bytes}, {@code concurrent-requests}).
   *
   * @throws IllegalArgumentException naming the value and the accepted names
   */
  public static QuotaUnit fromToken(String token) {
    for (QuotaUnit unit : values()) {
      if (unit.token.equals(token)) {
        return unit;
      }
    }
    throw new IllegalArgumentException(
        "unit: expected one of requests, content-bytes, concurrent-requests, got '" + token + "'");
  }

  @Override
  public String toString() {
    return token.toLowerCase(Locale.ROOT);
  }
}
