package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.config.UpstreamTls;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.security.GeneralSecurityException;
import java.time.Duration;
import javax.net.ssl.SSLException;

/**
 * The client side of TLS to one {@code https://} upstream, built once from its {@link UpstreamTls}
 * (a pool keeps it while the settings stay equal): Netty's {@link SslContext} for a client, trusting
 * what {@link UpstreamTrust} trusts, presenting the configured client certificate when the upstream
 * asks (mutual TLS), and verifying the upstream's host name: Netty does not unless asked, so
 * {@code HTTPS} endpoint identification is set on every engine (RFC 9110 section 4.3.4). Each
 * connection's handler is made for the upstream's host and port, which the engine sends as SNI
 * (RFC 6066 section 3) when the host is a name, and verifies the certificate against.
 *
 * <p>The JDK's TLS provider, so that every failure reaches {@link UpstreamTlsFailure#of} as the
 * JDK's exceptions. Immutable and thread-safe.
 */
final class UpstreamTlsContext {
  private final SslContext context;

  private UpstreamTlsContext(SslContext context) {
    this.context = context;
  }

  /**
   * The context of {@code tls}.
   *
   * @throws IllegalArgumentException when the JDK refuses the certificates or key (the configuration
   *     reader has read and matched them already, so this is a platform without their algorithm)
   */
  static UpstreamTlsContext of(UpstreamTls tls) {
    try {
      SslContextBuilder b = SslContextBuilder.forClient()
          .sslProvider(SslProvider.JDK)
          .trustManager(UpstreamTrust.of(tls.trustedCa()))
          .endpointIdentificationAlgorithm("HTTPS");
      tls.key().ifPresent(k -> b.keyManager(k, tls.certificateChain()));
      return new UpstreamTlsContext(b.build());
    } catch (SSLException | GeneralSecurityException e) {
      throw new IllegalArgumentException("TLS to an upstream cannot be set up with " + tls + ": " + e.getMessage(), e);
    }
  }

  /**
   * The handler of one new connection to {@code host:port}: a client engine for that peer (SNI and
   * the name verified), whose handshake must end within {@code handshakeTimeout}.
   */
  SslHandler newHandler(ByteBufAllocator alloc, String host, int port, Duration handshakeTimeout) {
    SslHandler h = context.newHandler(alloc, host, port);
    h.setHandshakeTimeoutMillis(Math.max(1, handshakeTimeout.toMillis()));
    return h;
  }
}
