package dev.headroom.gateway;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.gateway.ProxyFramingTest.Head;
import dev.headroom.gateway.ProxyFramingTest.Message;
import dev.headroom.gateway.ProxyFramingTest.RawUpstream;
import dev.headroom.gateway.ProxyFramingTest.Seen;
import dev.headroom.gateway.ProxyFramingTest.Wire;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Requests written to mislead a proxy, over real sockets: broken chunked framing (RFC 9112
 * section 7.1), Content-Length beside Transfer-Encoding and obfuscated Transfer-Encoding fields
 * (sections 6.1 and 6.3, the request-smuggling family), a head trickled in a byte at a time
 * (slowloris), and an upstream whose body framing breaks before any of it was forwarded. The rule
 * each test holds the gateway to: a request is forwarded with exactly the body boundary the
 * gateway read, or refused with the gateway's error body and the connection closed; never
 * forwarded as complete when it was not.
 */
class HostileRequestTest {
  private static final int TIMEOUT_MILLIS = 10_000;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

  @TempDir Path dir;
  final RawUpstream upstream;
  Gateway gateway;

  HostileRequestTest() throws IOException {
    upstream = new RawUpstream();
  }

  void startGateway(String idle) throws Exception {
    startGateway(idle, null);
  }

  /** With {@code timers}, the connections' timeouts run in the test's virtual time. */
  void startGateway(String idle, ManualTimers timers) throws Exception {
    Path config = dir.resolve("hostile.yaml");
    Files.writeString(config, """
        service: {name: Hostile}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        timeouts: {connect: 10s, response: 10s, idle: %s}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          plenty:
            quota: 1000
            window: 1m
            algorithm: fixed-window
            partition: global
            why: A quota that never runs out, so that every request is forwarded.
          svc: {quota: 1000, window: 1m, algorithm: fixed-window, why: Limits keep the service available for everyone.}
        routes:
          - {name: norm, method: GET, path: "/norm/**", upstream: up, normaliseErrors: true}
          - {name: vend, type: vend, path: /vend, upstream: up, vend: {limits: {service: svc}}}
          - {name: all, methods: [GET, POST], path: "/**", upstream: up, policies: [plenty]}
        """.formatted(idle, upstream.port()));
    Gateway.Builder b = Gateway.builder(GatewayConfig.load(config)).threads(1);
    gateway = timers == null ? b.ticker(ManualTicker.atFixedInstant()).start()
        : b.ticker(timers.ticker()).timers(timers).start();
    upstream.answer("/up", OK);
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    upstream.close();
  }

  // ---- broken chunked request bodies (RFC 9112 section 7.1) ----

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "after a good chunk | 3\\r\\nabc\\r\\nZZ\\r\\nmore\\r\\n0\\r\\n\\r\\n",
      "first chunk | ZZ\\r\\nabc\\r\\n0\\r\\n\\r\\n",
      "hexadecimal prefix | 0x3\\r\\nabc\\r\\n0\\r\\n\\r\\n",
      "negative size | -3\\r\\nabc\\r\\n0\\r\\n\\r\\n"})
  void anInvalidChunkSizeIs400AndTheUpstreamNeverSeesACompleteRequest_rfc9112_7_1(String what, String body)
      throws Exception {
    startGateway("10s");
    try (Client c = new Client()) {
      c.send("POST /up HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n" + crlf(body));
      Message r = c.read();
      assertRefused(r, 400, "malformed_request");
      assertThat(JSON.readTree(r.data()).get("detail").asText()).contains("chunked framing is invalid");
      c.assertClosed();
    }
    // the upstream got the head (and what came before the bad line) and then its connection closed
    // before the body ended: it never takes part of a body for all of it
    upstream.takeCut();
    assertThat(upstream.received()).isEmpty();
  }

  @Test
  void anInvalidChunkSizeArrivingAfterTheUpstreamConnectedStillCutsTheUpstream_rfc9112_7_1() throws Exception {
    startGateway("10s");
    try (Client c = new Client()) {
      c.send("POST /up HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
      upstream.takeHead(); // the head went up; the bad line comes in a later read
      c.send("ZZ\r\nmore\r\n0\r\n\r\n");
      assertRefused(c.read(), 400, "malformed_request");
      c.assertClosed();
    }
    upstream.takeCut();
    assertThat(upstream.received()).isEmpty();
  }

  @Test
  void aVendCallWhoseChunkedBodyBreaksIsNotDecidedOrForwarded_rfc9112_7_1() throws Exception {
    startGateway("10s");
    String envelope = vendCall(false);
    try (Client c = new Client()) {
      // a whole envelope in the first chunk, then a broken line: what was read is no complete body
      c.send("POST /vend HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
          + Integer.toHexString(envelope.length()) + "\r\n" + envelope + "\r\nZZ\r\n\r\n");
      assertRefused(c.read(), 400, "malformed_request");
      c.assertClosed();
    }
    assertThat(upstream.connections()).as("nothing went upstream").isZero();
  }

  @Test
  void theAdminListenerDoesNotActOnARequestWhoseBodyBreaks_rfc9112_7_1() throws Exception {
    startGateway("10s");
    int admin = gateway.adminAddress().orElseThrow().getPort();
    try (Client c = new Client(admin)) {
      c.send("POST /capacity?policy=plenty&factor=0.5 HTTP/1.1\r\nHost: admin\r\nTransfer-Encoding: chunked\r\n\r\n"
          + "3\r\nabc\r\nZZ\r\n\r\n");
      Message r = c.read();
      assertThat(r.status()).isEqualTo(400);
      assertThat(JSON.readTree(r.data()).get("error").asText()).isEqualTo("malformed_request");
      assertThat(r.head().get("connection")).isEqualTo("close");
      c.assertClosed();
    }
    try (Client c = new Client(admin)) {
      c.send("GET /capacity HTTP/1.1\r\nHost: admin\r\n\r\n");
      assertThat(JSON.readTree(c.read().data()).at("/policies/plenty/factor").asDouble())
          .as("the capacity was left alone").isEqualTo(1.0);
    }
  }

  // ---- Content-Length and Transfer-Encoding (RFC 9112 sections 6.1 and 6.3) ----

  @Test
  void contentLengthBesideTransferEncodingIsRefusedAndNothingIsForwarded_rfc9112_6_1() throws Exception {
    startGateway("10s");
    try (Client c = new Client()) {
      // CL.TE: a reader of Content-Length takes "0\r\n\r\n" as the body, one of chunked the empty body
      // and then a second request; the gateway must be neither
      c.send("POST /up HTTP/1.1\r\nHost: test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
          + "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: test\r\n\r\n");
      Message r = c.read();
      JsonNode body = assertRefused(r, 400, "malformed_request");
      assertThat(body.get("detail").asText()).contains("Content-Length beside Transfer-Encoding");
      assertThat(body.get("field").asText()).isEqualTo("Transfer-Encoding");
      c.assertClosed();
    }
    assertThat(upstream.connections()).as("nothing went upstream").isZero();
  }

  /**
   * Transfer-Encoding forms a proxy and an upstream may read differently. Each is either read
   * exactly as RFC 9112 says (chunked, whatever the case or optional whitespace: the body arrives
   * whole) or refused with the connection closed; a refused request never reaches the upstream.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', quoteCharacter = '\'', value = {
      "xchunked | Transfer-Encoding: xchunked | 400",
      "chunked then identity | Transfer-Encoding: chunked, identity | 400",
      "identity line after chunked | Transfer-Encoding: chunked\\r\\nTransfer-Encoding: identity | 400",
      "chunked twice on two lines | Transfer-Encoding: chunked\\r\\nTransfer-Encoding: chunked | 400",
      "chunked twice in one list | Transfer-Encoding: chunked, chunked | 400",
      "chunked with a parameter | Transfer-Encoding: chunked;q=1 | 400",
      "gzip before chunked | Transfer-Encoding: gzip, chunked | 501",
      "space before the colon | Transfer-Encoding : chunked | 400",
      "upper case | Transfer-Encoding: CHUNKED | 200",
      "tab before the value | Transfer-Encoding:\\tchunked | 200",
      "spaces around the value | Transfer-Encoding:   chunked   | 200",
      "empty list members | Transfer-Encoding: , chunked , | 200",
      "no space after the colon | Transfer-Encoding:chunked | 200"})
  void obfuscatedTransferEncodingIsReadExactlyOrRefused_rfc9112_6_1(String what, String field, int expected)
      throws Exception {
    startGateway("10s");
    try (Client c = new Client()) {
      c.send("POST /up HTTP/1.1\r\nHost: test\r\n" + crlf(field) + "\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
      Message r = c.read();
      assertThat(r.status()).isEqualTo(expected);
      if (expected == 200) {
        assertThat(r.data()).isEqualTo("ok");
        Seen seen = upstream.take();
        assertThat(seen.data()).isEqualTo("hello");
        assertThat(seen.head().all("transfer-encoding")).containsExactly("chunked");
        assertThat(seen.head().has("content-length")).isFalse();
        return;
      }
      JsonNode body = JSON.readTree(r.data());
      assertThat(body.get("detail").asText()).isNotBlank();
      assertThat(body.get("why").asText()).isNotBlank();
      assertThat(r.head().get("connection")).isEqualTo("close");
      c.assertClosed();
    }
    assertThat(upstream.connections()).as("nothing went upstream").isZero();
  }

  @Test
  void transferEncodingInAnHttp10RequestIsRefused_rfc9112_6_1() throws Exception {
    startGateway("10s");
    try (Client c = new Client()) {
      c.send("POST /up HTTP/1.0\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
      JsonNode body = assertRefused(c.read(), 400, "malformed_request");
      assertThat(body.get("detail").asText()).contains("HTTP/1.0");
      c.assertClosed();
    }
    assertThat(upstream.connections()).isZero();
  }

  // ---- a head that never completes (slowloris) ----

  @Test
  void aHeadTrickledInByteByByteGets408WithinTheIdleTimeoutAndTheConnectionCloses() throws Exception {
    ManualTimers timers = new ManualTimers(ManualTicker.atFixedInstant());
    startGateway("500ms", timers);
    try (Client c = new Client()) {
      timers.awaitPending(1); // the gateway has taken the connection
      String head = "GET /up HTTP/1.1\r\nHost: test\r\nX-Slow: ";
      c.send(head);
      // time moves only once the gateway has read what was sent: the kernel may deliver it late
      ReceivedBytes.await(gateway, head.length());
      // one byte every 50 ms of the gateway's time, far inside any per-read timeout: the head
      // keeps arriving and never ends by itself
      for (int i = 0; i < 9; i++) {
        timers.advance(Duration.ofMillis(50));
        c.send("a");
        ReceivedBytes.await(gateway, head.length() + i + 1);
      }
      timers.advance(Duration.ofMillis(49)); // 499 ms: still within the idle timeout
      assertThat(c.available()).as("nothing answered before the idle timeout").isZero();
      timers.advance(Duration.ofMillis(1));
      Message r = c.read();
      JsonNode body = assertRefused(r, 408, "request_timeout");
      assertThat(body.get("detail").asText()).contains("request head").contains("500 milliseconds");
      assertThat(body.get("timeoutSeconds").asDouble()).isEqualTo(0.5);
      c.assertClosed();
    }
    assertThat(upstream.connections()).isZero();
  }

  // ---- an upstream body that breaks before any of it was forwarded ----

  @Test
  void anUpstreamWhoseFirstChunkSizeIsInvalidGets502AndALogLine_rfc9112_7_1() throws Exception {
    startGateway("10s");
    // head and broken first chunk-size line in one write, so they arrive in one read
    upstream.answer("/bad-first-chunk",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n");
    upstream.answer("/next", OK);
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream err = System.err;
    // slf4j-simple writes to the System.err of the moment (its cacheOutputStream is off by default)
    System.setErr(new PrintStream(new TeeStream(err, log), true, ISO_8859_1));
    try (Client c = new Client()) {
      c.send("GET /bad-first-chunk HTTP/1.1\r\nHost: test\r\n\r\n");
      Message r = c.read();
      JsonNode body = assertRefused(r, 502, "upstream_unavailable");
      assertThat(body.get("detail").asText()).contains("not valid HTTP/1.1");
      // the client connection is intact: the 502 was a whole response
      c.send("GET /next HTTP/1.1\r\nHost: test\r\n\r\n");
      assertThat(c.read().data()).isEqualTo("ok");
    } finally {
      System.setErr(err);
    }
    assertThat(log.toString(ISO_8859_1)).contains("WARN").contains("upstream up sent an invalid response to GET "
        + "/bad-first-chunk").contains("chunk-size");
  }

  /**
   * Every relay path holds back what it would send until the body's first piece arrives: the
   * re-encoded one (an HTTP/1.0 client of a chunked response), the one that replaces a bare error
   * with the gateway's body (normaliseErrors), the one that rewrites a vend response. A body broken
   * from its first chunk-size line gets the client a 502 on each.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "re-encoded for HTTP/1.0 | GET /bad HTTP/1.0\\r\\n\\r\\n | 200 OK",
      "normalised error | GET /norm/bad HTTP/1.1\\r\\nHost: test\\r\\n\\r\\n | 500 Internal Server Error",
      "vend response | VEND | 200 OK"})
  void anUpstreamBodyBrokenFromItsFirstChunkIs502OnEveryRelayPath_rfc9112_7_1(String what, String request,
      String status) throws Exception {
    startGateway("10s");
    String broken = "HTTP/1.1 " + status + "\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "zz\r\nhello\r\n0\r\n\r\n";
    upstream.answer("/bad", broken);
    upstream.answer("/norm/bad", broken);
    upstream.answer("/vend", broken.replace("text/plain", "application/json"));
    String envelope = vendCall(true);
    try (Client c = new Client()) {
      c.send(request.equals("VEND")
          ? "POST /vend HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: "
              + envelope.length() + "\r\n\r\n" + envelope
          : crlf(request));
      JsonNode body = assertRefused(c.read(), 502, "upstream_unavailable");
      assertThat(body.get("detail").asText()).contains("not valid HTTP/1.1");
    }
  }

  // ---- helpers ----

  /** A vend call (seed 003), declaring the rate-limit extension when asked, so its answer is rewritten. */
  static String vendCall(boolean extension) {
    return "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"1\",\"call\":{\"function\":"
        + "\"orders.create\",\"version\":\"1\",\"arguments\":{}}"
        + (extension ? ",\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\",\"options\":{}}]" : "") + "}";
  }

  static String crlf(String s) {
    return s.replace("\\r\\n", "\r\n").replace("\\t", "\t");
  }

  /** The gateway's own error: status, the refusal body (error, detail, why), and a close when 4xx. */
  static JsonNode assertRefused(Message r, int status, String error) throws IOException {
    assertThat(r.status()).isEqualTo(status);
    assertThat(r.head().get("content-type")).startsWith("application/");
    JsonNode body = JSON.readTree(r.data());
    assertThat(body.get("error").asText()).isEqualTo(error);
    assertThat(body.get("detail").asText()).isNotBlank();
    assertThat(body.get("why").asText()).isNotBlank();
    assertThat(Schemas.validate(Schemas.REFUSAL, body)).isEmpty();
    if (status < 500) {
      assertThat(r.head().get("connection")).isEqualTo("close");
    }
    return body;
  }

  /** A raw client connection to the gateway. */
  final class Client implements AutoCloseable {
    private final Socket socket = new Socket();
    private final InputStream in;
    private final OutputStream out;

    Client() throws IOException {
      this(gateway.address().getPort());
    }

    Client(int port) throws IOException {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), TIMEOUT_MILLIS);
      socket.setSoTimeout(TIMEOUT_MILLIS);
      in = new BufferedInputStream(socket.getInputStream());
      out = socket.getOutputStream();
    }

    synchronized void send(String bytes) throws IOException {
      out.write(bytes.getBytes(ISO_8859_1));
      out.flush();
    }

    Message read() throws IOException {
      Head h = Wire.head(in);
      if (h == null) {
        throw new EOFException("the gateway closed the connection instead of answering");
      }
      return Wire.body(in, h, false);
    }

    int available() throws IOException {
      return in.available();
    }

    void assertClosed() throws IOException {
      assertThat(in.read()).as("the gateway closes the connection").isEqualTo(-1);
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  /** Writes to two streams: the console as before, and the test's copy. */
  private static final class TeeStream extends OutputStream {
    private final OutputStream a;
    private final OutputStream b;

    TeeStream(OutputStream a, OutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public void write(int x) throws IOException {
      a.write(x);
      synchronized (b) {
        b.write(x);
      }
    }

    @Override
    public void write(byte[] buf, int off, int len) throws IOException {
      a.write(buf, off, len);
      synchronized (b) {
        b.write(buf, off, len);
      }
    }
  }
}
