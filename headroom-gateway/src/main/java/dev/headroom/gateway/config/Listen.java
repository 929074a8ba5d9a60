package dev.headroom.gateway.config;

import java.util.Objects;
import java.util.Optional;

/**
 * A listening address; port 0 picks any free port.
 *
 * @param tls when present the listener speaks TLS only ({@code listen.tls}); cleartext otherwise
 * @param http2 whether the port speaks HTTP/2 as well as HTTP/1.1: with TLS by ALPN (RFC 9113
 *     section 3.2), on cleartext h2c by prior knowledge (section 3.3) and by {@code Upgrade: h2c}
 *     (RFC 7540 section 3.2)
 */
public record Listen(String host, int port, Optional<ListenTls> tls, boolean http2) {

  /** Checks that nothing is null. */
  public Listen {
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(tls, "tls");
  }

  /** A cleartext HTTP/1.1-only listener. */
  public Listen(String host, int port) {
    this(host, port, Optional.empty(), false);
  }

  /** A cleartext listener, HTTP/2 as {@code http2} says. */
  public Listen(String host, int port, boolean http2) {
    this(host, port, Optional.empty(), http2);
  }

  /** A copy on another port (the command line's {@code --port}), with the same TLS and HTTP/2. */
  public Listen withPort(int other) {
    return new Listen(host, other, tls, http2);
  }
}
