package dev.headroom.enforcement.partition;

/**
 * The header that trusted proxies write the client address into. Choose the one your proxies
 * write: the other is then ignored, since a client can send it too and nothing strips it. When
 * proxies of both kinds stand in front, {@link ClientAddressResolver.Builder#headers} reads
 * either, in an order of preference.
 */
public enum ForwardedHeader {
  /** {@code Forwarded} (RFC 7239), its {@code for} parameter. */
  FORWARDED("Forwarded"),
  /** {@code X-Forwarded-For}, the de-facto list of addresses. */
  X_FORWARDED_FOR("X-Forwarded-For");

  private final String fieldName;

  ForwardedHeader(String fieldName) {
    this.fieldName = fieldName;
  }

  /** The header field name. */
  public String fieldName() {
    return fieldName;
  }
}
