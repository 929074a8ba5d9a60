package dev.headroom.gateway;

import static dev.headroom.gateway.H2Wire.CONTINUATION;
import static dev.headroom.gateway.H2Wire.DATA;
import static dev.headroom.gateway.H2Wire.END_HEADERS;
import static dev.headroom.gateway.H2Wire.END_STREAM;
import static dev.headroom.gateway.H2Wire.ENHANCE_YOUR_CALM;
import static dev.headroom.gateway.H2Wire.GOAWAY;
import static dev.headroom.gateway.H2Wire.HEADERS;
import static dev.headroom.gateway.H2Wire.NO_ERROR;
import static dev.headroom.gateway.H2Wire.PING;
import static dev.headroom.gateway.H2Wire.PRIORITY;
import static dev.headroom.gateway.H2Wire.REFUSED_STREAM;
import static dev.headroom.gateway.H2Wire.RST_STREAM;
import static dev.headroom.gateway.H2Wire.SETTINGS;
import static dev.headroom.gateway.H2Wire.WINDOW_UPDATE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.headroom.gateway.H2Wire.Frame;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTP/2 towards clients ({@code listen.http2: true}) over real sockets: curl by prior knowledge and by
 * {@code Upgrade: h2c} (RFC 9113 section 3.3, RFC 7540 section 3.2), the JDK client, HTTP/1.1 on the
 * same port; every stream an exchange with the same routes, fields and refusals; malformed requests
 * reset (RFC 9113 section 8.1.1); and hostile HTTP/2 (RFC 9113 section 10.5: the rapid reset,
 * floods of SETTINGS, PING, WINDOW_UPDATE, PRIORITY or empty DATA frames, CONTINUATION floods, HPACK
 * bombs, streams beyond the concurrent limit) answered with GOAWAY and its reason, counted in
 * {@code /metrics}, while other connections are served. A drain says GOAWAY and lets streams finish.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class Http2GatewayTest {
  TestUpstream upstream;
  Gateway gateway;
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeEach
  void start() throws Exception {
    upstream = new TestUpstream();
    gateway = Gateway.builder(GatewayConfig.parse("""
        service: {name: H2}
        listen: {host: 127.0.0.1, port: 0, http2: true}
        admin: {host: 127.0.0.1, port: 0}
        limits: {maxConcurrentStreams: 5}
        shutdown: {drainTimeout: 10s}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          lots: {quota: 100000, window: 1m, partition: global, why: A bound the test never reaches.}
          tight: {quota: 1, window: 1h, partition: global, why: One request an hour keeps the demo fair.}
        routes:
          - {name: tight, methods: [GET, HEAD, POST], path: "/tight/**", upstream: up, policies: [tight]}
          - {name: all, methods: [GET, HEAD, POST], path: "/**", upstream: up, policies: [lots]}
        """.formatted(upstream.port()), "h2.yaml")).threads(2).start();
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

  int port() {
    return gateway.address().getPort();
  }

  String url(String path) {
    return "http://127.0.0.1:" + port() + path;
  }

  // ---- real clients

  @Test
  void curlByPriorKnowledgeGetsTheUpstreamsAnswerWithRateLimitFields_rfc9113_3_3() throws Exception {
    String out = curl("--http2-prior-knowledge", "-si", url("/echo"));
    assertThat(out).startsWith("HTTP/2 200");
    assertThat(out).containsIgnoringCase("ratelimit-policy:").containsIgnoringCase("x-upstream: test")
        .contains("\"method\":\"GET\"");
    // connection-specific fields of the upstream's HTTP/1.1 answer do not cross into HTTP/2 (section 8.2.2)
    assertThat(out.toLowerCase()).doesNotContain("keep-alive:").doesNotContain("connection:")
        .doesNotContain("transfer-encoding:");
    assertThat(upstream.requests.take().headers()).containsKey("host");
  }

  @Test
  void curlSwitchesByUpgradeH2c_rfc7540_3_2() throws Exception {
    String out = curl("--http2", "-si", url("/echo"));
    assertThat(out).contains("HTTP/1.1 101").contains("HTTP/2 200").contains("\"method\":\"GET\"");
  }

  @Test
  void http11IsStillSpokenOnTheSamePort() throws Exception {
    String out = curl("--http1.1", "-si", url("/echo"));
    assertThat(out).startsWith("HTTP/1.1 200").contains("\"method\":\"GET\"");
  }

  @Test
  void theJdkClientUpgradesAndThenUsesStreams() throws Exception {
    HttpClient h2 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = h2.send(HttpRequest.newBuilder(URI.create(url("/echo"))).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
      assertThat(r.body()).contains("\"method\":\"GET\"");
    }
    HttpResponse<String> post = h2.send(HttpRequest.newBuilder(URI.create(url("/echo")))
        .POST(HttpRequest.BodyPublishers.ofString("x".repeat(200_000))).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(post.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(post.body()).contains("\"receivedBytes\":200000");
  }

  @Test
  void bodiesTravelBothWaysUnderFlowControl(@TempDir Path dir) throws Exception {
    Path body = dir.resolve("body");
    Files.write(body, new byte[300_000]);
    assertThat(curl("--http2-prior-knowledge", "-s", "--data-binary", "@" + body, url("/echo")))
        .contains("\"receivedBytes\":300000");
    assertThat(curl("--http2-prior-knowledge", "-s", "-o", "/dev/null", "-w", "%{http_version} %{size_download}",
        url("/bytes/2000000"))).isEqualTo("2 2000000");
  }

  @Test
  void h2loadOverManyStreamsOfOneConnectionGetsEveryAnswer() throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/h2load")), "h2load (nghttp2-client) is installed");
    String out = run("h2load", "-n", "200", "-c", "1", "-m", "5", url("/echo"));
    assertThat(out).contains("200 succeeded").contains("200 2xx");
  }

  @Test
  void aRefusalIsTheSame429AsOverHttp11() throws Exception {
    assertThat(curl("--http2-prior-knowledge", "-s", "-o", "/dev/null", "-w", "%{http_code}", url("/tight/a")))
        .isEqualTo("200");
    String out = curl("--http2-prior-knowledge", "-si", url("/tight/a"));
    assertThat(out).startsWith("HTTP/2 429").containsIgnoringCase("retry-after:")
        .containsIgnoringCase("content-type: application/problem+json").contains("\"why\"");
    String discovery = curl("--http2-prior-knowledge", "-s", url("/.well-known/limits"));
    assertThat(discovery).contains("tight");
  }

  @Test
  void aRequestWithoutContentLengthIsReframedForTheUpstream() throws Exception {
    try (H2Wire c = new H2Wire(port())) {
      c.request(1, "POST", "/echo", false);
      c.frame(DATA, 0, 1, new byte[1000]).frame(DATA, 0, 1, new byte[500]).frame(DATA, END_STREAM, 1, new byte[0]);
      c.flush();
      List<Frame> frames = c.readUntil(DATA, 1);
      Frame head = frames.stream().filter(f -> f.type() == HEADERS).findFirst().orElseThrow();
      assertThat(c.headers(head).status().toString()).isEqualTo("200");
      String body = new String(frames.get(frames.size() - 1).payload(), StandardCharsets.UTF_8);
      assertThat(body).contains("\"receivedBytes\":1500");
    }
  }

  /**
   * A response of known length reaches a stream as HEADERS and DATA with the fields an HTTP/1.1 client
   * is sent, names in lower case (RFC 9113 section 8.2.1): connection-specific fields and those the
   * upstream's Connection names dropped (section 8.2.2), as is Host; the RateLimit fields added. A
   * response to HEAD is HEADERS alone, ending the stream, its Content-Length kept.
   */
  @Test
  void anUpstreamResponseOfKnownLengthIsSentAsFramesWithTheFieldsOfHttp11_rfc9113_8_2() throws Exception {
    String head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Mixed-Case: Kept As Sent\r\n"
        + "Connection: keep-alive, X-Hop\r\nX-Hop: dropped\r\nKeep-Alive: timeout=5\r\nHost: upstream.example\r\n"
        + "Set-Cookie: a=1\r\nContent-Length: 5\r\n\r\n";
    try (java.net.ServerSocket raw = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      Thread answering = new Thread(() -> answerEachRequest(raw, head, "hello"));
      answering.setDaemon(true);
      answering.start();
      gateway.close();
      gateway = Gateway.builder(GatewayConfig.parse("""
          service: {name: H2 fields}
          listen: {host: 127.0.0.1, port: 0, http2: true}
          upstreams:
            raw: {url: "http://127.0.0.1:%d"}
          policies:
            lots: {quota: 100000, window: 1m, partition: global, why: A bound the test never reaches.}
          routes:
            - {name: all, methods: [GET, HEAD], path: "/**", upstream: raw, policies: [lots]}
          """.formatted(raw.getLocalPort()), "h2-fields.yaml")).threads(1).start();
      try (H2Wire c = new H2Wire(port())) {
        c.request(1, "GET", "/fields", true).flush();
        List<Frame> frames = c.readUntil(DATA, 1);
        Frame headers = frames.stream().filter(f -> f.type() == HEADERS).findFirst().orElseThrow();
        assertThat(headers.flags() & END_STREAM).isZero();
        Http2Headers h = c.headers(headers);
        assertThat(h.status().toString()).isEqualTo("200");
        assertThat(h.get("content-type").toString()).isEqualTo("text/plain");
        assertThat(h.get("x-mixed-case").toString()).isEqualTo("Kept As Sent");
        assertThat(h.get("set-cookie").toString()).isEqualTo("a=1");
        assertThat(h.get("content-length").toString()).isEqualTo("5");
        assertThat(h.contains("ratelimit-policy")).isTrue();
        for (String gone : List.of("connection", "x-hop", "keep-alive", "host")) {
          assertThat(h.contains(gone)).as(gone).isFalse();
        }
        for (CharSequence name : h.names()) {
          assertThat(name.toString()).isEqualTo(name.toString().toLowerCase(java.util.Locale.ROOT));
        }
        Frame data = frames.get(frames.size() - 1);
        assertThat(new String(data.payload(), StandardCharsets.US_ASCII)).isEqualTo("hello");
        assertThat(data.flags() & END_STREAM).isEqualTo(END_STREAM);

        c.request(3, "HEAD", "/fields", true).flush();
        List<Frame> headFrames = c.readUntil(HEADERS, 3);
        Frame only = headFrames.get(headFrames.size() - 1);
        assertThat(only.flags() & END_STREAM).isEqualTo(END_STREAM);
        assertThat(c.headers(only).get("content-length").toString()).isEqualTo("5");
      }
    }
  }

  /** A raw HTTP/1.1 upstream: every request on every connection gets {@code head}, and {@code body} unless it is HEAD. */
  private static void answerEachRequest(java.net.ServerSocket raw, String head, String body) {
    while (!raw.isClosed()) {
      try {
        java.net.Socket s = raw.accept();
        Thread t = new Thread(() -> {
          try (s) {
            java.io.InputStream in = s.getInputStream();
            StringBuilder request = new StringBuilder();
            int b;
            while ((b = in.read()) != -1) {
              request.append((char) b);
              if (request.toString().endsWith("\r\n\r\n")) {
                boolean isHead = request.toString().startsWith("HEAD ");
                s.getOutputStream().write((head + (isHead ? "" : body)).getBytes(StandardCharsets.ISO_8859_1));
                s.getOutputStream().flush();
                request.setLength(0);
              }
            }
          } catch (IOException e) {
            // the gateway closed the connection
          }
        });
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return; // the test closed the socket
      }
    }
  }

  // ---- malformed requests: reset, never forwarded (RFC 9113 section 8.1.1)

  @Test
  void malformedRequestsAreResetAndNeverReachTheUpstream_rfc9113_8_1_1() throws Exception {
    String[][] cases = {
        {"transfer-encoding", "chunked"},
        {"connection", "keep-alive"},
        {"x-smuggled", "a\r\nX-Injected: 1"},
        {"host", "elsewhere"},
        {"te", "gzip"},
    };
    int stream = 1;
    try (H2Wire c = new H2Wire(port())) {
      for (String[] field : cases) {
        c.request(stream, "GET", "/echo", true, field[0], field[1]).flush();
        List<Frame> frames = c.readUntil(RST_STREAM, stream);
        Frame last = frames.get(frames.size() - 1);
        assertThat(last.type()).as("%s: %s", field[0], field[1]).isEqualTo(RST_STREAM);
        assertThat(frames).noneMatch(f -> f.type() == HEADERS);
        stream += 2;
      }
      c.request(stream, "GET", "/echo", true).flush();
      List<Frame> ok = c.readUntil(DATA, stream);
      assertThat(c.headers(ok.stream().filter(f -> f.type() == HEADERS).findFirst().orElseThrow()).status().toString())
          .as("the connection still serves well-formed requests").isEqualTo("200");
    }
    assertThat(upstream.requests).hasSize(1);
  }

  // ---- hostile HTTP/2: bounded, GOAWAY with the reason, counted; other connections served

  @Test
  void theRapidResetAttackEndsTheConnection_cve_2023_44487() throws Exception {
    try (H2Wire c = new H2Wire(port())) {
      for (int s = 1; s < 2 * 150; s += 2) {
        c.request(s, "GET", "/echo", true).frame(RST_STREAM, 0, s, H2Wire.int32(8));
      }
      c.flush();
      assertEndsCalmly(c, "rapid-reset");
    }
  }

  @Test
  void aSettingsFloodEndsTheConnection() throws Exception {
    flood("settings-flood", c -> {
      for (int i = 0; i < 100; i++) {
        c.frame(SETTINGS, 0, 0, new byte[0]);
      }
    });
  }

  @Test
  void aPingFloodEndsTheConnection() throws Exception {
    flood("ping-flood", c -> {
      for (int i = 0; i < 100; i++) {
        c.frame(PING, 0, 0, new byte[8]);
      }
    });
  }

  @Test
  void aWindowUpdateFloodEndsTheConnection() throws Exception {
    flood("window-update-flood", c -> {
      for (int i = 0; i < 400; i++) {
        c.frame(WINDOW_UPDATE, 0, 0, H2Wire.int32(1));
      }
    });
  }

  @Test
  void aPriorityFloodEndsTheConnection() throws Exception {
    flood("priority-flood", c -> {
      for (int i = 0; i < 600; i++) {
        c.frame(PRIORITY, 0, 3 + 2 * i, new byte[] {0, 0, 0, 0, 16});
      }
    });
  }

  @Test
  void aFloodOfEmptyDataFramesEndsTheConnection_cve_2019_9518() throws Exception {
    flood("empty-data-flood", c -> {
      try {
        c.request(1, "POST", "/echo", false);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
      for (int i = 0; i < 100; i++) {
        c.frame(DATA, 0, 1, new byte[0]);
      }
    });
  }

  @Test
  void anEndlessHeaderBlockOfContinuationFramesEndsTheConnection_2024() throws Exception {
    flood("continuation-flood", c -> {
      byte[] block;
      try {
        block = c.block("GET", "/echo");
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
      c.frame(HEADERS, END_STREAM, 1, block);
      for (int i = 0; i < 1000; i++) {
        c.frame(CONTINUATION, 0, 1, new byte[0]); // empty: nothing grows that a size bound would see
      }
    });
  }

  @Test
  void anHpackBombIsBoundedByTheHeaderListSize() throws Exception {
    try (H2Wire c = new H2Wire(port())) {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      b.writeBytes(c.block("GET", "/echo"));
      // a literal with incremental indexing (RFC 7541 section 6.2.1): 4000 bytes into the dynamic table
      b.write(0x40);
      b.write(6);
      b.writeBytes("x-bomb".getBytes(StandardCharsets.US_ASCII));
      b.write(0x7f);
      writeInteger(b, 4000 - 127);
      b.writeBytes("a".repeat(4000).getBytes(StandardCharsets.US_ASCII));
      // then the entry (dynamic index 62) referenced 3000 times, one byte each: 12 MB decoded
      for (int i = 0; i < 3000; i++) {
        b.write(0x80 | 62);
      }
      c.frame(HEADERS, END_HEADERS | END_STREAM, 1, b.toByteArray()).flush();
      List<Frame> frames = c.readAll();
      Frame goAway = frames.stream().filter(f -> f.type() == GOAWAY).findFirst()
          .orElseThrow(() -> new AssertionError("no GOAWAY in " + frames));
      assertThat(goAway.errorCode()).isEqualTo(ENHANCE_YOUR_CALM);
      assertThat(goAway.debug()).startsWith("header-list-too-large:");
      Frame answer = frames.stream().filter(f -> f.type() == HEADERS).findFirst().orElseThrow();
      assertThat(c.headers(answer).status().toString()).isEqualTo("431");
    }
    assertThat(metrics()).contains("headroom_http2_refused_total{kind=\"header-list-too-large\"} 1.0");
    assertThat(upstream.requests).as("the bomb's request never went upstream").isEmpty();
    assertServed();
  }

  @Test
  void streamsBeyondTheConcurrentLimitAreRefusedThenTheConnectionEnds() throws Exception {
    try (H2Wire c = new H2Wire(port())) {
      for (int s = 1; s <= 9; s += 2) {
        c.request(s, "POST", "/echo", false); // five streams held open: their bodies never end
      }
      c.request(11, "GET", "/echo", true).flush();
      List<Frame> refused = c.readUntil(RST_STREAM, 11);
      assertThat(refused.get(refused.size() - 1).errorCode()).isEqualTo(REFUSED_STREAM);
      for (int s = 13; s < 13 + 2 * 120; s += 2) {
        c.request(s, "GET", "/echo", true);
      }
      c.flush();
      assertEndsCalmly(c, "excess-streams");
    }
  }

  // ---- drain

  @Test
  void aDrainSaysGoAwayAndTheStreamInFlightFinishes_rfc9113_6_8() throws Exception {
    try (H2Wire c = new H2Wire(port())) {
      c.request(1, "GET", "/slow/1500", true).flush();
      upstream.awaitRequest("/slow/1500");
      gateway.drain(Duration.ofSeconds(10));
      List<Frame> frames = c.readAll();
      Frame goAway = frames.stream().filter(f -> f.type() == GOAWAY).findFirst().orElseThrow();
      assertThat(goAway.errorCode()).isEqualTo(NO_ERROR);
      Frame head = frames.stream().filter(f -> f.type() == HEADERS && f.stream() == 1).findFirst().orElseThrow();
      assertThat(c.headers(head).status().toString()).isEqualTo("200");
      assertThat(frames).anyMatch(f -> f.type() == DATA && f.stream() == 1 && (f.flags() & END_STREAM) != 0);
      assertThat(frames.indexOf(goAway)).as("GOAWAY comes before the response ends").isLessThan(frames.size() - 1);
    }
    assertThat(gateway.drained().toCompletableFuture().get(10, TimeUnit.SECONDS)).isTrue();
  }

  // ---- configuration

  @Test
  void theSettingsAreValidatedWithTheirNames() throws Exception {
    assertThatThrownBy(() -> GatewayConfig.parse("listen: {port: 0, http2: maybe}\n", "bad.yaml"))
        .hasMessageContaining("listen.http2");
    assertThatThrownBy(() -> GatewayConfig.parse("limits: {maxConcurrentStreams: 0}\n", "bad.yaml"))
        .hasMessageContaining("limits.maxConcurrentStreams");
    assertThat(GatewayConfig.parse("""
        service: {name: Plain}
        listen: {port: 0}
        upstreams: {up: {url: "http://127.0.0.1:9"}}
        routes: [{name: all, method: GET, path: "/**", upstream: up}]
        """, "ok.yaml").listen().http2()).as("HTTP/2 is off on cleartext unless asked for").isFalse();
  }

  // ---- helpers

  interface Flood {
    void send(H2Wire c) throws IOException;
  }

  void flood(String kind, Flood flood) throws Exception {
    try (H2Wire c = new H2Wire(port())) {
      flood.send(c);
      c.flush();
      assertEndsCalmly(c, kind);
    }
  }

  /** GOAWAY ENHANCE_YOUR_CALM naming {@code kind}, the connection closed, the kind counted, others served. */
  void assertEndsCalmly(H2Wire c, String kind) throws Exception {
    List<Frame> frames = c.readAll();
    Frame goAway = frames.stream().filter(f -> f.type() == GOAWAY).findFirst()
        .orElseThrow(() -> new AssertionError("no GOAWAY in " + frames));
    assertThat(goAway.errorCode()).isEqualTo(ENHANCE_YOUR_CALM);
    assertThat(goAway.debug()).startsWith(kind + ":");
    assertThat(c.closed()).as("the connection is closed").isTrue();
    assertThat(metrics()).contains("headroom_http2_refused_total{kind=\"" + kind + "\"}");
    assertServed();
  }

  /** Another connection is served while and after one was ended. */
  void assertServed() throws Exception {
    assertThat(curl("--http2-prior-knowledge", "-s", "-o", "/dev/null", "-w", "%{http_code}", url("/echo")))
        .isEqualTo("200");
  }

  String metrics() throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + gateway.adminAddress().orElseThrow().getPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  static void writeInteger(ByteArrayOutputStream b, int rest) {
    while (rest >= 128) {
      b.write(rest % 128 + 128);
      rest /= 128;
    }
    b.write(rest);
  }

  String curl(String... args) throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/curl")), "curl is installed");
    List<String> cmd = new ArrayList<>(List.of("curl", "--max-time", "20"));
    cmd.addAll(Arrays.asList(args));
    return run(cmd.toArray(String[]::new));
  }

  static String run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return out.replace("\r\n", "\n");
  }
}
