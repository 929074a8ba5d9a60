package dev.headroom.gateway;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.headroom.ManualTicker;
import dev.headroom.gateway.config.Upstream;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.security.cert.X509Certificate;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * HTTPS upstreams ({@code upstreams.NAME.url: https://host:port}) through the gateway started from
 * a YAML file, against a real TLS upstream (the JDK's {@link HttpsServer} running
 * {@link TestUpstream}'s script) with certificates that {@code openssl} makes for this run: a
 * private CA trusted through {@code tls.trustedCa}, server certificates that are good, from a
 * stranger, for another name or expired, and client certificates for mutual TLS in each PEM key form
 * the gateway reads. A handshake that fails is a 502 {@code upstream_not_secure} (a Graceful
 * Boundaries refusal body) naming only the class of the failure, and one throttled log line with the
 * reason; a TLS connection is pooled and reused like a plain one.
 */
class UpstreamTlsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PASSWORD = "changeit";

  @TempDir static Path certs;
  @TempDir Path dir;

  private final List<AutoCloseable> closing = new ArrayList<>();
  private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  // ---- certificates, made once per run ----

  @BeforeAll
  static void makeCertificates() throws Exception {
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=Headroom Test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign");
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "stranger-ca.key", "-out", "stranger-ca.pem",
        "-days", "2", "-subj", "/CN=Stranger CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign");
    Files.writeString(certs.resolve("server.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
        + "extendedKeyUsage=serverAuth\n");
    Files.writeString(certs.resolve("elsewhere.ext"), "subjectAltName=DNS:elsewhere.example\n"
        + "extendedKeyUsage=serverAuth\n");
    Files.writeString(certs.resolve("client.ext"), "extendedKeyUsage=clientAuth\n");
    server("good", "ca", "server.ext", "2");
    server("stranger", "stranger-ca", "server.ext", "2");
    server("elsewhere", "ca", "elsewhere.ext", "2");
    server("expired", "ca", "server.ext", "-1"); // not after: a day before not before, so already past
    // client certificates, one per PEM key form: PKCS#8 RSA, traditional RSA (PKCS#1), traditional EC (SEC 1)
    openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "client-pkcs8.key");
    openssl("genrsa", "-traditional", "-out", "client-rsa.key", "2048");
    openssl("ecparam", "-name", "prime256v1", "-genkey", "-out", "client-ec.key"); // EC PARAMETERS, then EC PRIVATE KEY
    for (String form : List.of("pkcs8", "rsa", "ec")) {
      openssl("req", "-new", "-key", "client-" + form + ".key", "-out", "client-" + form + ".csr",
          "-subj", "/CN=headroom-gateway");
      openssl("x509", "-req", "-in", "client-" + form + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
          "-out", "client-" + form + ".pem", "-days", "2", "-extfile", "client.ext");
    }
    assertThat(Files.readString(certs.resolve("client-pkcs8.key"))).contains("BEGIN PRIVATE KEY");
    assertThat(Files.readString(certs.resolve("client-rsa.key"))).contains("BEGIN RSA PRIVATE KEY");
    assertThat(Files.readString(certs.resolve("client-ec.key"))).contains("BEGIN EC PARAMETERS")
        .contains("BEGIN EC PRIVATE KEY");
  }

  /** A server certificate NAME.pem issued by {@code ca} with the extensions of {@code ext}, and NAME.p12 for the server. */
  private static void server(String name, String ca, String ext, String days) throws Exception {
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
        "-subj", "/CN=" + name);
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key", "-CAcreateserial",
        "-out", name + ".pem", "-days", days, "-extfile", ext);
    openssl("pkcs12", "-export", "-in", name + ".pem", "-inkey", name + ".key", "-out", name + ".p12",
        "-passout", "pass:" + PASSWORD);
  }

  private static void openssl(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(certs.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("%s\n%s", cmd, out).isZero();
  }

  // ---- the TLS upstream ----

  /** {@link TestUpstream} over TLS with the certificate NAME.p12, counting the connections it accepts. */
  private static final class TlsUpstream implements AutoCloseable {
    final AtomicInteger connections = new AtomicInteger();
    final TestUpstream script;
    final int port;

    TlsUpstream(String certificate, boolean clientCertificateRequired) throws Exception {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      try (InputStream in = new FileInputStream(certs.resolve(certificate + ".p12").toFile())) {
        keys.load(in, PASSWORD.toCharArray());
      }
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, PASSWORD.toCharArray());
      KeyStore clients = KeyStore.getInstance(KeyStore.getDefaultType());
      clients.load(null, null);
      try (InputStream in = Files.newInputStream(certs.resolve("ca.pem"))) {
        clients.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(clients);
      SSLContext tls = SSLContext.getInstance("TLS");
      tls.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
      HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
      server.setHttpsConfigurator(new HttpsConfigurator(tls) {
        @Override
        public void configure(HttpsParameters params) { // once per accepted connection
          connections.incrementAndGet();
          SSLParameters p = getSSLContext().getDefaultSSLParameters();
          p.setNeedClientAuth(clientCertificateRequired);
          params.setSSLParameters(p);
        }
      });
      port = server.getAddress().getPort();
      script = new TestUpstream(server);
    }

    @Override
    public void close() {
      script.close();
    }
  }

  private TlsUpstream upstream(String certificate, boolean clientCertificateRequired) throws Exception {
    TlsUpstream u = new TlsUpstream(certificate, clientCertificateRequired);
    closing.add(u);
    return u;
  }

  // ---- the gateway ----

  private static String yaml(String url, String tls) {
    return """
        service: {name: TLS test, description: Reaches its upstream over TLS.}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        timeouts: {connect: 5s, response: 5s}
        upstreams:
          up:
            url: "%s"
        %s
        routes:
          - {name: echo, method: GET, path: "/echo/**", upstream: up}
        """.formatted(url, tls.isEmpty() ? "" : "    tls: " + tls);
  }

  ManualTicker ticker = ManualTicker.atFixedInstant();

  /** The gateway from a YAML file in the certificates' folder, so that relative file names resolve there. */
  private Gateway gateway(String yaml) throws Exception {
    Path file = Files.createTempFile(certs, "headroom-", ".yaml");
    Files.writeString(file, yaml);
    assertThat(Schemas.validate(Schemas.CONFIG, new YAMLMapper().readTree(yaml))).isEmpty();
    Gateway g = Gateway.builder(GatewayConfig.load(file)).configFile(file).watchFile(false)
        .ticker(ticker).threads(2).start();
    closing.add(g);
    return g;
  }

  private HttpResponse<String> get(Gateway g, String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.address().getPort() + path))
        .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  // ---- success and pooling ----

  @Test
  void aCertificateFromTheTrustedCaIsReachedAndOneTlsConnectionCarriesEveryRequest() throws Exception {
    TlsUpstream up = upstream("good", false);
    Gateway g = gateway(yaml("https://localhost:" + up.port, "{trustedCa: ca.pem}"));
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> r = get(g, "/echo/" + i);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(r.headers().firstValue("x-upstream")).hasValue("test");
    }
    assertThat(up.connections).as("TLS connections accepted (handshakes) for 5 sequential requests").hasValue(1);
    // Host is the client's, as for an http upstream; SNI and the verified name are the upstream's own
    TestUpstream.Seen seen = up.script.requests.poll(5, TimeUnit.SECONDS);
    assertThat(seen.headers().get("host")).containsExactly("127.0.0.1:" + g.address().getPort());
    assertThat(seen.headers().get("x-forwarded-host")).containsExactly("127.0.0.1:" + g.address().getPort());
  }

  @Test
  void anIpAddressUrlIsVerifiedAgainstTheCertificatesIpAddress() throws Exception {
    TlsUpstream up = upstream("good", false);
    Gateway g = gateway(yaml("https://127.0.0.1:" + up.port, "{trustedCa: " + certs.resolve("ca.pem") + "}"));
    assertThat(get(g, "/echo/ip").statusCode()).isEqualTo(200);
  }

  @Test
  void aReloadThatChangesTheTlsSettingsConnectsAnewWithThem() throws Exception {
    TlsUpstream up = upstream("good", false);
    Path file = Files.createTempFile(certs, "headroom-", ".yaml");
    Files.writeString(file, yaml("https://localhost:" + up.port, ""));
    Gateway g = Gateway.builder(GatewayConfig.load(file)).configFile(file).watchFile(false)
        .ticker(ticker).threads(2).start();
    closing.add(g);
    assertNotSecure(get(g, "/echo/1"), "unknown-ca", "its certificate is not issued by a trusted certificate authority");
    Files.writeString(file, yaml("https://localhost:" + up.port, "{trustedCa: ca.pem}"));
    g.reloadFromFile();
    assertThat(get(g, "/echo/2").statusCode()).isEqualTo(200);
    // and back: the pool of the trusting settings is not kept for settings that trust less
    Files.writeString(file, yaml("https://localhost:" + up.port, ""));
    g.reloadFromFile();
    assertNotSecure(get(g, "/echo/3"), "unknown-ca", "its certificate is not issued by a trusted certificate authority");
  }

  // ---- handshakes that fail ----

  @Test
  void aCertificateFromAnUnknownCaIsA502SayingSoAndOneThrottledLogLine() throws Exception {
    TlsUpstream up = upstream("stranger", false);
    Gateway g = gateway(yaml("https://localhost:" + up.port, "{trustedCa: ca.pem}"));
    String log = capturingLog(() -> {
      assertNotSecure(get(g, "/echo/1"), "unknown-ca", "its certificate is not issued by a trusted certificate authority");
      assertNotSecure(get(g, "/echo/2"), "unknown-ca", "its certificate is not issued by a trusted certificate authority");
      ticker.advance(Duration.ofSeconds(10));
      assertNotSecure(get(g, "/echo/3"), "unknown-ca", "its certificate is not issued by a trusted certificate authority");
    });
    List<String> lines = log.lines().filter(l -> l.contains("could not be reached securely")).toList();
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0)).contains("WARN").contains("upstream up (localhost:" + up.port + ")")
        .contains("not issued by a trusted certificate authority")
        .contains("unable to find valid certification path to requested target")
        .doesNotContain("more like it");
    assertThat(lines.get(1)).contains("(and 1 more like it in the last 10 s)");
    assertThat(up.script.requests).isEmpty(); // nothing was sent to the impostor
  }

  @Test
  void aCertificateForAnotherNameIsA502WrongName() throws Exception {
    TlsUpstream up = upstream("elsewhere", false);
    Gateway g = gateway(yaml("https://localhost:" + up.port, "{trustedCa: ca.pem}"));
    String log = capturingLog(() ->
        assertNotSecure(get(g, "/echo/1"), "wrong-name", "its certificate is not issued for the upstream's host name"));
    assertThat(log).contains("No subject alternative DNS name matching localhost");
    assertThat(up.script.requests).isEmpty();
  }

  @Test
  void anExpiredCertificateIsA502Expired() throws Exception {
    TlsUpstream up = upstream("expired", false);
    Gateway g = gateway(yaml("https://localhost:" + up.port, "{trustedCa: ca.pem}"));
    assertNotSecure(get(g, "/echo/1"), "expired", "its certificate has expired or is not yet valid");
    assertThat(up.script.requests).isEmpty();
  }

  @Test
  void withoutTrustedCaOnlyTheJdksAuthoritiesAreTrusted() throws Exception {
    TlsUpstream up = upstream("good", false);
    Gateway g = gateway(yaml("https://localhost:" + up.port, ""));
    assertNotSecure(get(g, "/echo/1"), "unknown-ca", "its certificate is not issued by a trusted certificate authority");
  }

  @Test
  void aPlainHttpServerBehindAnHttpsUrlIsAFailedHandshake() throws Exception {
    // a plain HTTP server answers the ClientHello as a bad request, as nginx and others do
    try (ServerSocket plain = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
      Thread server = new Thread(() -> {
        try (java.net.Socket s = plain.accept()) {
          s.getInputStream().read(new byte[512]);
          s.getOutputStream().write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
              .getBytes(UTF_8));
        } catch (IOException e) {
          // the test has ended
        }
      });
      server.start();
      Gateway g = gateway(yaml("https://localhost:" + plain.getLocalPort(), "{trustedCa: ca.pem}"));
      String log = capturingLog(() ->
          assertNotSecure(get(g, "/echo/1"), "handshake-failed", "the TLS handshake with it failed"));
      assertThat(log).contains("could not be reached securely").contains("it does not speak TLS on this port")
          .doesNotContain("485454502f"); // the upstream's bytes are not dumped into the log
      server.join(5000);
    }
  }

  @Test
  void anUpstreamThatNeverAnswersTheHandshakeFailsItWithinTheConnectTimeout() throws Exception {
    // the kernel completes the TCP connection (the backlog), nobody ever speaks TLS on it
    try (ServerSocket silent = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
      Gateway g = gateway(yaml("https://localhost:" + silent.getLocalPort(), "{trustedCa: ca.pem}")
          .replace("connect: 5s", "connect: 1s"));
      String log = capturingLog(() ->
          assertNotSecure(get(g, "/echo/1"), "handshake-failed", "the TLS handshake with it failed"));
      assertThat(log).contains("handshake timed out after 1000ms");
    }
  }

  // ---- mutual TLS ----

  @ParameterizedTest(name = "client key as {0}")
  @ValueSource(strings = {"pkcs8", "rsa", "ec"})
  void anUpstreamRequiringAClientCertificateIsReachedWithOne(String keyForm) throws Exception {
    TlsUpstream up = upstream("good", true);
    Gateway g = gateway(yaml("https://localhost:" + up.port, "{trustedCa: ca.pem, certificate: client-" + keyForm
        + ".pem, key: client-" + keyForm + ".key}"));
    for (int i = 0; i < 3; i++) {
      assertThat(get(g, "/echo/" + i).statusCode()).isEqualTo(200);
    }
    assertThat(up.connections).hasValue(1);
  }

  /**
   * An upstream that requires a client certificate refuses a gateway without one. With TLS 1.3 the
   * refusal is an alert that arrives after the gateway's side of the handshake completed (RFC 8446
   * section 4.4.2.4), so after the request went up; it is still a 502 upstream_not_secure. The
   * upstream here is Netty's TLS server, which sends that alert as servers do (the JDK's HttpsServer
   * only closes the connection).
   */
  @Test
  void anUpstreamRequiringAClientCertificateRefusesTheGatewayWithoutOne() throws Exception {
    MutualTlsUpstream up = new MutualTlsUpstream();
    closing.add(up);
    Gateway without = gateway(yaml("https://localhost:" + up.port(), "{trustedCa: ca.pem}"));
    assertNotSecure(get(without, "/echo/1"), "handshake-failed", "the TLS handshake with it failed");
    // the client connection survives the 502, and the next request tries a new upstream connection
    assertNotSecure(get(without, "/echo/2"), "handshake-failed", "the TLS handshake with it failed");
    assertThat(up.requests).hasValue(0);
    // the same upstream with the certificate: answered, over one connection
    int before = up.connections.get();
    Gateway with = gateway(yaml("https://localhost:" + up.port(), "{trustedCa: ca.pem, certificate: client-pkcs8.pem,"
        + " key: client-pkcs8.key}"));
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = get(with, "/echo/" + i);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("CN=headroom-gateway");
    }
    assertThat(up.requests).hasValue(3);
    assertThat(up.connections.get() - before).isEqualTo(1);
  }

  /** Netty's TLS server requiring a client certificate from the test CA; answers with the client certificate's subject. */
  private static final class MutualTlsUpstream implements AutoCloseable {
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger requests = new AtomicInteger();
    private final EventLoopGroup group = new NioEventLoopGroup(1);
    private final Channel server;

    MutualTlsUpstream() throws Exception {
      SslContext tls = SslContextBuilder.forServer(certs.resolve("good.pem").toFile(), certs.resolve("good.key").toFile())
          .sslProvider(SslProvider.JDK).trustManager(certs.resolve("ca.pem").toFile())
          .clientAuth(ClientAuth.REQUIRE).build();
      server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              connections.incrementAndGet();
              SslHandler ssl = tls.newHandler(ch.alloc());
              ch.pipeline().addLast(ssl, new HttpServerCodec(), new HttpObjectAggregator(65536),
                  new SimpleChannelInboundHandler<FullHttpRequest>() {
                    @Override
                    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) throws Exception {
                      requests.incrementAndGet();
                      String subject = ((X509Certificate) ssl.engine().getSession().getPeerCertificates()[0])
                          .getSubjectX500Principal().getName();
                      FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                          Unpooled.copiedBuffer(subject, UTF_8));
                      r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain")
                          .setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
                      ctx.writeAndFlush(r);
                    }

                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                      ctx.close(); // a refused handshake: the alert is sent, the connection closed
                    }
                  });
            }
          }).bind("127.0.0.1", 0).sync().channel();
    }

    int port() {
      return ((InetSocketAddress) server.localAddress()).getPort();
    }

    @Override
    public void close() throws Exception {
      server.close().sync();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  private void assertNotSecure(HttpResponse<String> r, String failure, String words) throws IOException {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(502);
    JsonNode body = JSON.readTree(r.body());
    assertThat(Schemas.validate(Schemas.REFUSAL, body)).isEmpty();
    assertThat(body.path("error").asText()).isEqualTo("upstream_not_secure");
    assertThat(body.path("detail").asText()).isEqualTo("The upstream service could not be reached securely: "
        + words + ".");
    assertThat(body.path("why").asText()).isNotBlank();
    assertThat(body.path("tlsFailure").asText()).isEqualTo(failure);
    // the caller learns the class, nothing of the certificates or of the JDK
    assertThat(r.body()).doesNotContain("PKIX").doesNotContain("CN=").doesNotContain("Exception")
        .doesNotContain("localhost");
  }

  // ---- the configuration ----

  @Test
  void anHttpsUrlWithoutAPortIsPort443() throws Exception {
    GatewayConfig c = GatewayConfig.parse(yaml("https://api.example.com", ""), "tls.yaml");
    Upstream up = c.upstreams().get("up");
    assertThat(up.port()).isEqualTo(443);
    assertThat(up.scheme()).isEqualTo("https");
    assertThat(up.tls()).isPresent();
    Upstream v6 = GatewayConfig.parse(yaml("https://[::1]", ""), "v6.yaml").upstreams().get("up");
    assertThat(v6.host()).isEqualTo("::1"); // the address itself, as the certificate's IP entries are compared
    assertThat(v6.port()).isEqualTo(443);
    assertThat(GatewayConfig.parse(yaml("http://api.example.com", ""), "plain.yaml").upstreams().get("up").port())
        .isEqualTo(80);
  }

  @Test
  void aMissingCaFileIsOneLineNamingIt() throws Exception {
    Path missing = dir.resolve("no-such-ca.pem");
    List<String> problems = problems(yaml("https://localhost:8443", "{trustedCa: " + missing + "}"));
    assertThat(problems).containsExactly("upstreams.up.tls.trustedCa: \"" + missing + "\" does not exist; expected a"
        + " PEM file of one or more certificates (-----BEGIN CERTIFICATE-----)");
  }

  @Test
  void aFileThatIsNotPemIsOneLineNamingIt() throws Exception {
    Path notPem = dir.resolve("ca.der");
    Files.write(notPem, new byte[] {0x30, (byte) 0x82, 0x01, 0x0a, 0x02, 0x01});
    List<String> problems = problems(yaml("https://localhost:8443", "{trustedCa: " + notPem + "}"));
    assertThat(problems).containsExactly("upstreams.up.tls.trustedCa: \"" + notPem + "\" is not PEM (no -----BEGIN"
        + " ...----- block); expected a PEM file of one or more certificates (-----BEGIN CERTIFICATE-----)");
  }

  @Test
  void aKeyThatIsNotTheCertificatesIsRefusedAtLoad() throws Exception {
    Path cert = certs.resolve("client-rsa.pem");
    Path key = certs.resolve("client-pkcs8.key");
    List<String> problems = problems(yaml("https://localhost:8443", "{certificate: " + cert + ", key: " + key + "}"));
    assertThat(problems).containsExactly("upstreams.up.tls.key: \"" + key + "\" does not match the certificate in"
        + " \"" + cert + "\" (CN=headroom-gateway); expected the private key of that certificate");
  }

  @Test
  void aCertificateWithoutAKeyAndTlsOnAnHttpUpstreamAreRefused() throws Exception {
    assertThat(problems(yaml("https://localhost:8443", "{certificate: " + certs.resolve("client-rsa.pem") + "}")))
        .containsExactly("upstreams.up.tls.key: missing; expected both tls.certificate and tls.key (a client"
            + " certificate and its private key, as PEM files) or neither");
    assertThat(problems(yaml("http://localhost:8080", "{trustedCa: " + certs.resolve("ca.pem") + "}")))
        .singleElement().asString().startsWith("upstreams.up.tls: ").contains("no tls unless url is https://host:port");
    assertThat(problems(yaml("ftp://localhost:21", ""))).singleElement().asString()
        .startsWith("upstreams.up.url: \"ftp://localhost:21\"")
        .endsWith("expected an http://host:port or https://host:port URL without path, query or user info");
    // a certificate file where a key belongs: the key's problem names the file, says what it holds
    Path cert = certs.resolve("client-rsa.pem");
    assertThat(problems(yaml("https://localhost:8443", "{certificate: " + cert + ", key: " + cert + "}")))
        .containsExactly("upstreams.up.tls.key: \"" + cert + "\" holds no private key, only CERTIFICATE; expected a"
            + " PEM file of one unencrypted private key (-----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY or EC PRIVATE"
            + " KEY)");
  }

  private static List<String> problems(String yaml) {
    return catchThrowableOfType(() -> GatewayConfig.parse(yaml, "tls.yaml"), ConfigException.class).problems();
  }

  // ---- the log ----

  private interface Run {
    void run() throws Exception;
  }

  /** What the gateway logs while {@code r} runs (slf4j-simple writes to the System.err of the moment). */
  private static String capturingLog(Run r) throws Exception {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream err = System.err;
    System.setErr(new PrintStream(new OutputStream() {
      @Override
      public void write(int b) {
        err.write(b);
        log.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) {
        err.write(b, off, len);
        log.write(b, off, len);
      }
    }, true, UTF_8));
    try {
      r.run();
    } finally {
      System.setErr(err);
    }
    return log.toString(UTF_8);
  }
}
