package dev.headroom;

/**
 * How a {@link QuotaPolicy} counts. Each constant names the algorithm; the class comment of its
 * implementation in {@code dev.headroom.internal} explains the state it keeps and what remaining
 * ({@code r}), reset ({@code t}) and Retry-After mean for it.
 */
public enum Algorithm {
  /** An exact counter per window aligned to the epoch; resets all at once at the window's end. */
  FIXED_WINDOW("fixed-window"),
  /** The weighted two-window counter: smooth like a sliding log, two counters per key. */
  SLIDING_WINDOW("sliding-window"),
  /** A token bucket of {@code q} tokens refilled at {@code q} per {@code w}, kept as GCRA. */
  TOKEN_BUCKET("token-bucket"),
  /** Leases held while requests are in flight, with a timeout so lost releases cannot leak. */
  CONCURRENCY("concurrency");

  private final String token;

  Algorithm(String token) {
    this.token = token;
  }

  /** The name used in configuration files. */
  public String token() {
    return token;
  }

  /**
   * Parses a configuration name such as {@code token-bucket}.
   *
   * @throws IllegalArgumentException naming the value and the accepted names
   */
  public static Algorithm fromToken(String token) {
    for (Algorithm algorithm : values()) {
      if (algorithm.token.equals(token)) {
        return algorithm;
      }
    }
    throw new IllegalArgumentException(
        "algorithm: expected one of fixed-window, sliding-window, token-bucket, concurrency, got '"
            + token + "'");
  }
}
