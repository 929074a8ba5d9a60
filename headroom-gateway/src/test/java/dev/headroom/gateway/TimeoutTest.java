package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway's timeouts over real sockets: {@code timeouts.idle} closes a keep-alive client
 * connection with no exchange in progress, {@code timeouts.response} answers 504 when an
 * upstream's response head is late. Both are one timer per client connection, so these tests
 * check what each timeout covers and what it must leave alone.
 *
 * <p>Timing assertions are one-sided where the machine's load could matter: a lower bound that
 * follows from the design (nothing can close before its deadline) or a loose one, and upper
 * bounds only as generous deadlines on the client's reads.
 */
class TimeoutTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** How long a client waits for anything the gateway owes it: far above every configured timeout. */
  private static final Duration PATIENCE = Duration.ofSeconds(10);

  @TempDir Path dir;
  final ScriptedUpstream upstream;
  Gateway gateway;
  Path configFile;

  TimeoutTest() throws IOException {
    upstream = new ScriptedUpstream();
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    upstream.close();
  }

  String yaml(String idle, String response) {
    return """
        service: {name: Timeouts}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        timeouts: {idle: %s, response: %s}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        routes:
          - {method: GET, path: /fast, upstream: up}
          - {method: GET, path: /stall, upstream: up}
          - {method: GET, path: /slow, upstream: up}
          - {method: POST, path: /upload, upstream: up}
        """.formatted(idle, response, upstream.port());
  }

  void startGateway(String idle, String response) throws Exception {
    configFile = dir.resolve("timeouts.yaml");
    Files.writeString(configFile, yaml(idle, response));
    gateway = Gateway.builder(GatewayConfig.load(configFile)).configFile(configFile).watchFile(false)
        .threads(1).start();
  }

  RawClient connect() throws IOException {
    return new RawClient(new Socket(InetAddress.getLoopbackAddress(), gateway.address().getPort()));
  }

  static Duration since(long nanos) {
    return Duration.ofNanos(System.nanoTime() - nanos);
  }

  /**
   * The gateway closes {@code c}, idle since its last response: end of stream with no bytes
   * before it, and (loosely, for a busy machine) not before half the idle timeout has passed.
   */
  static void assertClosedAsIdle(RawClient c, Duration idle) throws IOException {
    assertThat(c.readAfterResponse(PATIENCE)).as("end of stream, and no bytes before it").isEqualTo(-1);
    assertThat(since(c.answeredAt)).isGreaterThanOrEqualTo(idle.dividedBy(2));
  }

  /**
   * {@code r}, the response to {@code c}'s last request, is the gateway's 504 for a response head
   * later than {@code response}: never before that deadline, and well within {@link #PATIENCE}.
   */
  static JsonNode assertTimedOut(RawClient c, RawResponse r, Duration response) throws IOException {
    assertThat(r.status()).isEqualTo(504);
    assertThat(Duration.ofNanos(c.answeredAt - c.sentAt)).isGreaterThanOrEqualTo(response)
        .isLessThan(Duration.ofSeconds(5));
    JsonNode body = JSON.readTree(r.body());
    assertThat(body.get("error").asText()).isEqualTo("upstream_timeout");
    return body;
  }

  // ---- timeouts.idle ----

  @Test
  void anIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() throws Exception {
    startGateway("300ms", "2s");
    try (RawClient c = connect()) {
      RawResponse r = c.get("/fast");
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("fast");
      assertThat(r.header("connection")).isNull(); // kept alive: only the idle timeout may end it

      assertClosedAsIdle(c, Duration.ofMillis(300));
      // the exchange ended after the request was sent, so the connection cannot close earlier
      assertThat(since(c.sentAt)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
    }
  }

  @Test
  void aConnectionThatNeverSendsARequestIsClosedAfterTheIdleTimeout() throws Exception {
    startGateway("300ms", "2s");
    long connecting = System.nanoTime();
    try (RawClient c = connect()) {
      assertThat(c.readAfterResponse(PATIENCE)).isEqualTo(-1);
      assertThat(since(connecting)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
    }
  }

  @Test
  void requestsMoreOftenThanTheIdleTimeoutKeepTheConnectionOpen() throws Exception {
    startGateway("400ms", "2s");
    try (RawClient c = connect()) {
      long first = System.nanoTime();
      // ten requests 100 ms apart span more than two idle periods; a gap never comes near one
      for (int i = 0; i < 10; i++) {
        if (i > 0) {
          Thread.sleep(100);
        }
        RawResponse r = c.get("/fast");
        assertThat(r.status()).as("request %d", i).isEqualTo(200);
        assertThat(r.header("connection")).as("request %d", i).isNull();
      }
      assertThat(since(first)).isGreaterThan(Duration.ofMillis(800));
      assertThat(upstream.connections()).as("the gateway's upstream connection was reused too").isEqualTo(1);
    }
  }

  @Test
  void aShorterIdleTimeoutFromAReloadAppliesToAnOpenConnection() throws Exception {
    // a long idle timeout but a short response timeout: the timer checks every 500 ms
    startGateway("30s", "500ms");
    try (RawClient c = connect()) {
      assertThat(c.get("/fast").status()).isEqualTo(200);
      // past the timer's first check, so the connection has been checked under the old idle timeout
      Thread.sleep(700);
      Files.writeString(configFile, yaml("300ms", "500ms"));
      gateway.reloadFromFile();
      assertThat(gateway.config().timeouts().idle()).isEqualTo(Duration.ofMillis(300));
      // under the 30 s in force when the connection opened it would stay open past PATIENCE
      assertThat(c.readAfterResponse(PATIENCE)).isEqualTo(-1);
    }
  }

  // ---- timeouts.response ----

  @Test
  void anUpstreamThatNeverAnswersGets504AndTheClientConnectionStaysUsable() throws Exception {
    startGateway("5s", "400ms");
    try (RawClient c = connect()) {
      RawResponse r = c.get("/stall");
      JsonNode body = assertTimedOut(c, r, Duration.ofMillis(400));
      assertThat(r.header("content-type")).startsWith("application/problem+json");
      assertThat(r.header("connection")).isNull(); // the client connection is kept
      assertThat(body.get("detail").asText()).isNotBlank();
      assertThat(body.get("why").asText()).isNotBlank();
      assertThat(Schemas.validate(Schemas.REFUSAL, body)).isEmpty();
      assertThat(upstream.stalledClosed.await(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .as("the gateway closed the stalled upstream connection").isTrue();

      RawResponse next = c.get("/fast");
      assertThat(next.status()).isEqualTo(200);
      assertThat(next.body()).isEqualTo("fast");
    }
  }

  @Test
  void anUploadThatStopsMidBodyGets408AndTheConnectionCloses() throws Exception {
    startGateway("300ms", "5s");
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), gateway.address().getPort())) {
      s.setSoTimeout((int) PATIENCE.toMillis());
      long sent = System.nanoTime();
      s.getOutputStream().write("POST /upload HTTP/1.1\r\nHost: gateway\r\nContent-Length: 10\r\n\r\nab"
          .getBytes(StandardCharsets.US_ASCII));
      InputStream in = new BufferedInputStream(s.getInputStream());
      String status = line(in);
      Duration waited = since(sent);
      Map<String, String> fields = headers(in);
      JsonNode body = JSON.readTree(in.readNBytes(Integer.parseInt(fields.get("content-length"))));
      assertThat(status).startsWith("HTTP/1.1 408 ");
      assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(300)).isLessThan(Duration.ofSeconds(5));
      assertThat(fields.get("connection")).isEqualTo("close");
      assertThat(body.get("error").asText()).isEqualTo("request_timeout");
      assertThat(body.get("detail").asText()).contains("300 milliseconds");
      assertThat(body.get("timeoutSeconds").asDouble()).isEqualTo(0.3);
      assertThat(Schemas.validate(Schemas.REFUSAL, body)).isEmpty();
      assertThat(in.read()).as("the gateway closes the connection after the 408").isEqualTo(-1);
    }
  }

  @Test
  void anUploadThatKeepsComingIsNotCutByTheIdleTimeout() throws Exception {
    startGateway("300ms", "5s");
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), gateway.address().getPort())) {
      s.setSoTimeout((int) PATIENCE.toMillis());
      OutputStream out = s.getOutputStream();
      out.write("POST /upload HTTP/1.1\r\nHost: gateway\r\nContent-Length: 8\r\n\r\n"
          .getBytes(StandardCharsets.US_ASCII));
      for (int i = 0; i < 8; i++) { // 8 bytes 150 ms apart: 1.2 s in all, four idle periods
        Thread.sleep(150);
        out.write('0' + i);
        out.flush();
      }
      InputStream in = new BufferedInputStream(s.getInputStream());
      assertThat(line(in)).startsWith("HTTP/1.1 200 ");
      Map<String, String> fields = headers(in);
      assertThat(new String(in.readNBytes(Integer.parseInt(fields.get("content-length"))), StandardCharsets.US_ASCII))
          .isEqualTo("got01234567");
    }
  }

  @Test
  void theResponseTimeoutRunsFromEachRequestOnAReusedConnection() throws Exception {
    startGateway("5s", "400ms");
    try (RawClient c = connect()) {
      assertThat(c.get("/fast").status()).isEqualTo(200);
      // a deadline carried over from the first request would time the second out early
      Thread.sleep(300);
      assertTimedOut(c, c.get("/stall"), Duration.ofMillis(400));
      assertThat(c.get("/fast").status()).isEqualTo(200);
    }
  }

  @Test
  void aSlowStreamingResponseOutlivesBothTimeoutsAndIdleCountsFromItsEnd() throws Exception {
    startGateway("300ms", "400ms");
    try (RawClient c = connect()) {
      RawResponse r = c.get("/slow");
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.body()).isEqualTo(ScriptedUpstream.SLOW_BODY);
      // the body took longer than both timeouts: neither may cut a response whose head has arrived
      assertThat(Duration.ofNanos(c.answeredAt - c.sentAt))
          .isGreaterThanOrEqualTo(ScriptedUpstream.SLOW_PAUSE.multipliedBy(ScriptedUpstream.SLOW_PIECES));
      // the timer kept running through the exchange: the connection, idle now, is closed in time
      assertClosedAsIdle(c, Duration.ofMillis(300));
    }
  }

  // ---- the two ends ----

  /** An HTTP/1.1 client on one raw socket, so a test sees exactly when the gateway closes it. */
  static final class RawClient implements AutoCloseable {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    /** When the last request was sent and its response read whole (nanoTime). */
    long sentAt;
    long answeredAt;

    RawClient(Socket socket) throws IOException {
      this.socket = socket;
      socket.setSoTimeout((int) PATIENCE.toMillis());
      this.in = new BufferedInputStream(socket.getInputStream());
      this.out = socket.getOutputStream();
    }

    RawResponse get(String path) throws IOException {
      sentAt = System.nanoTime();
      out.write(("GET " + path + " HTTP/1.1\r\nHost: gateway\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String status = line(in);
      if (status == null) {
        throw new IOException("the gateway closed the connection instead of answering GET " + path);
      }
      Map<String, String> headers = headers(in);
      byte[] body;
      if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
        body = chunked(in);
      } else {
        body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
      }
      answeredAt = System.nanoTime();
      return new RawResponse(Integer.parseInt(status.split(" ")[1]), headers,
          new String(body, StandardCharsets.UTF_8));
    }

    /** The next byte the gateway sends, -1 when it closes; throws when {@code limit} passes first. */
    int readAfterResponse(Duration limit) throws IOException {
      socket.setSoTimeout((int) limit.toMillis());
      return in.read();
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  record RawResponse(int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  /**
   * A raw HTTP/1.1 upstream on a loopback port, for what the JDK's server cannot be made to do:
   * <ul>
   *   <li>{@code /fast}: 200 {@code fast} at once</li>
   *   <li>{@code /stall}: reads the request and never answers; counts down {@link #stalledClosed}
   *       when the gateway closes the connection</li>
   *   <li>{@code /slow}: the head at once, then {@link #SLOW_PIECES} chunks {@link #SLOW_PAUSE} apart</li>
   * </ul>
   * Requests carry no body (all routes are GET). Each connection is served on its own thread.
   */
  static final class ScriptedUpstream implements AutoCloseable {
    static final int SLOW_PIECES = 8;
    static final Duration SLOW_PAUSE = Duration.ofMillis(200);
    static final String SLOW_BODY =
        "piece 0\npiece 1\npiece 2\npiece 3\npiece 4\npiece 5\npiece 6\npiece 7\n";

    final CountDownLatch stalledClosed = new CountDownLatch(1);
    private final ServerSocket server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final AtomicInteger accepted = new AtomicInteger();

    ScriptedUpstream() throws IOException {
      server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      threads.execute(this::acceptLoop);
    }

    int port() {
      return server.getLocalPort();
    }

    /** Connections the gateway has opened so far. */
    int connections() {
      return accepted.get();
    }

    private void acceptLoop() {
      while (!server.isClosed()) {
        try {
          Socket s = server.accept();
          accepted.incrementAndGet();
          threads.execute(() -> serve(s));
        } catch (IOException e) {
          return; // closed by close()
        }
      }
    }

    private void serve(Socket s) {
      try (s) {
        InputStream in = new BufferedInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        String request;
        while ((request = line(in)) != null) {
          Map<String, String> fields = headers(in);
          String path = request.split(" ")[1];
          switch (path) {
            case "/upload" -> {
              int n = Integer.parseInt(fields.getOrDefault("content-length", "0"));
              byte[] body = in.readNBytes(n);
              if (body.length < n) {
                return; // the gateway gave up on the upload and closed
              }
              send(out, "HTTP/1.1 200 OK\r\nContent-Length: " + (3 + n) + "\r\n\r\ngot" + new String(body, StandardCharsets.ISO_8859_1));
            }
            case "/fast" ->
                send(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nfast");
            case "/stall" -> {
              while (in.read() >= 0) {
                // never answers: waits for the gateway to give up and close
              }
              stalledClosed.countDown();
              return;
            }
            case "/slow" -> {
              send(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n");
              for (int i = 0; i < SLOW_PIECES; i++) {
                Thread.sleep(SLOW_PAUSE.toMillis());
                send(out, "8\r\npiece " + i + "\n\r\n");
              }
              send(out, "0\r\n\r\n");
            }
            default -> send(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
          }
        }
      } catch (IOException e) {
        // the gateway went away: nothing left to serve
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private static void send(OutputStream out, String s) throws IOException {
      out.write(s.getBytes(StandardCharsets.US_ASCII));
      out.flush();
    }

    @Override
    public void close() {
      try {
        server.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      threads.shutdownNow();
    }
  }

  // ---- HTTP/1.1 framing, just enough for both ends ----

  /** One CRLF-terminated line without its CRLF, or null at end of stream before any byte. */
  static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != '\n') {
      if (c < 0) {
        if (b.size() == 0) {
          return null;
        }
        throw new IOException("end of stream inside a line: " + b);
      }
      if (c != '\r') {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.US_ASCII);
  }

  /** Header fields up to the empty line, names lower-cased. */
  static Map<String, String> headers(InputStream in) throws IOException {
    Map<String, String> h = new TreeMap<>();
    String l;
    while ((l = line(in)) != null && !l.isEmpty()) {
      int colon = l.indexOf(':');
      h.put(l.substring(0, colon).trim().toLowerCase(Locale.ROOT), l.substring(colon + 1).trim());
    }
    return h;
  }

  static byte[] chunked(InputStream in) throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    while (true) {
      String size = line(in);
      if (size == null) {
        throw new IOException("the connection closed inside a chunked body");
      }
      int n = Integer.parseInt(size.split(";")[0].trim(), 16);
      if (n == 0) {
        headers(in); // trailer fields, if any, and the final empty line
        return body.toByteArray();
      }
      body.write(in.readNBytes(n));
      line(in);
    }
  }
}
