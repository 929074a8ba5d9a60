package dev.headroom.gateway;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.gateway.ProxyFramingTest.Head;
import dev.headroom.gateway.ProxyFramingTest.Message;
import dev.headroom.gateway.ProxyFramingTest.Wire;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.MessageDigest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which client a {@code client-ip} policy counts, through the gateway on real sockets, told by the
 * {@code pk} of each response's {@code RateLimit} field (the documented SHA-256 recipe of
 * draft-ietf-httpapi-ratelimit-headers-09 section 6.1, {@link PkExposureTest#input}). The test
 * connects from 127.0.0.1: one gateway trusts it as a proxy ({@code trustedProxies}), and so
 * believes {@code Forwarded} (RFC 7239) and {@code X-Forwarded-For}, {@code Forwarded} winning when
 * both came (RFC 7239 section 7.4); the other trusts nothing and counts 127.0.0.1 whatever the
 * request says.
 */
class ForwardedClientTest {
  private static final int TIMEOUT_MILLIS = 10_000;

  TestUpstream upstream;
  Gateway trusting;
  Gateway untrusting;

  @BeforeEach
  void start() throws Exception {
    upstream = new TestUpstream();
    trusting = start("trustedProxies: [\"127.0.0.1\", 10.0.0.0/8]");
    untrusting = start("");
  }

  private Gateway start(String trust) throws Exception {
    String yaml = """
        service: {name: Forwarded}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        pk: {exposure: hash}
        %s
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          perclient: {quota: 100, window: 1m, partition: client-ip, why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /echo, upstream: up, policies: [perclient]}
        """.formatted(trust, upstream.port());
    return Gateway.builder(GatewayConfig.parse(yaml, "forwarded.yaml")).ticker(ManualTicker.atFixedInstant()).start();
  }

  @AfterEach
  void stop() {
    trusting.close();
    untrusting.close();
    upstream.close();
  }

  /** The pk a response carries for the client-ip partition {@code partition} ("ip:198.51.100.7"). */
  static String pk(String partition) throws Exception {
    return PkExposureTest.sf(MessageDigest.getInstance("SHA-256").digest(PkExposureTest.input("perclient", partition)));
  }

  /** GET /echo with the given field lines (CRLF-separated), from 127.0.0.1; the response's RateLimit. */
  static String rateLimit(Gateway g, String fields) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), g.address().getPort()), TIMEOUT_MILLIS);
      s.setSoTimeout(TIMEOUT_MILLIS);
      s.getOutputStream().write(("GET /echo HTTP/1.1\r\nHost: test\r\n" + fields.replace("\\r\\n", "\r\n")
          + (fields.isEmpty() ? "" : "\r\n") + "Connection: close\r\n\r\n").getBytes(ISO_8859_1));
      InputStream in = new BufferedInputStream(s.getInputStream());
      Head h = Wire.head(in);
      if (h == null) {
        throw new EOFException("the gateway closed the connection instead of answering");
      }
      Message m = Wire.body(in, h, true);
      assertThat(m.status()).isEqualTo(200);
      return h.get("RateLimit");
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', quoteCharacter = '\'', value = {
      "Forwarded alone | Forwarded: for=198.51.100.7 | ip:198.51.100.7",
      "X-Forwarded-For alone | X-Forwarded-For: 198.51.100.8 | ip:198.51.100.8",
      "both: Forwarded wins | X-Forwarded-For: 198.51.100.8\\r\\nForwarded: for=198.51.100.7 | ip:198.51.100.7",
      "quoted IPv6 with a port | Forwarded: for=\"[2001:db8::1]:4711\" | ip:2001:db8::/64",
      "quoted IPv4 with a port, other parameters | Forwarded: proto=https;For=\"198.51.100.11:80\";by=_gw | ip:198.51.100.11",
      "unknown: the proxy is the client | Forwarded: for=unknown\\r\\nX-Forwarded-For: 198.51.100.8 | ip:127.0.0.1",
      "obfuscated: the proxy is the client | Forwarded: for=_hidden | ip:127.0.0.1",
      "several elements, rightmost untrusted | Forwarded: for=6.6.6.6, for=198.51.100.9 | ip:198.51.100.9",
      "several lines through a trusted hop | Forwarded: for=198.51.100.10\\r\\nForwarded: for=10.1.1.1 | ip:198.51.100.10",
      "several elements, all trusted | Forwarded: for=10.2.2.2, for=10.1.1.1 | ip:10.2.2.2",
      "unreadable hop behind a trusted one | Forwarded: for=198.51.100.12, for=_x, for=10.1.1.1 | ip:10.1.1.1"})
  void aTrustedProxysForwardingFieldsNameTheClient_rfc7239(String what, String fields, String partition)
      throws Exception {
    assertThat(rateLimit(trusting, fields)).endsWith(";" + pk(partition));
    // from a peer that is not trusted the same fields are ignored: the peer is the client
    assertThat(rateLimit(untrusting, fields)).endsWith(";" + pk("ip:127.0.0.1"));
  }

  @Test
  void eachClientBehindTheProxyIsCountedApart() throws Exception {
    assertThat(rateLimit(trusting, "Forwarded: for=198.51.100.20")).startsWith("\"perclient\";r=99;");
    assertThat(rateLimit(trusting, "Forwarded: for=198.51.100.20")).startsWith("\"perclient\";r=98;");
    // the same client named by the other header is the same partition
    assertThat(rateLimit(trusting, "X-Forwarded-For: 198.51.100.20")).startsWith("\"perclient\";r=97;");
    assertThat(rateLimit(trusting, "Forwarded: for=198.51.100.21")).startsWith("\"perclient\";r=99;");
    assertThat(rateLimit(trusting, "")).startsWith("\"perclient\";r=99;").endsWith(";" + pk("ip:127.0.0.1"));
    // untrusted: every request is 127.0.0.1's, whoever it claims to come from
    assertThat(rateLimit(untrusting, "Forwarded: for=198.51.100.20")).startsWith("\"perclient\";r=99;");
    assertThat(rateLimit(untrusting, "Forwarded: for=198.51.100.21")).startsWith("\"perclient\";r=98;");
  }
}
