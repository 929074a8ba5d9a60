package dev.headroom.gateway.internal.tls;

import dev.headroom.gateway.internal.admin.GatewayMetrics;
import dev.headroom.gateway.internal.proxy.ClientTransport;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.SslHandler;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Optional;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.security.auth.x500.X500Principal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * After the TLS handshake, installs the protocol ALPN chose (RFC 7301): {@code http/1.1} when the
 * client chose it or offered no ALPN at all, {@code h2} when offered and chosen. The client
 * certificate's subject is read here, once per connection, and handed to the protocol's handlers
 * ({@link ClientTransport}). Messages that arrive before the choice are buffered by Netty's
 * {@link ApplicationProtocolNegotiationHandler} and passed on to the installed handlers.
 *
 * <p>A failed handshake (an unknown or missing client certificate, no common protocol version) is
 * counted ({@code headroom_tls_handshake_failures_total}) and logged in one line at debug: it is
 * the client's mistake, and a stack trace per bad client would flood the log.
 *
 * <p>Thread-safety: one per connection, confined to its event loop.
 */
final class AlpnSwitch extends ApplicationProtocolNegotiationHandler {
  private static final Logger LOG = LoggerFactory.getLogger(AlpnSwitch.class);

  private final ProtocolPipelines pipelines;
  private final GatewayMetrics metrics;

  AlpnSwitch(ProtocolPipelines pipelines, GatewayMetrics metrics) {
    super(ApplicationProtocolNames.HTTP_1_1);
    this.pipelines = pipelines;
    this.metrics = metrics;
  }

  @Override
  protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
    SslHandler ssl = ctx.pipeline().get(SslHandler.class);
    ClientTransport transport = new ClientTransport(true, subject(ssl));
    if (ApplicationProtocolNames.HTTP_1_1.equals(protocol)) {
      pipelines.http1(ctx.channel(), transport);
    } else if (ApplicationProtocolNames.HTTP_2.equals(protocol) && pipelines.offered().contains(protocol)) {
      pipelines.h2(ctx.channel(), transport);
    } else {
      LOG.debug("client connection {} negotiated {}, which is not offered; closing", ctx.channel(), protocol);
      ctx.close();
      return;
    }
    // the protocol's handlers joined an active channel: they start now (the first read, timers)
    ctx.fireChannelActive();
  }

  /** The verified client certificate's subject, if the client presented one. */
  private static Optional<String> subject(SslHandler ssl) {
    try {
      Certificate[] peer = ssl.engine().getSession().getPeerCertificates();
      if (peer.length > 0 && peer[0] instanceof X509Certificate x) {
        return Optional.of(x.getSubjectX500Principal().getName(X500Principal.RFC2253));
      }
    } catch (SSLPeerUnverifiedException e) {
      // no client certificate (clientAuth none or optional)
    }
    return Optional.empty();
  }

  @Override
  protected void handshakeFailure(ChannelHandlerContext ctx, Throwable cause) {
    metrics.tlsHandshakeFailed();
    LOG.debug("TLS handshake with {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
    ctx.close();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
    if (cause instanceof DecoderException && cause.getCause() instanceof SSLException) {
      super.exceptionCaught(ctx, cause); // handshakeFailure, above
      return;
    }
    LOG.debug("client connection {} failed before its protocol was chosen: {}", ctx.channel(), cause.toString());
    ctx.close();
  }
}
