package dev.headroom.gateway.internal.proxy;

import java.io.IOException;

/**
 * A connection to an {@code https://} upstream whose TLS handshake failed: the TCP connection was
 * made, but the upstream could not be reached securely. Carries the {@link UpstreamTlsFailure} class
 * the caller is told; the cause is the handshake's own failure, for the log.
 */
final class UpstreamHandshakeException extends IOException {
  private static final long serialVersionUID = 1L;

  private final transient UpstreamTlsFailure failure;

  UpstreamHandshakeException(UpstreamTlsFailure failure, Throwable cause) {
    super("TLS handshake failed: " + failure.token, cause);
    this.failure = failure;
  }

  UpstreamTlsFailure failure() {
    return failure;
  }
}
