package dev.headroom.gateway;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.headroom.ManualTicker;
import dev.headroom.gateway.TestCertificates.KeyKind;
import dev.headroom.gateway.TestCertificates.Pair;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The TLS listener ({@code listen.tls}) through {@link Gateway} with real clients: the JDK's
 * HttpClient and SSLSocket, curl and openssl s_client, against certificates made per run by
 * openssl. Every key encoding serves; ALPN offers {@code http/1.1}; the files are read again when
 * they change, for new connections only; client certificates partition by subject; plain HTTP to
 * the TLS port is answered 400, closed and counted; bad files are one line naming the file.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TlsListenerTest {
  @TempDir static Path pki;
  static TestCertificates ca;
  static Pair server;

  @TempDir Path dir;
  TestUpstream upstream;
  Gateway gateway;

  @BeforeAll
  static void authority() throws Exception {
    ca = TestCertificates.create(pki);
    server = ca.server("server", KeyKind.RSA_PKCS8);
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    if (upstream != null) {
      upstream.close();
    }
  }

  static String quoted(Path p) {
    return "\"" + p.toString().replace("\\", "\\\\") + "\"";
  }

  String yaml(String tls, String policy) throws IOException {
    if (upstream == null) {
      upstream = new TestUpstream();
    }
    return """
        service: {name: Tls test}
        listen: {host: 127.0.0.1, port: 0, tls: %s}
        admin: {host: 127.0.0.1, port: 0}
        pk: {exposure: hash}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          %s
        routes:
          - {method: GET, path: "/**", upstream: up, policies: [p]}
        """.formatted(tls, upstream.port(), policy);
  }

  static String tls(Pair pair) {
    return "{certificate: " + quoted(pair.certificate()) + ", key: " + quoted(pair.key()) + "}";
  }

  static final String LOTS = "p: {quota: 1000, window: 1m, partition: global, why: A bound the test never reaches.}";

  void start(String yaml) throws Exception {
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "tls.yaml")).threads(2).start();
  }

  int port() {
    return gateway.address().getPort();
  }

  HttpResponse<String> get(SSLContext ssl, String path) throws Exception {
    HttpClient client = HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
    return client.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  String metrics() throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + gateway.adminAddress().orElseThrow().getPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }

  @ParameterizedTest
  @EnumSource(KeyKind.class)
  void everyKeyEncodingServesHttpsAndTellsTheUpstream(KeyKind kind) throws Exception {
    Pair pair = ca.server("server-" + kind, kind);
    assertThat(TestCertificates.firstLine(pair.key())).isEqualTo(switch (kind) {
      case RSA_PKCS8, EC_PKCS8 -> "-----BEGIN PRIVATE KEY-----";
      case RSA_TRADITIONAL -> "-----BEGIN RSA PRIVATE KEY-----";
      case EC_TRADITIONAL -> "-----BEGIN EC PARAMETERS-----";
    });
    start(yaml(tls(pair), LOTS));
    HttpResponse<String> r = get(ca.trusting(), "/echo/x");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.sslSession().orElseThrow().getPeerCertificates()[0]).isEqualTo(
        TestCertificates.certificates(pair.certificate()).get(0));
    TestUpstream.Seen seen = upstream.requests.take();
    assertThat(seen.headers().get("x-forwarded-proto")).containsExactly("https");
    assertThat(seen.headers().get("forwarded")).singleElement().asString().contains("proto=https");
  }

  @Test
  void curlWithTheCaGetsH2ByAlpnAndTheUpstreamHearsHttps_rfc9113_3_2() throws Exception {
    start(yaml(tls(server), LOTS));
    assertThat(curl("--http2")).isEqualTo("200 2");
    TestUpstream.Seen seen = upstream.requests.take();
    assertThat(seen.headers().get("x-forwarded-proto")).containsExactly("https");
    assertThat(curl("--http1.1")).isEqualTo("200 1.1");
  }

  @Test
  void withHttp2OffAlpnOffersHttp11Only() throws Exception {
    start(yaml(tls(server), LOTS).replace("tls: {", "http2: false, tls: {"));
    // curl offers h2 and http/1.1; the gateway picks what it offers
    assertThat(curl("--http2")).isEqualTo("200 1.1");
    String out = TestCertificates.openssl(pki, "s_client", "-connect", "127.0.0.1:" + port(),
        "-servername", "localhost", "-CAfile", ca.ca().toString(), "-alpn", "h2,http/1.1");
    assertThat(out).contains("ALPN protocol: http/1.1");
  }

  private String curl(String version) throws Exception {
    Process curl = new ProcessBuilder("curl", "-sS", version, "--cacert", ca.ca().toString(),
        "--resolve", "localhost:" + port() + ":127.0.0.1", "-o", "/dev/null",
        "-w", "%{http_code} %{http_version}", "https://localhost:" + port() + "/echo/curl")
        .redirectErrorStream(true).start();
    String out = new String(curl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(curl.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return out;
  }

  @Test
  void opensslSeesTheChainVerifiedAndAlpnH2() throws Exception {
    start(yaml(tls(server), LOTS));
    String out = TestCertificates.openssl(pki, "s_client", "-connect", "127.0.0.1:" + port(),
        "-servername", "localhost", "-CAfile", ca.ca().toString(), "-alpn", "h2,http/1.1");
    assertThat(out).contains("Verify return code: 0 (ok)").contains("ALPN protocol: h2")
        .contains("TLSv1.3");
  }

  @Test
  void protocolsLimitTheVersionsOffered() throws Exception {
    start(yaml("{certificate: " + quoted(server.certificate()) + ", key: " + quoted(server.key())
        + ", protocols: [TLSv1.2]}", LOTS));
    HttpResponse<String> r = get(ca.trusting(), "/echo/v");
    assertThat(r.sslSession().orElseThrow().getProtocol()).isEqualTo("TLSv1.2");
    SSLContext only13 = ca.trusting();
    try (SSLSocket s = (SSLSocket) only13.getSocketFactory().createSocket("127.0.0.1", port())) {
      s.setEnabledProtocols(new String[] {"TLSv1.3"});
      assertThat(catchThrowableOfType(s::startHandshake, IOException.class)).isNotNull();
    }
    assertThat(metrics()).contains("headroom_tls_handshake_failures_total 1.0");
  }

  @Test
  void plainHttpToTheTlsPortIsAnswered400ClosedAndCounted() throws Exception {
    start(yaml(tls(server), LOTS));
    try (Socket s = new Socket("127.0.0.1", port())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write("GET /echo HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(ISO_8859_1));
      String answer = new String(s.getInputStream().readAllBytes(), ISO_8859_1);
      assertThat(answer).startsWith("HTTP/1.1 400 Bad Request\r\n").contains("Connection: close")
          .endsWith("This port speaks TLS only: send the request to https.\n");
    }
    assertThat(metrics()).contains("headroom_tls_plaintext_refused_total 1.0");
    assertThat(upstream.requests).isEmpty();
    // and the port still serves TLS
    assertThat(get(ca.trusting(), "/echo/after").statusCode()).isEqualTo(200);
  }

  /** One keep-alive HTTP/1.1 connection over the JDK's SSLSocket, verifying the host name. */
  static final class Connection implements AutoCloseable {
    final SSLSocket socket;
    final InputStream in;
    final OutputStream out;

    Connection(SSLContext ssl, int port) throws IOException {
      socket = (SSLSocket) ssl.getSocketFactory().createSocket("127.0.0.1", port);
      SSLParameters p = socket.getSSLParameters();
      p.setEndpointIdentificationAlgorithm("HTTPS");
      socket.setSSLParameters(p);
      socket.setSoTimeout(10_000);
      socket.startHandshake();
      in = socket.getInputStream();
      out = socket.getOutputStream();
    }

    BigInteger serial() throws IOException {
      return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
    }

    /** Sends a GET and reads its response; returns the status line. */
    String get(String path) throws IOException {
      out.write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n").getBytes(ISO_8859_1));
      out.flush();
      ByteArrayOutputStream head = new ByteArrayOutputStream();
      while (!head.toString(ISO_8859_1).endsWith("\r\n\r\n")) {
        int b = in.read();
        if (b < 0) {
          throw new IOException("connection closed after " + head.toString(ISO_8859_1));
        }
        head.write(b);
      }
      String h = head.toString(ISO_8859_1);
      int length = 0;
      for (String line : h.split("\r\n")) {
        if (line.regionMatches(true, 0, "content-length:", 0, 15)) {
          length = Integer.parseInt(line.substring(15).trim());
        }
      }
      in.readNBytes(length);
      return h.substring(0, h.indexOf("\r\n"));
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  @Test
  void changedFilesServeNewHandshakesWhileOpenConnectionsKeepTheirs() throws Exception {
    Path cert = dir.resolve("live.pem");
    Path key = dir.resolve("live.key");
    Files.copy(server.certificate(), cert);
    Files.copy(server.key(), key);
    start(yaml(tls(new Pair(cert, key)), LOTS));
    BigInteger before = TestCertificates.certificates(server.certificate()).get(0).getSerialNumber();
    try (Connection open = new Connection(ca.trusting(), port())) {
      assertThat(open.get("/echo/1")).isEqualTo("HTTP/1.1 200 OK");
      assertThat(open.serial()).isEqualTo(before);

      Pair renewed = ca.server("renewed", KeyKind.EC_TRADITIONAL);
      BigInteger after = TestCertificates.certificates(renewed.certificate()).get(0).getSerialNumber();
      // as a certificate manager replaces files: written aside, then renamed into place
      Files.copy(renewed.key(), dir.resolve("key.tmp"));
      Files.copy(renewed.certificate(), dir.resolve("cert.tmp"));
      Files.move(dir.resolve("cert.tmp"), cert, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      Files.move(dir.resolve("key.tmp"), key, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);

      BigInteger seen = before;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!seen.equals(after) && System.nanoTime() < deadline) {
        Thread.sleep(100);
        try (Connection fresh = new Connection(ca.trusting(), port())) {
          seen = fresh.serial();
          assertThat(fresh.get("/echo/fresh")).isEqualTo("HTTP/1.1 200 OK");
        }
      }
      assertThat(seen).as("a new connection's certificate after the files changed").isEqualTo(after);
      // the connection opened before the change still works, on its own certificate
      assertThat(open.get("/echo/2")).isEqualTo("HTTP/1.1 200 OK");
      assertThat(open.serial()).isEqualTo(before);
    }
  }

  @Test
  void aDrainClosesAnIdleTlsConnectionCleanly() throws Exception {
    start(yaml(tls(server), LOTS));
    try (Connection idle = new Connection(ca.trusting(), port())) {
      assertThat(idle.get("/echo/before")).isEqualTo("HTTP/1.1 200 OK");
      assertThat(gateway.drain(Duration.ofSeconds(10))).isTrue();
      // close_notify before the TCP close: the JDK reads a clean end of stream, not an error
      assertThat(idle.in.read()).isEqualTo(-1);
    }
    gateway = null;
  }

  @Test
  void clientCertificatesPartitionBySubjectHashedInPk() throws Exception {
    Pair alice = ca.client("alice", "/O=Example/CN=alice");
    Pair bob = ca.client("bob", "/O=Example/CN=bob");
    start(yaml("{certificate: " + quoted(server.certificate()) + ", key: " + quoted(server.key())
        + ", clientAuth: required, clientCa: " + quoted(ca.ca()) + "}",
        "p: {quota: 1, window: 1m, partition: client-cert, why: One call a minute per client.}"));
    SSLContext a = ca.presenting(alice);
    HttpResponse<String> first = get(a, "/echo/a");
    assertThat(first.statusCode()).isEqualTo(200);
    byte[] sha = MessageDigest.getInstance("SHA-256").digest(PkExposureTest.input("p", "cert:CN=alice,O=Example"));
    assertThat(first.headers().firstValue("RateLimit").orElseThrow()).endsWith(";" + PkExposureTest.sf(sha));
    assertThat(get(a, "/echo/a").statusCode()).isEqualTo(429);
    assertThat(get(ca.presenting(bob), "/echo/b").statusCode()).isEqualTo(200);
    // required: a client without a certificate fails the handshake, counted, not served
    assertThat(catchThrowableOfType(() -> {
      try (Connection none = new Connection(ca.trusting(), port())) {
        none.get("/echo/none"); // TLS 1.3: the server judges the client's (empty) certificate after the client's handshake
      }
    }, IOException.class)).isNotNull();
    assertThat(metrics()).contains("headroom_tls_handshake_failures_total 1.0");
  }

  @Test
  void optionalClientAuthServesClientsWithoutACertificateInTheirOwnPartition() throws Exception {
    Pair carol = ca.client("carol", "/CN=carol");
    start(yaml("{certificate: " + quoted(server.certificate()) + ", key: " + quoted(server.key())
        + ", clientAuth: optional, clientCa: " + quoted(ca.ca()) + "}",
        "p: {quota: 1, window: 1m, partition: client-cert, why: One call a minute per client.}"));
    assertThat(get(ca.trusting(), "/echo/anon").statusCode()).isEqualTo(200);
    assertThat(get(ca.trusting(), "/echo/anon").statusCode()).isEqualTo(429);
    assertThat(get(ca.presenting(carol), "/echo/carol").statusCode()).isEqualTo(200);
  }

  @Test
  void anExpiredCertificateStartsAndServes() throws Exception {
    // the gateway's clock says a year from now: the three-day certificate has expired by it
    gateway = Gateway.builder(GatewayConfig.parse(yaml(tls(server), LOTS), "tls.yaml"))
        .ticker(ManualTicker.at(Instant.now().plus(Duration.ofDays(365)))).threads(2).start();
    Process curl = new ProcessBuilder("curl", "-sS", "--cacert", ca.ca().toString(), "-o", "/dev/null",
        "-w", "%{http_code}", "https://127.0.0.1:" + port() + "/echo/e").redirectErrorStream(true).start();
    String out = new String(curl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    curl.waitFor(30, TimeUnit.SECONDS);
    assertThat(out).isEqualTo("200");
  }

  String problem(String tls) throws IOException {
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml(tls, LOTS), "tls.yaml"),
        ConfigException.class);
    assertThat(e).as("a configuration problem").isNotNull();
    assertThat(e.problems()).hasSize(1);
    return e.problems().get(0);
  }

  @Test
  void badFilesAreOneLineNamingTheFile() throws Exception {
    Path missing = dir.resolve("missing.pem");
    assertThat(problem("{certificate: " + quoted(missing) + ", key: " + quoted(server.key()) + "}"))
        .isEqualTo("listen.tls.certificate: \"" + missing + "\" does not exist; expected a PEM file of one or more "
            + "certificates (-----BEGIN CERTIFICATE-----)");

    Path unreadable = dir.resolve("unreadable.key");
    Files.copy(server.key(), unreadable);
    unreadable.toFile().setReadable(false, false);
    if (!Files.isReadable(unreadable)) { // root reads everything
      assertThat(problem("{certificate: " + quoted(server.certificate()) + ", key: " + quoted(unreadable) + "}"))
          .startsWith("listen.tls.key: \"" + unreadable + "\" cannot be read (permission denied)");
    }

    Path notPem = dir.resolve("der.crt");
    TestCertificates.openssl(pki, "x509", "-in", server.certificate().toString(), "-outform", "DER", "-out",
        notPem.toString());
    assertThat(problem("{certificate: " + quoted(notPem) + ", key: " + quoted(server.key()) + "}"))
        .isEqualTo("listen.tls.certificate: \"" + notPem + "\" is not PEM (no -----BEGIN ...----- block); expected "
            + "a PEM file of one or more certificates (-----BEGIN CERTIFICATE-----)");

    Pair other = ca.server("other", KeyKind.EC_PKCS8);
    assertThat(problem("{certificate: " + quoted(server.certificate()) + ", key: " + quoted(other.key()) + "}"))
        .isEqualTo("listen.tls.key: \"" + other.key() + "\" does not match the certificate in \""
            + server.certificate() + "\" (CN=localhost); expected the private key of that certificate");

    Path encrypted = dir.resolve("encrypted.key");
    TestCertificates.openssl(pki, "pkcs8", "-topk8", "-in", server.key().toString(), "-passout", "pass:secret",
        "-out", encrypted.toString());
    assertThat(problem("{certificate: " + quoted(server.certificate()) + ", key: " + quoted(encrypted) + "}"))
        .startsWith("listen.tls.key: \"" + encrypted + "\" holds an encrypted private key");

    assertThat(problem("{certificate: " + quoted(server.certificate()) + ", key: " + quoted(server.key())
        + ", clientAuth: required}")).startsWith("listen.tls.clientCa: missing; expected a PEM file");
    assertThat(problem("{certificate: " + quoted(server.certificate()) + ", key: " + quoted(server.key())
        + ", protocols: [SSLv3]}")).isEqualTo("listen.tls.protocols[0]: \"SSLv3\" is not valid; expected one of "
        + "[TLSv1.3, TLSv1.2]");
    assertThat(problem("{certificate: " + quoted(server.certificate()) + ", key: " + quoted(server.key())
        + ", clientAuth: sometimes, clientCa: " + quoted(ca.ca()) + "}"))
        .startsWith("listen.tls.clientAuth: \"sometimes\" is not valid; expected none, optional");
  }

  @Test
  void theSchemaDescribesListenTls() throws Exception {
    String ok = yaml("{certificate: " + quoted(server.certificate()) + ", key: " + quoted(server.key())
        + ", protocols: [TLSv1.3], clientAuth: optional, clientCa: " + quoted(ca.ca()) + "}", LOTS);
    assertThat(GatewayConfig.parse(ok, "tls.yaml").listen().tls()).hasValueSatisfying(t -> {
      assertThat(t.protocols()).containsExactly("TLSv1.3");
      assertThat(t.clientCa()).contains(ca.ca());
    });
    ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
    assertThat(Schemas.validate(Schemas.CONFIG, yaml.readTree(ok))).isEmpty();
    assertThat(Schemas.validate(Schemas.CONFIG, yaml.readTree(ok.replace("TLSv1.3]", "SSLv3]")))).isNotEmpty();
    assertThat(Schemas.validate(Schemas.CONFIG, yaml.readTree(ok.replace("clientAuth: optional", "clientAuth: maybe"))))
        .isNotEmpty();
  }

  @Test
  void clientCertPartitioningNeedsClientCertificates() throws Exception {
    assertThat(catchThrowableOfType(() -> GatewayConfig.parse(yaml(tls(server),
        "p: {quota: 1, window: 1m, partition: client-cert, why: Per client.}"), "tls.yaml"), ConfigException.class)
        .problems()).singleElement().asString().startsWith("policies.p.partition: \"client-cert\" is not valid; "
        + "expected listen.tls with clientAuth optional or required");
  }
}
