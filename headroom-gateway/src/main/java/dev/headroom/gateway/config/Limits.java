package dev.headroom.gateway.config;

/**
 * Size limits: request line, all header fields together, request body; and the HTTP/2 streams a
 * client connection may have open at once ({@code SETTINGS_MAX_CONCURRENT_STREAMS}, RFC 9113
 * section 6.5.2), when the listener speaks HTTP/2.
 */
public record Limits(int maxRequestLineBytes, int maxHeaderBytes, long maxBodyBytes, int maxConcurrentStreams) {
  /** The streams a client connection may open at once unless {@code limits.maxConcurrentStreams} says otherwise. */
  public static final int DEFAULT_MAX_CONCURRENT_STREAMS = 100;

  /** Limits with the default {@link #DEFAULT_MAX_CONCURRENT_STREAMS}. */
  public Limits(int maxRequestLineBytes, int maxHeaderBytes, long maxBodyBytes) {
    this(maxRequestLineBytes, maxHeaderBytes, maxBodyBytes, DEFAULT_MAX_CONCURRENT_STREAMS);
  }
}
