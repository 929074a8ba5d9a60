package dev.headroom.gateway.config;

/**
 * What the {@code pk} parameter of the RateLimit fields carries
 * (draft-ietf-httpapi-ratelimit-headers-09 sections 3.1.4, 4.1.3, 6.1, 7.1); never a raw credential.
 */
public enum PartitionKeyMode {
  /** No {@code pk}. */
  OFF("off"),
  /**
   * The predictable hash a client can compute for its own partition: the first 16 bytes of
   * SHA-256 of the policy name, a zero byte and the partition key (such as {@code ip:203.0.113.7}).
   */
  HASH("hash"),
  /** A keyed HMAC-SHA256 of the same input: stable for a client, unpredictable without the key. */
  HMAC("hmac");

  private final String token;

  PartitionKeyMode(String token) {
    this.token = token;
  }

  /** The configuration token. */
  public String token() {
    return token;
  }
}
