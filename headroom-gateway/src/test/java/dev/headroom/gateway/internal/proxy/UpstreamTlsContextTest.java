package dev.headroom.gateway.internal.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.gateway.config.UpstreamTls;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslHandler;
import java.time.Duration;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.Test;

/**
 * Each upstream connection's TLS engine is made for the upstream's host: the host goes out as SNI
 * (RFC 6066 section 3) and the certificate is checked against it ({@code HTTPS} endpoint
 * identification, RFC 9110 section 4.3.4), which Netty leaves off unless asked. The end-to-end
 * tests (UpstreamTlsTest) reach their upstream as {@code localhost}, a name the JDK sends no SNI
 * for (it has no dot), so SNI is checked here, on the engine itself.
 */
class UpstreamTlsContextTest {
  @Test
  void theEngineSendsTheUpstreamHostAsSniAndVerifiesTheCertificateAgainstIt() {
    UpstreamTlsContext tls = UpstreamTlsContext.of(UpstreamTls.jdkTrust());
    SslHandler h = tls.newHandler(ByteBufAllocator.DEFAULT, "api.example.com", 8443, Duration.ofSeconds(3));
    SSLParameters p = h.engine().getSSLParameters();
    assertThat(h.engine().getUseClientMode()).isTrue();
    assertThat(h.engine().getPeerHost()).isEqualTo("api.example.com");
    assertThat(h.engine().getPeerPort()).isEqualTo(8443);
    assertThat(p.getServerNames()).containsExactly(new SNIHostName("api.example.com"));
    assertThat(p.getEndpointIdentificationAlgorithm()).isEqualTo("HTTPS");
    assertThat(h.getHandshakeTimeoutMillis()).isEqualTo(3000);
  }

  @Test
  void anIpAddressIsVerifiedButNotSentAsSni() {
    UpstreamTlsContext tls = UpstreamTlsContext.of(UpstreamTls.jdkTrust());
    SSLParameters p = tls.newHandler(ByteBufAllocator.DEFAULT, "127.0.0.1", 443, Duration.ofSeconds(1))
        .engine().getSSLParameters();
    assertThat(p.getServerNames()).isNullOrEmpty(); // RFC 6066 section 3: literal IP addresses are not permitted
    assertThat(p.getEndpointIdentificationAlgorithm()).isEqualTo("HTTPS");
  }
}
