package dev.headroom.gateway.config;

import java.time.Duration;

/**
 * How the gateway stops ({@code shutdown}).
 *
 * @param drainTimeout how long exchanges in flight may take to finish once a drain begins
 *     (SIGTERM, SIGINT, {@code POST /drain}); those still running then are cut
 */
public record Shutdown(Duration drainTimeout) {
  /** {@code shutdown.drainTimeout} when the file does not set it. */
  public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(30);
}
