package dev.headroom.gateway;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Message framing through the gateway (RFC 9112 sections 6 and 7, RFC 9110 section 7.6), byte for
 * byte over real sockets: the client writes exact request bytes and reads exact response bytes,
 * and the upstream is a scripted socket server that answers exact bytes per path and records the
 * exact request it received.
 *
 * <p>Every string of wire bytes here is ISO-8859-1, which maps each byte to the character of the
 * same value: comparing two such strings compares the bytes.
 */
class ProxyFramingTest {
  /** Socket reads and waits for the upstream: generous, for a loaded machine; passing tests never wait this long. */
  private static final int TIMEOUT_MILLIS = 10_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A chunked body with a chunk extension and a trailer field (RFC 9112 sections 7.1.1 and 7.1.2). */
  private static final String CHUNKED_BODY = "5;name=value\r\nhello\r\n7\r\n, world\r\n0\r\nX-Checksum: 42\r\n\r\n";
  private static final String CHUNKED = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
      + "Trailer: X-Checksum\r\n\r\n" + CHUNKED_BODY;
  private static final String FULL = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfull";

  @TempDir Path dir;
  RawUpstream upstream;
  Gateway gateway;

  @BeforeEach
  void start() throws Exception {
    upstream = new RawUpstream();
    Path config = dir.resolve("framing.yaml");
    Files.writeString(config, """
        service: {name: Framing}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        timeouts: {connect: 10s, response: 10s}
        limits: {maxBodyBytes: 1048576}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          plenty:
            quota: 1000
            window: 1m
            algorithm: fixed-window
            partition: global
            why: A quota that never runs out, so that its fields are on every response.
        routes:
          - {name: all, methods: [GET, POST, PUT], path: "/**", upstream: up, policies: [plenty], dialect: ietf}
        """.formatted(upstream.port()));
    gateway = Gateway.builder(GatewayConfig.load(config)).ticker(ManualTicker.atFixedInstant()).threads(2).start();
  }

  @AfterEach
  void stop() {
    gateway.close();
    upstream.close();
  }

  // ---- responses: chunked, until close, no body (RFC 9112 section 6.3) ----

  @Test
  void chunkedResponseReachesAnHttp11ClientAsReceivedWithExtensionAndTrailer_rfc9112_7_1() throws Exception {
    upstream.answer("/x", CHUNKED);
    upstream.answer("/next", FULL);
    try (RawClient c = new RawClient()) {
      c.send("GET /x HTTP/1.1\r\nHost: test\r\n\r\n");
      Message r = c.read();
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.head().all("transfer-encoding")).containsExactly("chunked");
      assertThat(r.head().has("content-length")).isFalse();
      assertThat(r.body()).isEqualTo(CHUNKED_BODY); // the chunk framing as the upstream sent it
      assertThat(r.data()).isEqualTo("hello, world");
      assertThat(r.trailers()).containsExactly(new Field("X-Checksum", "42"));
      assertThat(r.head().get("trailer")).isEqualTo("X-Checksum");
      assertThat(r.head().get("RateLimit-Policy")).isEqualTo("\"plenty\";q=1000;w=60");
      assertThat(r.head().get("RateLimit")).isEqualTo("\"plenty\";r=999;t=60");
      // the body's end was found: the connection serves the next request
      c.send("GET /next HTTP/1.1\r\nHost: test\r\n\r\n");
      assertThat(c.read().data()).isEqualTo("full");
    }
  }

  @Test
  void chunkedResponseReachesAnHttp10ClientAsDataEndedByTheClose_rfc9112_7_1() throws Exception {
    upstream.answer("/x", CHUNKED);
    try (RawClient c = new RawClient()) {
      c.send("GET /x HTTP/1.0\r\n\r\n");
      Message r = c.read(); // no Content-Length, no chunking: read until the gateway closes
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.head().has("transfer-encoding")).isFalse();
      assertThat(r.head().has("content-length")).isFalse();
      assertThat(r.head().get("connection")).isEqualTo("close");
      assertThat(r.body()).isEqualTo("hello, world");
      assertThat(r.head().get("RateLimit")).isEqualTo("\"plenty\";r=999;t=60");
      c.assertClosed();
    }
  }

  @Test
  void bodyUntilCloseIsRechunkedAndTheClientConnectionStaysUsable_rfc9112_6_3_item8() throws Exception {
    upstream.answerThenClose("/close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n"
        + "until the end");
    upstream.answer("/next", FULL);
    try (RawClient c = new RawClient()) {
      c.send("GET /close HTTP/1.1\r\nHost: test\r\n\r\n");
      Message r = c.read();
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.head().all("transfer-encoding")).containsExactly("chunked");
      assertThat(r.head().has("connection")).isFalse(); // the upstream's close is its own
      assertThat(r.data()).isEqualTo("until the end");
      c.send("GET /next HTTP/1.1\r\nHost: test\r\n\r\n");
      assertThat(c.read().data()).isEqualTo("full");
    }
    Seen first = upstream.take();
    Seen second = upstream.take();
    assertThat(first.target()).isEqualTo("/close");
    assertThat(second.target()).isEqualTo("/next");
    assertThat(second.connection()).isNotEqualTo(first.connection());
    try (RawClient c = new RawClient()) {
      c.send("GET /close HTTP/1.0\r\n\r\n"); // no chunking in HTTP/1.0: the gateway's close ends it
      Message r = c.read();
      assertThat(r.head().has("transfer-encoding")).isFalse();
      assertThat(r.head().get("connection")).isEqualTo("close");
      assertThat(r.body()).isEqualTo("until the end");
      c.assertClosed();
    }
  }

  @Test
  void headResponseHasContentLengthAndNoBody_rfc9110_9_3_2() throws Exception {
    upstream.answer("/head", "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nContent-Type: text/plain\r\n\r\n");
    upstream.answer("/full", FULL);
    try (RawClient c = new RawClient()) {
      c.send("HEAD /head HTTP/1.1\r\nHost: test\r\n\r\n");
      Message head = c.readAfterHead();
      assertThat(head.status()).isEqualTo(200);
      assertThat(head.head().get("content-length")).isEqualTo("1234");
      assertThat(head.head().has("transfer-encoding")).isFalse();
      // had the gateway waited for 1234 body bytes, this would time out; had it sent any, they
      // would be read as this response's status line
      c.send("GET /full HTTP/1.1\r\nHost: test\r\n\r\n");
      Message full = c.read();
      assertThat(full.status()).isEqualTo(200);
      assertThat(full.data()).isEqualTo("full");
    }
    Seen head = upstream.take();
    assertThat(head.method()).isEqualTo("HEAD");
    assertThat(upstream.take().connection()).isEqualTo(head.connection()); // reused: nothing left unread
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "HTTP/1.1 204 No Content\\r\\nX-A: 1\\r\\n\\r\\n",
      "HTTP/1.1 304 Not Modified\\r\\nETag: \"v1\"\\r\\nContent-Length: 99\\r\\n\\r\\n",
      "HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\n\\r\\n"})
  void responsesWithoutABodyLeaveTheConnectionReadyForTheNext_rfc9112_6_3(String response) throws Exception {
    String bodiless = response.replace("\\r\\n", "\r\n");
    upstream.answer("/none", bodiless);
    upstream.answer("/full", FULL);
    try (RawClient c = new RawClient()) {
      c.send("GET /none HTTP/1.1\r\nHost: test\r\n\r\nGET /none HTTP/1.1\r\nHost: test\r\n\r\n");
      for (int i = 0; i < 2; i++) {
        Message r = c.readAfterHead();
        assertThat(r.head().startLine()).isEqualTo(bodiless.substring(0, bodiless.indexOf('\r')));
        assertThat(r.head().has("transfer-encoding")).isFalse();
        // the upstream's own fields, no body framing added
        assertThat(r.head().get("content-length")).isEqualTo(Wire.head(bodiless).get("content-length"));
      }
      c.send("GET /full HTTP/1.1\r\nHost: test\r\n\r\n");
      assertThat(c.read().data()).isEqualTo("full");
    }
    Seen first = upstream.take();
    assertThat(upstream.take().connection()).isEqualTo(first.connection());
    assertThat(upstream.take().connection()).isEqualTo(first.connection());
  }

  @Test
  void interimResponsesAreNotForwardedAndExpectIsNotSentUpstream_rfc9110_10_1_1() throws Exception {
    upstream.interim("/upload", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n");
    upstream.answer("/upload", "HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\ncreated");
    try (RawClient c = new RawClient()) {
      c.send("PUT /upload HTTP/1.1\r\nHost: test\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
      Message go = c.readAfterHead();
      assertThat(go.head().startLine()).isEqualTo("HTTP/1.1 100 Continue");
      c.send("hello");
      Message r = c.read();
      assertThat(r.status()).isEqualTo(201);
      assertThat(r.data()).isEqualTo("created");
    }
    Seen seen = upstream.take();
    assertThat(seen.head().has("expect")).isFalse();
    assertThat(seen.head().get("content-length")).isEqualTo("5");
    assertThat(seen.body()).isEqualTo("hello");
  }

  @Test
  void aFinalAnswerToAnExpect100ContinueRequestClosesTheConnection_rfc9110_10_1_1() throws Exception {
    try (RawClient c = new RawClient()) {
      // DELETE is not a method of the route: answered 405 without reading the body
      c.send("DELETE /x HTTP/1.1\r\nHost: test\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
      Message r = c.read();
      assertThat(r.status()).isEqualTo(405);
      assertThat(r.head().get("connection")).isEqualTo("close");
      c.assertClosed(); // no wait for a body the client was told not to send
    }
    assertThat(upstream.requests).isEmpty();
  }

  @Test
  void aBodyAnsweredLocallyIsDroppedOnlyUpToTheBodyBound() throws Exception {
    try (RawClient c = new RawClient()) {
      c.send("DELETE /x HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n");
      assertThat(c.read().status()).isEqualTo(405);
      String chunk = Integer.toHexString(65536) + "\r\n" + "x".repeat(65536) + "\r\n";
      try {
        for (int i = 0; i < 24; i++) { // 1.5 MiB, past limits.maxBodyBytes (1 MiB)
          c.send(chunk);
        }
      } catch (IOException e) {
        // the gateway may already have closed: what is asserted is that it does
      }
      c.assertClosed();
    }
  }

  @Test
  void transferCodingsBeforeChunkedAreKeptWithTheFraming_rfc9112_6_1() throws Exception {
    String body = "6\r\n\u001f\u008b\u0008\u0000zz\r\n0\r\n\r\n";
    upstream.answer("/gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" + body);
    try (RawClient c = new RawClient()) {
      c.send("GET /gzip HTTP/1.1\r\nHost: test\r\n\r\n");
      Message r = c.read();
      assertThat(r.head().all("transfer-encoding")).containsExactly("gzip, chunked");
      assertThat(r.body()).isEqualTo(body);
    }
  }

  @Test
  void transferCodingsOfABodyUntilCloseAreKeptWhenItIsRechunked_rfc9112_6_1() throws Exception {
    upstream.answerThenClose("/gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n"
        + "\u001f\u008b\u0008\u0000zz");
    try (RawClient c = new RawClient()) {
      c.send("GET /gzip HTTP/1.1\r\nHost: test\r\n\r\n");
      Message r = c.read();
      // the data is still gzip-coded: a client told only "chunked" would take it for the content
      assertThat(r.head().all("transfer-encoding")).containsExactly("gzip, chunked");
      assertThat(r.data()).isEqualTo("\u001f\u008b\u0008\u0000zz");
    }
  }

  @Test
  void aTransferCodedResponseCannotReachAnHttp10ClientAndIs502_rfc9112_6_1() throws Exception {
    // HTTP/1.0 has no Transfer-Encoding: the data re-framed without it would reach the client
    // still gzip-coded and unlabelled, so the gateway answers 502 and drops the upstream connection
    upstream.answer("/gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
        + "6\r\n\u001f\u008b\u0008\u0000zz\r\n0\r\n\r\n");
    upstream.answerThenClose("/gzip-close", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n"
        + "\u001f\u008b\u0008\u0000zz");
    upstream.answer("/x", CHUNKED);
    for (String path : List.of("/gzip", "/gzip-close")) {
      try (RawClient c = new RawClient()) {
        c.send("GET " + path + " HTTP/1.0\r\n\r\n");
        Message r = c.read();
        assertThat(r.status()).as(path).isEqualTo(502);
        assertThat(r.head().has("transfer-encoding")).isFalse();
        JsonNode body = JSON.readTree(r.data());
        assertThat(body.path("error").asText()).isEqualTo("upstream_response_undeliverable");
        assertThat(body.path("detail").asText()).contains("gzip").contains("HTTP/1.0");
        assertThat(body.path("why").asText()).isNotBlank();
      }
    }
    try (RawClient c = new RawClient()) { // the same answer still reaches an HTTP/1.1 client whole
      c.send("GET /gzip HTTP/1.1\r\nHost: test\r\n\r\n");
      assertThat(c.read().head().all("transfer-encoding")).containsExactly("gzip, chunked");
      c.send("GET /x HTTP/1.0\r\n\r\n"); // and a plain chunked one an HTTP/1.0 client
      Message plain = c.read();
      assertThat(plain.status()).isEqualTo(200);
      assertThat(plain.body()).isEqualTo("hello, world");
    }
  }

  @Test
  void contentLengthBesideTransferEncodingIsNotForwarded_rfc9112_6_3_item3() throws Exception {
    // the Content-Length disagrees with the chunked body, as in a request-smuggling attempt
    upstream.answer("/both", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5\r\nhello\r\n0\r\n\r\n");
    upstream.answer("/next", FULL);
    try (RawClient c = new RawClient()) {
      c.send("GET /both HTTP/1.1\r\nHost: test\r\n\r\n");
      Message r = c.read();
      assertThat(r.head().has("content-length")).isFalse();
      assertThat(r.head().all("transfer-encoding")).containsExactly("chunked");
      assertThat(r.data()).isEqualTo("hello");
      c.send("GET /next HTTP/1.1\r\nHost: test\r\n\r\n");
      assertThat(c.read().data()).isEqualTo("full");
    }
    try (RawClient c = new RawClient()) {
      c.send("GET /both HTTP/1.0\r\n\r\n");
      Message r = c.read();
      assertThat(r.head().has("content-length")).isFalse();
      assertThat(r.head().has("transfer-encoding")).isFalse();
      assertThat(r.body()).isEqualTo("hello");
      c.assertClosed();
    }
  }

  // ---- fields (RFC 9110 sections 5.5 and 7.6) ----

  @Test
  void hopByHopFieldsStopAtTheGatewayInBothDirections_rfc9110_7_6_1() throws Exception {
    upstream.answer("/hop", "HTTP/1.1 200 OK\r\nConnection: X-Internal\r\nX-Internal: 1\r\nKeep-Alive: timeout=5\r\n"
        + "Proxy-Authenticate: x\r\nUpgrade: y\r\nx-MiXeD-Case: a  b\tc\r\nContent-Length: 2\r\n\r\nok");
    try (RawClient c = new RawClient()) {
      c.send("GET /hop HTTP/1.1\r\nHost: test.example\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\n"
          + "Keep-Alive: timeout=5\r\nTE: trailers\r\nUpgrade: foo\r\nProxy-Authorization: x\r\n"
          + "Forwarded: for=192.0.2.60\r\nX-Forwarded-For: 192.0.2.60\r\nX-Kept: yes\r\n\r\n");
      Message r = c.read();
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.data()).isEqualTo("ok");
      for (String hop : List.of("connection", "x-internal", "keep-alive", "proxy-authenticate", "upgrade")) {
        assertThat(r.head().has(hop)).as(hop).isFalse();
      }
      assertThat(r.head().raw()).contains("\r\nx-MiXeD-Case: a  b\tc\r\n").contains("\r\nContent-Length: 2\r\n");

      c.send("GET /hop HTTP/1.1\r\nHost: test.example\r\nX-Forwarded-Proto: https\r\n"
          + "X-Forwarded-Host: public.example\r\n\r\n");
      assertThat(c.read().data()).isEqualTo("ok");
    }
    Seen seen = upstream.take();
    for (String hop : List.of("connection", "x-secret", "keep-alive", "te", "upgrade", "proxy-authorization")) {
      assertThat(seen.head().has(hop)).as(hop).isFalse();
    }
    assertThat(seen.head().raw()).contains("\r\nX-Kept: yes\r\n").contains("\r\nHost: test.example\r\n");
    assertThat(seen.head().all("forwarded"))
        .containsExactly("for=192.0.2.60, for=127.0.0.1;proto=http;host=\"test.example\"");
    assertThat(seen.head().all("x-forwarded-for")).containsExactly("192.0.2.60, 127.0.0.1");
    assertThat(seen.head().all("x-forwarded-proto")).containsExactly("http");
    assertThat(seen.head().all("x-forwarded-host")).containsExactly("test.example");

    Seen told = upstream.take();
    assertThat(told.head().all("x-forwarded-proto")).containsExactly("https");
    assertThat(told.head().all("x-forwarded-host")).containsExactly("public.example");
    assertThat(told.head().all("x-forwarded-for")).containsExactly("127.0.0.1");
  }

  @Test
  void theResponseHeadKeepsItsLinesInOrderWithoutHopByHopOnesEachEndedByCrlf_rfc9112_2_2() throws Exception {
    // kept lines are copied in runs; a hop-by-hop line ends a run, and a line ended by a bare LF
    // (which a recipient may accept, RFC 9112 section 2.2) or with trailing whitespace is
    // written alone, ended by CRLF
    upstream.answer("/lines", "HTTP/1.1 200 Fine\r\nX-A: 1\r\nX-B: 2\r\nKeep-Alive: timeout=5\r\nX-C: 3\r\n"
        + "X-D: 4\nX-E: 5  \r\nX-F: 6\r\nContent-Length: 2\r\n\r\nok");
    upstream.answer("/old", "HTTP/1.0 201 Made\nX-A: 1\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok");
    try (RawClient c = new RawClient()) {
      c.send("GET /lines HTTP/1.1\r\nHost: test\r\n\r\n");
      Message r = c.read();
      assertThat(r.data()).isEqualTo("ok");
      assertThat(r.head().raw()).startsWith("HTTP/1.1 200 Fine\r\nX-A: 1\r\nX-B: 2\r\nX-C: 3\r\nX-D: 4\r\nX-E: 5\r\n"
          + "X-F: 6\r\nContent-Length: 2\r\n");
      c.send("GET /old HTTP/1.1\r\nHost: test\r\n\r\n");
      Message old = c.read();
      assertThat(old.data()).isEqualTo("ok");
      assertThat(old.head().raw()).startsWith("HTTP/1.1 201 Made\r\nX-A: 1\r\nContent-Length: 2\r\n");
    }
  }

  @Test
  void fieldValuesWithObsTextKeepTheirBytes_rfc9110_5_5() throws Exception {
    upstream.answer("/text", "HTTP/1.1 200 OK\r\nX-Reply: na\u00efve \u00ff\r\nContent-Length: 2\r\n\r\nok");
    try (RawClient c = new RawClient()) {
      c.send("GET /text HTTP/1.1\r\nHost: test\r\nX-Name: caf\u00e9 \u0080\r\n\r\n");
      Message r = c.read();
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.head().raw()).contains("\r\nX-Reply: na\u00efve \u00ff\r\n"); // bytes 0xEF and 0xFF
    }
    assertThat(upstream.take().head().raw()).contains("\r\nX-Name: caf\u00e9 \u0080\r\n"); // bytes 0xE9 and 0x80
  }

  // ---- request bodies (RFC 9112 sections 6.2 and 7.1) ----

  @Test
  void requestBodiesArriveWithTheirFraming_rfc9112_6() throws Exception {
    upstream.answer("/up", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    try (RawClient c = new RawClient()) {
      c.send("POST /up HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n");
      c.send("5;ext=1\r\npedia\r\n");
      c.send("E\r\n in\r\n\r\nchunks.\r\n0\r\n\r\n");
      assertThat(c.read().data()).isEqualTo("ok");
      c.send("POST /up HTTP/1.1\r\nHost: test\r\nContent-Length: 11\r\n\r\nhello world");
      assertThat(c.read().data()).isEqualTo("ok");
      // both again, pipelined in one write: each body ends where its framing says
      c.send("POST /up HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
          + "POST /up HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\n\r\nxyz");
      assertThat(c.read().data()).isEqualTo("ok");
      assertThat(c.read().data()).isEqualTo("ok");
    }
    Seen chunked = upstream.take();
    assertThat(chunked.head().all("transfer-encoding")).containsExactly("chunked");
    assertThat(chunked.head().has("content-length")).isFalse();
    assertThat(chunked.data()).isEqualTo("Wikipedia in\r\n\r\nchunks."); // read by a strict chunked parser
    Seen fixed = upstream.take();
    assertThat(fixed.head().all("content-length")).containsExactly("11");
    assertThat(fixed.head().has("transfer-encoding")).isFalse();
    assertThat(fixed.body()).isEqualTo("hello world");
    assertThat(upstream.take().data()).isEqualTo("abc");
    assertThat(upstream.take().body()).isEqualTo("xyz");
  }

  // ---- malformed upstream responses ----

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "bad status line | HTTP/1.1 2000 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok",
      "not HTTP/1.x | HTTP/2 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok",
      "obs-fold | HTTP/1.1 200 OK\\r\\nX-A: 1\\r\\n  continued\\r\\nContent-Length: 2\\r\\n\\r\\nok",
      "differing Content-Length fields | HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nContent-Length: 3\\r\\n\\r\\nok",
      "differing Content-Length list | HTTP/1.1 200 OK\\r\\nContent-Length: 2, 3\\r\\n\\r\\nok",
      "NUL in a value | HTTP/1.1 200 OK\\r\\nX-A: a\\0b\\r\\nContent-Length: 2\\r\\n\\r\\nok"})
  void malformedResponseHeadIs502WithAStructuredBody_rfc9112_5(String what, String response) throws Exception {
    upstream.answer("/bad", response.replace("\\r\\n", "\r\n").replace("\\0", "\0"));
    upstream.answer("/next", FULL);
    try (RawClient c = new RawClient()) {
      c.send("GET /bad HTTP/1.1\r\nHost: test\r\n\r\n");
      Message r = c.read();
      assertThat(r.status()).isEqualTo(502);
      assertThat(r.head().get("content-type")).startsWith("application/");
      JsonNode b = JSON.readTree(r.data());
      assertThat(b.get("error").asText()).isEqualTo("upstream_unavailable");
      assertThat(b.get("detail").asText()).contains("not valid HTTP/1.1");
      assertThat(b.get("why").asText()).isNotBlank();
      c.send("GET /next HTTP/1.1\r\nHost: test\r\n\r\n");
      assertThat(c.read().data()).isEqualTo("full");
    }
  }

  @Test
  void invalidChunkSizeAfterTheHeadWasForwardedCutsTheClientConnection_rfc9112_7_1() throws Exception {
    CountDownLatch clientHasFirstChunk = new CountDownLatch(1);
    upstream.answer("/cut", out -> {
      out.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n".getBytes(ISO_8859_1));
      out.flush();
      assertThat(clientHasFirstChunk.await(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).isTrue();
      out.write("zz\r\nworld\r\n0\r\n\r\n".getBytes(ISO_8859_1));
      out.flush();
      return true;
    });
    try (RawClient c = new RawClient()) {
      c.send("GET /cut HTTP/1.1\r\nHost: test\r\n\r\n");
      Head h = c.head();
      assertThat(h.startLine()).isEqualTo("HTTP/1.1 200 OK");
      assertThat(c.bytes("5\r\nhello\r\n".length())).isEqualTo("5\r\nhello\r\n");
      clientHasFirstChunk.countDown();
      assertThat(c.rest()).isEmpty(); // end of stream, with no last chunk: the body is incomplete
    }
  }

  @Test
  void bodyCutShortByTheUpstreamCutsTheClientConnection_rfc9112_8() throws Exception {
    upstream.answerThenClose("/short", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello");
    try (RawClient c = new RawClient()) {
      c.send("GET /short HTTP/1.1\r\nHost: test\r\n\r\n");
      assertThat(c.head().get("content-length")).isEqualTo("10");
      assertThat(c.rest()).hasSizeLessThan(10); // end of stream before the tenth byte: incomplete
    }
  }

  // ---- connection reuse ----

  @Test
  void responsesOfEveryFramingFollowEachOtherOnOneUpstreamConnection_rfc9112_9_3() throws Exception {
    upstream.answer("/p/1", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none");
    upstream.answer("/p/2", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\nX-T: 2\r\n\r\n");
    upstream.answer("/p/3", "HTTP/1.1 204 No Content\r\n\r\n");
    upstream.answer("/p/4", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfour");
    try (RawClient c = new RawClient()) {
      // the client pipelines the first three; the gateway forwards them one after the other
      c.send("GET /p/1 HTTP/1.1\r\nHost: test\r\n\r\nGET /p/2 HTTP/1.1\r\nHost: test\r\n\r\n"
          + "GET /p/3 HTTP/1.1\r\nHost: test\r\n\r\n");
      assertThat(c.read().data()).isEqualTo("one");
      Message two = c.read();
      assertThat(two.data()).isEqualTo("two");
      assertThat(two.trailers()).containsExactly(new Field("X-T", "2"));
      assertThat(c.readAfterHead().status()).isEqualTo(204);
      c.send("GET /p/4 HTTP/1.1\r\nHost: test\r\n\r\n");
      assertThat(c.read().data()).isEqualTo("four");
    }
    List<Seen> seen = List.of(upstream.take(), upstream.take(), upstream.take(), upstream.take());
    assertThat(seen).extracting(Seen::target).containsExactly("/p/1", "/p/2", "/p/3", "/p/4");
    assertThat(seen).extracting(Seen::connection).containsOnly(seen.get(0).connection());
  }

  // ---- the wire ----

  record Field(String name, String value) {}

  /** A start line and fields as received; {@link #raw()} is the head's bytes, blank line included. */
  record Head(String startLine, List<Field> fields, String raw) {
    boolean has(String name) {
      return !all(name).isEmpty();
    }

    /** The first value of the field (any case), or null. */
    String get(String name) {
      List<String> all = all(name);
      return all.isEmpty() ? null : all.get(0);
    }

    List<String> all(String name) {
      return fields.stream().filter(f -> f.name().equalsIgnoreCase(name)).map(Field::value).toList();
    }
  }

  /** A message as received: its head, its body's bytes with their framing, and the data alone. */
  record Message(Head head, String body, String data, List<Field> trailers) {
    int status() {
      return Integer.parseInt(head.startLine().substring(9, 12));
    }
  }

  /** What the upstream received, and on which of its connections (numbered from 1). */
  record Seen(int connection, Head head, String body, String data) {
    String method() {
      return head.startLine().substring(0, head.startLine().indexOf(' '));
    }

    String target() {
      String l = head.startLine();
      return l.substring(l.indexOf(' ') + 1, l.lastIndexOf(' '));
    }
  }

  /** A strict HTTP/1.1 reader: lines end in CRLF, chunks are well-formed, or it throws. */
  static final class Wire {
    private Wire() {}

    /** A head parsed from a string, for expectations. */
    static Head head(String s) throws IOException {
      return head(new ByteArrayInputStream(s.getBytes(ISO_8859_1)));
    }

    /** The next head, or null when the stream ends before its first byte. */
    static Head head(InputStream in) throws IOException {
      ByteArrayOutputStream raw = new ByteArrayOutputStream();
      int first = in.read();
      if (first < 0) {
        return null;
      }
      raw.write(first);
      String start = line(in, raw, (char) first);
      List<Field> fields = new ArrayList<>();
      for (String l; !(l = line(in, raw, null)).isEmpty(); ) {
        int colon = l.indexOf(':');
        if (colon <= 0) {
          throw new IOException("not a field line: " + l);
        }
        fields.add(new Field(l.substring(0, colon), l.substring(colon + 1).strip()));
      }
      return new Head(start, fields, raw.toString(ISO_8859_1));
    }

    /** A line without its CRLF; {@code first} is its first character when already read. */
    private static String line(InputStream in, ByteArrayOutputStream raw, Character first) throws IOException {
      StringBuilder sb = new StringBuilder();
      if (first != null) {
        sb.append(first.charValue());
      }
      while (true) {
        int b = in.read();
        if (b < 0) {
          throw new EOFException("the stream ended mid-line: " + sb);
        }
        raw.write(b);
        if (b == '\n') {
          if (sb.length() == 0 || sb.charAt(sb.length() - 1) != '\r') {
            throw new IOException("a line ends in a bare LF: " + sb);
          }
          return sb.substring(0, sb.length() - 1);
        }
        sb.append((char) b);
      }
    }

    /**
     * The body after {@code head}: none, chunked, Content-Length, or (when {@code untilClose}) the
     * rest of the stream.
     */
    static Message body(InputStream in, Head head, boolean untilClose) throws IOException {
      ByteArrayOutputStream raw = new ByteArrayOutputStream();
      ByteArrayOutputStream data = new ByteArrayOutputStream();
      List<Field> trailers = new ArrayList<>();
      String te = head.get("transfer-encoding");
      String cl = head.get("content-length");
      if (te != null && te.toLowerCase(Locale.ROOT).endsWith("chunked")) {
        while (true) {
          String sizeLine = line(in, raw, null);
          String hex = sizeLine.contains(";") ? sizeLine.substring(0, sizeLine.indexOf(';')) : sizeLine;
          if (!hex.matches("[0-9a-fA-F]+")) {
            throw new IOException("not a chunk-size line: " + sizeLine);
          }
          int size = Integer.parseInt(hex, 16);
          if (size == 0) {
            for (String l; !(l = line(in, raw, null)).isEmpty(); ) {
              int colon = l.indexOf(':');
              trailers.add(new Field(l.substring(0, colon), l.substring(colon + 1).strip()));
            }
            break;
          }
          byte[] chunk = exactly(in, size);
          raw.write(chunk);
          data.write(chunk);
          if (!new String(exactly(in, 2), ISO_8859_1).equals("\r\n")) {
            throw new IOException("chunk data is not followed by CRLF");
          }
          raw.write('\r');
          raw.write('\n');
        }
      } else if (cl != null) {
        byte[] b = exactly(in, Integer.parseInt(cl));
        raw.write(b);
        data.write(b);
      } else if (untilClose) {
        byte[] b = in.readAllBytes();
        raw.write(b);
        data.write(b);
      }
      return new Message(head, raw.toString(ISO_8859_1), data.toString(ISO_8859_1), trailers);
    }

    static byte[] exactly(InputStream in, int n) throws IOException {
      byte[] b = in.readNBytes(n);
      if (b.length < n) {
        throw new EOFException("the stream ended after " + b.length + " of " + n + " bytes");
      }
      return b;
    }
  }

  /** A client connection to the gateway that writes exact bytes and reads one response at a time. */
  final class RawClient implements AutoCloseable {
    private final Socket socket = new Socket();
    private final InputStream in;

    RawClient() throws IOException {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), gateway.address().getPort()),
          TIMEOUT_MILLIS);
      socket.setSoTimeout(TIMEOUT_MILLIS);
      in = new BufferedInputStream(socket.getInputStream());
    }

    void send(String bytes) throws IOException {
      OutputStream out = socket.getOutputStream();
      out.write(bytes.getBytes(ISO_8859_1));
      out.flush();
    }

    Head head() throws IOException {
      Head h = Wire.head(in);
      if (h == null) {
        throw new EOFException("the gateway closed the connection instead of answering");
      }
      return h;
    }

    /** A response with a body framed as its fields say (until the close when they do not). */
    Message read() throws IOException {
      return Wire.body(in, head(), true);
    }

    /** A response that has no body whatever its fields say: to HEAD, or 1xx, 204, 304. */
    Message readAfterHead() throws IOException {
      return new Message(head(), "", "", List.of());
    }

    String bytes(int n) throws IOException {
      return new String(Wire.exactly(in, n), ISO_8859_1);
    }

    /** Everything until the gateway closes the connection. */
    String rest() throws IOException {
      return new String(in.readAllBytes(), ISO_8859_1);
    }

    void assertClosed() throws IOException {
      assertThat(in.read()).isEqualTo(-1);
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  /**
   * The upstream: a socket server with a thread per connection that reads each request (head and
   * body by its framing), records it, and writes the bytes scripted for its path; an unscripted
   * path gets a 404.
   */
  static final class RawUpstream implements AutoCloseable {
    /** Writes a response; says whether the connection stays open. */
    interface Answer {
      boolean write(OutputStream out) throws IOException, InterruptedException;
    }

    private final ServerSocket server;
    private final BlockingQueue<Seen> requests = new LinkedBlockingQueue<>();
    /** Connections (numbered from 1) that ended in the middle of a request: head or body incomplete. */
    private final BlockingQueue<Integer> cut = new LinkedBlockingQueue<>();
    /** Request heads as read, before their bodies. */
    private final BlockingQueue<Head> heads = new LinkedBlockingQueue<>();
    private final Map<String, Answer> answers = new ConcurrentHashMap<>();
    private final Map<String, String> interims = new ConcurrentHashMap<>();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();

    RawUpstream() throws IOException {
      server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread accept = new Thread(this::accept, "raw-upstream-accept");
      accept.setDaemon(true);
      accept.start();
    }

    int port() {
      return server.getLocalPort();
    }

    void answer(String path, String response) {
      answer(path, out -> {
        out.write(response.getBytes(ISO_8859_1));
        out.flush();
        return true;
      });
    }

    void answerThenClose(String path, String response) {
      answer(path, out -> {
        out.write(response.getBytes(ISO_8859_1));
        out.flush();
        return false;
      });
    }

    void answer(String path, Answer a) {
      answers.put(path, a);
    }

    /** Bytes written as soon as the request head for {@code path} is read, before its body. */
    void interim(String path, String responses) {
      interims.put(path, responses);
    }

    /** The next request the upstream received, waiting for it. */
    Seen take() throws InterruptedException {
      Seen s = requests.poll(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
      assertThat(s).as("a request reached the upstream").isNotNull();
      return s;
    }

    /** The next connection the gateway closed in the middle of a request, waiting for it. */
    int takeCut() throws InterruptedException {
      Integer id = cut.poll(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
      assertThat(id).as("a connection closed by the gateway mid-request").isNotNull();
      return id;
    }

    /** The next request head read (its body may still be arriving), waiting for it. */
    Head takeHead() throws InterruptedException {
      Head h = heads.poll(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
      assertThat(h).as("a request head reached the upstream").isNotNull();
      return h;
    }

    /** How many connections the gateway opened to this upstream so far. */
    int connections() {
      return connections.get();
    }

    /** The requests received whole so far, without waiting. */
    List<Seen> received() {
      List<Seen> all = new ArrayList<>();
      requests.drainTo(all);
      return all;
    }

    private void accept() {
      while (!server.isClosed()) {
        try {
          Socket s = server.accept();
          sockets.add(s);
          int id = connections.incrementAndGet();
          Thread t = new Thread(() -> serve(s, id), "raw-upstream-" + id);
          t.setDaemon(true);
          t.start();
        } catch (IOException e) {
          return; // closed
        }
      }
    }

    private void serve(Socket s, int id) {
      try (s) {
        s.setSoTimeout(TIMEOUT_MILLIS);
        InputStream in = new BufferedInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        while (true) {
          Head h = Wire.head(in);
          if (h == null) {
            return; // the gateway closed the connection
          }
          heads.add(h);
          String target = h.startLine().split(" ")[1];
          String interim = interims.get(target);
          if (interim != null) {
            out.write(interim.getBytes(ISO_8859_1));
            out.flush();
          }
          Message m = Wire.body(in, h, false);
          requests.add(new Seen(id, h, m.body(), m.data()));
          Answer a = answers.getOrDefault(target, o -> {
            o.write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".getBytes(ISO_8859_1));
            return true;
          });
          if (!a.write(out)) {
            return;
          }
        }
      } catch (EOFException e) {
        cut.add(id); // the gateway closed the connection mid-request
      } catch (IOException | InterruptedException e) {
        // the gateway went away mid-exchange (the tests that cut connections expect it)
      }
    }

    @Override
    public void close() {
      try {
        server.close();
      } catch (IOException e) {
        // closing the listening socket of a test server: nothing to do
      }
      for (Socket s : sockets) {
        try {
          s.close();
        } catch (IOException e) {
          // as above
        }
      }
    }
  }
}
