package dev.headroom.vend.format;

/**
 * The constants of the vend rate-limit extension (seed 003).
 */
public final class RateLimitExtension {

  /** The extension's URN, as requests declare it in {@code extensions[].urn}. */
  public static final String URN = "urn:vnd:ext:rate-limit";

  /** The {@code warning} text of the seed's "Approaching Limit" example. */
  public static final String WARNING = "Rate limit nearly exhausted";

  /**
   * A scope carries {@link #WARNING} when less than this share of its limit remains (seed 003,
   * "Standard Response": "e.g., &lt; 10% remaining").
   */
  public static final double WARNING_THRESHOLD = 0.10;

  /** The reserved function answering discovery (seed 003, "Discovery"). */
  public static final String CAPABILITIES_FUNCTION = "vend.capabilities";

  /** The protocol name every envelope carries. */
  public static final String PROTOCOL_NAME = "vend";

  /** The protocol version written when the request's own cannot be read. */
  public static final String DEFAULT_PROTOCOL_VERSION = "0.1.0";

  private RateLimitExtension() {}

  /** Whether {@code remaining} of {@code limit} is under {@link #WARNING_THRESHOLD}. */
  public static boolean nearlyExhausted(long remaining, long limit) {
    return remaining < WARNING_THRESHOLD * limit;
  }
}
