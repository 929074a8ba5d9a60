package dev.headroom.gateway.config;

import java.time.Duration;

/**
 * Timeouts: connecting to an upstream, waiting for its response head, idle connections, and idle
 * tunnels (an upgraded connection, such as a WebSocket, that carried no byte either way for
 * {@code tunnelIdle} is closed).
 */
public record Timeouts(Duration connect, Duration response, Duration idle, Duration tunnelIdle) {
  /** How long a tunnel may carry nothing before it is closed, unless configured: 5 minutes. */
  public static final Duration DEFAULT_TUNNEL_IDLE = Duration.ofMinutes(5);

  /** Timeouts with the default {@link #DEFAULT_TUNNEL_IDLE tunnelIdle}. */
  public Timeouts(Duration connect, Duration response, Duration idle) {
    this(connect, response, idle, DEFAULT_TUNNEL_IDLE);
  }
}
