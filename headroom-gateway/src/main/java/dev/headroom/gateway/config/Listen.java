package dev.headroom.gateway.config;

/**
 * A listening address; port 0 picks any free port. {@code http2}: whether the port speaks HTTP/2
 * as well as HTTP/1.1 (on cleartext: h2c by prior knowledge and by {@code Upgrade: h2c}, RFC 9113
 * section 3.3 and RFC 7540 section 3.2).
 */
public record Listen(String host, int port, boolean http2) {
  /** An HTTP/1.1-only listener. */
  public Listen(String host, int port) {
    this(host, port, false);
  }
}
