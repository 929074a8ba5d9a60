package dev.headroom.gateway.config;

import java.util.Optional;

/**
 * The admin listener: health, metrics, the configuration in force, run-time capacity and the live
 * dashboard. Bound to loopback unless configured otherwise; bound anywhere else it requires a
 * {@code token} (from {@code admin.tokenEnv} or {@code admin.tokenFile}), asked of every request but
 * {@code /health}.
 */
public record Admin(boolean enabled, String host, int port, Optional<AdminToken> token) {

  /** A copy on another port (the command line's {@code --admin-port}). */
  public Admin withPort(int other) {
    return new Admin(enabled, host, other, token);
  }
}
