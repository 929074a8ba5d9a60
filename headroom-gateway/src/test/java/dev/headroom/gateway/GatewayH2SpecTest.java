package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.conformance.HttpAdapterSpec;
import dev.headroom.conformance.SpecFixture;
import dev.headroom.conformance.SpecUpstream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * {@link HttpAdapterSpec} against the gateway over HTTP/2: the configuration of {@link GatewaySpecTest}
 * with {@code listen.http2: true}, and the specification's client speaking HTTP/2 (the JDK client's
 * {@code Upgrade: h2c} on a connection's first request, streams after it). Every stream is an exchange
 * of the same path, so every behaviour of the specification holds as it does over HTTP/1.1.
 */
class GatewayH2SpecTest extends GatewaySpecTest {

  @Override
  protected URI start(SpecFixture fixture) throws Exception {
    upstream = SpecUpstream.start(fixture);
    String yaml = yaml(fixture, upstream.port()).replace("listen: {host: 127.0.0.1, port: 0}\n",
        "listen: {host: 127.0.0.1, port: 0, http2: true}\n");
    assertThat(yaml).contains("http2: true");
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "spec-h2.yaml"))
        .ticker(fixture.ticker()).store(fixture.store()).threads(2).start();
    return URI.create("http://127.0.0.1:" + gateway.address().getPort());
  }

  @Override
  protected HttpClient.Version httpVersion() {
    return HttpClient.Version.HTTP_2;
  }

  @Test
  void theSpecificationsRequestsTravelOverHttp2() throws Exception {
    get("/.well-known/limits"); // the connection's first request may be the upgrade
    HttpResponse<String> r = get("/.well-known/limits");
    assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(r.statusCode()).isEqualTo(200);
  }
}
