package dev.headroom.gateway.config;

import java.util.Objects;
import java.util.Optional;

/**
 * A listening address; port 0 picks any free port.
 *
 * @param tls when present the listener speaks TLS only ({@code listen.tls}); cleartext otherwise
 */
public record Listen(String host, int port, Optional<ListenTls> tls) {

  /** Checks that nothing is null. */
  public Listen {
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(tls, "tls");
  }

  /** A cleartext listener. */
  public Listen(String host, int port) {
    this(host, port, Optional.empty());
  }

  /** A copy on another port (the command line's {@code --port}), with the same TLS settings. */
  public Listen withPort(int other) {
    return new Listen(host, other, tls);
  }
}
