package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
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
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway's timeouts over real sockets, in virtual time: {@code timeouts.idle} closes a
 * keep-alive client connection with no exchange in progress, {@code timeouts.response} answers 504
 * when an upstream's response head is late. Both are one timer per client connection, on the
 * gateway's {@link ManualTimers}: a test moves time with {@link ManualTimers#advance} and sees
 * exactly what happens just before and at each deadline; nothing sleeps. The upstream's pacing
 * (the slow response's pieces) is driven by the test too.
 */
class TimeoutTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** How long a client waits for anything the gateway owes it: a guard against a hang, never a timing. */
  private static final Duration PATIENCE = Duration.ofSeconds(10);

  @TempDir Path dir;
  final ScriptedUpstream upstream;
  final ManualTimers timers = new ManualTimers(ManualTicker.atFixedInstant());
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
        .ticker(timers.ticker()).timers(timers).threads(1).start();
  }

  /** A client connection, once the gateway has taken it (its timer is armed). */
  RawClient connect() throws Exception {
    int before = timers.pending();
    RawClient c = new RawClient(new Socket(InetAddress.getLoopbackAddress(), gateway.address().getPort()));
    timers.awaitPending(before + 1);
    return c;
  }

  void advance(long millis) throws Exception {
    timers.advance(Duration.ofMillis(millis));
  }

  static JsonNode assertTimedOut(RawResponse r) throws IOException {
    assertThat(r.status()).isEqualTo(504);
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

      advance(299);
      c.assertOpen();
      advance(1);
      assertThat(c.readAfterResponse()).as("end of stream, and no bytes before it").isEqualTo(-1);
    }
  }

  @Test
  void aConnectionThatNeverSendsARequestIsClosedAfterTheIdleTimeout() throws Exception {
    startGateway("300ms", "2s");
    try (RawClient c = connect()) {
      advance(299);
      c.assertOpen();
      advance(1);
      assertThat(c.readAfterResponse()).isEqualTo(-1);
    }
  }

  @Test
  void requestsMoreOftenThanTheIdleTimeoutKeepTheConnectionOpen() throws Exception {
    startGateway("400ms", "2s");
    try (RawClient c = connect()) {
      // ten requests 100 ms apart span more than two idle periods; a gap never comes near one
      for (int i = 0; i < 10; i++) {
        if (i > 0) {
          advance(100);
        }
        RawResponse r = c.get("/fast");
        assertThat(r.status()).as("request %d", i).isEqualTo(200);
        assertThat(r.header("connection")).as("request %d", i).isNull();
      }
      assertThat(upstream.connections()).as("the gateway's upstream connection was reused too").isEqualTo(1);
      advance(399);
      c.assertOpen();
      advance(1);
      assertThat(c.readAfterResponse()).isEqualTo(-1);
    }
  }

  @Test
  void aShorterIdleTimeoutFromAReloadAppliesToAnOpenConnection() throws Exception {
    // a long idle timeout but a short response timeout: the timer checks every 500 ms
    startGateway("30s", "500ms");
    try (RawClient c = connect()) {
      assertThat(c.get("/fast").status()).isEqualTo(200);
      // past the timer's first check, so the connection has been checked under the old idle timeout
      advance(700);
      c.assertOpen();
      Files.writeString(configFile, yaml("300ms", "500ms"));
      gateway.reloadFromFile();
      assertThat(gateway.config().timeouts().idle()).isEqualTo(Duration.ofMillis(300));
      // the timer's next check, 1 s after the last exchange: under the 30 s it would stay open
      advance(300);
      assertThat(c.readAfterResponse()).isEqualTo(-1);
    }
  }

  // ---- timeouts.response ----

  @Test
  void anUpstreamThatNeverAnswersGets504AndTheClientConnectionStaysUsable() throws Exception {
    startGateway("5s", "400ms");
    try (RawClient c = connect()) {
      c.send("/stall");
      upstream.awaitStall();
      advance(399);
      c.assertNothingYet();
      advance(1);
      RawResponse r = c.read();
      JsonNode body = assertTimedOut(r);
      assertThat(r.header("content-type")).startsWith("application/problem+json");
      assertThat(r.header("connection")).isNull(); // the client connection is kept
      assertThat(body.get("detail").asText()).contains("400 milliseconds");
      assertThat(body.get("why").asText()).isNotBlank();
      assertThat(body.get("timeoutSeconds").asDouble()).isEqualTo(0.4);
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
    try (RawClient c = connect()) {
      c.write("POST /upload HTTP/1.1\r\nHost: gateway\r\nContent-Length: 10\r\n\r\nab");
      upstream.awaitUploadBytes(2); // the gateway has read and forwarded what was sent
      // a stall is seen by two of the timer's checks, one idle period apart: never before the
      // idle timeout, and by two of them
      advance(299);
      c.assertNothingYet();
      advance(301);
      RawResponse r = c.read();
      assertThat(r.status()).isEqualTo(408);
      assertThat(r.header("connection")).isEqualTo("close");
      JsonNode body = JSON.readTree(r.body());
      assertThat(body.get("error").asText()).isEqualTo("request_timeout");
      assertThat(body.get("detail").asText()).contains("300 milliseconds");
      assertThat(body.get("timeoutSeconds").asDouble()).isEqualTo(0.3);
      assertThat(Schemas.validate(Schemas.REFUSAL, body)).isEmpty();
      assertThat(c.readAfterResponse()).as("the gateway closes the connection after the 408").isEqualTo(-1);
    }
  }

  @Test
  void anUploadThatKeepsComingIsNotCutByTheIdleTimeout() throws Exception {
    startGateway("300ms", "5s");
    try (RawClient c = connect()) {
      c.write("POST /upload HTTP/1.1\r\nHost: gateway\r\nContent-Length: 8\r\n\r\n");
      for (int i = 0; i < 8; i++) { // 8 bytes 150 ms apart: 1.2 s in all, four idle periods
        advance(150);
        c.write(Character.toString('0' + i));
        upstream.awaitUploadBytes(i + 1);
      }
      RawResponse r = c.read();
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("got01234567");
    }
  }

  @Test
  void theResponseTimeoutRunsFromEachRequestOnAReusedConnection() throws Exception {
    startGateway("5s", "400ms");
    try (RawClient c = connect()) {
      assertThat(c.get("/fast").status()).isEqualTo(200);
      // a deadline carried over from the first request would time the second out early
      advance(300);
      c.send("/stall");
      upstream.awaitStall();
      advance(399);
      c.assertNothingYet();
      advance(1);
      assertTimedOut(c.read());
      assertThat(c.get("/fast").status()).isEqualTo(200);
    }
  }

  @Test
  void aSlowStreamingResponseOutlivesBothTimeoutsAndIdleCountsFromItsEnd() throws Exception {
    startGateway("300ms", "400ms");
    try (RawClient c = connect()) {
      c.send("/slow");
      assertThat(c.readHead().status()).isEqualTo(200);
      // the body takes longer than both timeouts: neither may cut a response whose head has arrived
      StringBuilder body = new StringBuilder();
      for (int i = 0; i < ScriptedUpstream.SLOW_PIECES; i++) {
        advance(ScriptedUpstream.SLOW_PAUSE.toMillis());
        upstream.releaseSlowPiece();
        body.append(c.readChunk());
      }
      upstream.releaseSlowPiece(); // the last chunk
      assertThat(c.readChunk()).isEmpty();
      assertThat(body.toString()).isEqualTo(ScriptedUpstream.SLOW_BODY);
      // the timer kept running through the exchange: the connection, idle now, is closed in time
      advance(299);
      c.assertOpen();
      advance(1);
      assertThat(c.readAfterResponse()).isEqualTo(-1);
    }
  }

  // ---- the two ends ----

  /** An HTTP/1.1 client on one raw socket, so a test sees exactly when the gateway closes it. */
  static final class RawClient implements AutoCloseable {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RawClient(Socket socket) throws IOException {
      this.socket = socket;
      socket.setSoTimeout((int) PATIENCE.toMillis());
      this.in = new BufferedInputStream(socket.getInputStream());
      this.out = socket.getOutputStream();
    }

    RawResponse get(String path) throws IOException {
      send(path);
      return read();
    }

    void send(String path) throws IOException {
      write("GET " + path + " HTTP/1.1\r\nHost: gateway\r\n\r\n");
    }

    void write(String s) throws IOException {
      out.write(s.getBytes(StandardCharsets.US_ASCII));
      out.flush();
    }

    /** The next response, whole. */
    RawResponse read() throws IOException {
      RawResponse head = readHead();
      byte[] body;
      if ("chunked".equalsIgnoreCase(head.header("transfer-encoding"))) {
        body = chunked(in);
      } else {
        body = in.readNBytes(Integer.parseInt(head.headers().getOrDefault("content-length", "0")));
      }
      return new RawResponse(head.status(), head.headers(), new String(body, StandardCharsets.UTF_8));
    }

    /** The next response's status line and fields. */
    RawResponse readHead() throws IOException {
      String status = line(in);
      if (status == null) {
        throw new IOException("the gateway closed the connection instead of answering");
      }
      return new RawResponse(Integer.parseInt(status.split(" ")[1]), headers(in), "");
    }

    /** One chunk of a chunked body; empty for the last chunk (whose trailer section it reads too). */
    String readChunk() throws IOException {
      int n = Integer.parseInt(line(in).split(";")[0].trim(), 16);
      if (n == 0) {
        headers(in);
        return "";
      }
      String data = new String(in.readNBytes(n), StandardCharsets.UTF_8);
      line(in);
      return data;
    }

    /** The gateway has written nothing (what it writes on its loop is in this socket's buffer once the loop settled). */
    void assertNothingYet() throws IOException {
      assertThat(in.available()).as("bytes from the gateway").isZero();
    }

    /**
     * The gateway has neither written nor closed: a close made on its loop has reached this
     * socket once the loop settled, so a read that sees nothing for a moment finds it open.
     */
    void assertOpen() throws IOException {
      assertNothingYet();
      socket.setSoTimeout(200);
      try {
        int b = in.read();
        throw new AssertionError(b < 0 ? "the gateway closed the connection" : "the gateway wrote a byte");
      } catch (SocketTimeoutException expected) {
        // open and silent
      } finally {
        socket.setSoTimeout((int) PATIENCE.toMillis());
      }
    }

    /** The next byte the gateway sends, -1 when it closes; throws when {@link #PATIENCE} passes first. */
    int readAfterResponse() throws IOException {
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
   *   <li>{@code /slow}: the head at once, then {@link #SLOW_PIECES} chunks and the last one, each
   *       when the test releases it ({@link #releaseSlowPiece}), {@link #SLOW_PAUSE} apart in its time</li>
   *   <li>{@code /upload}: reads the body byte by byte ({@link #awaitUploadBytes}), then 200 {@code got} and the body</li>
   * </ul>
   * Each connection is served on its own thread.
   */
  static final class ScriptedUpstream implements AutoCloseable {
    static final int SLOW_PIECES = 8;
    static final Duration SLOW_PAUSE = Duration.ofMillis(200);
    static final String SLOW_BODY =
        "piece 0\npiece 1\npiece 2\npiece 3\npiece 4\npiece 5\npiece 6\npiece 7\n";

    final CountDownLatch stalledClosed = new CountDownLatch(1);
    private final Semaphore stalls = new Semaphore(0);
    private final Semaphore uploaded = new Semaphore(0);
    private int uploadedSeen;
    private final Semaphore slowPieces = new Semaphore(0);
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

    /** Waits until a /stall request has arrived. */
    void awaitStall() throws InterruptedException {
      assertThat(stalls.tryAcquire(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).as("a /stall request upstream").isTrue();
    }

    /** Waits until {@code total} bytes of upload bodies have arrived, in all. */
    void awaitUploadBytes(int total) throws InterruptedException {
      int more = total - uploadedSeen;
      assertThat(uploaded.tryAcquire(more, PATIENCE.toMillis(), TimeUnit.MILLISECONDS))
          .as("%d upload bytes upstream", total).isTrue();
      uploadedSeen = total;
    }

    /** Lets /slow send its next chunk. */
    void releaseSlowPiece() {
      slowPieces.release();
    }

    private void awaitSlowPiece() throws InterruptedException {
      if (!slowPieces.tryAcquire(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new InterruptedException("the test never released the next piece");
      }
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
              byte[] body = new byte[n];
              for (int i = 0; i < n; i++) {
                int b = in.read();
                if (b < 0) {
                  return; // the gateway gave up on the upload and closed
                }
                body[i] = (byte) b;
                uploaded.release();
              }
              send(out, "HTTP/1.1 200 OK\r\nContent-Length: " + (3 + n) + "\r\n\r\ngot" + new String(body, StandardCharsets.ISO_8859_1));
            }
            case "/fast" ->
                send(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nfast");
            case "/stall" -> {
              stalls.release();
              while (in.read() >= 0) {
                // never answers: waits for the gateway to give up and close
              }
              stalledClosed.countDown();
              return;
            }
            case "/slow" -> {
              send(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n");
              for (int i = 0; i < SLOW_PIECES; i++) {
                awaitSlowPiece();
                send(out, "8\r\npiece " + i + "\n\r\n");
              }
              awaitSlowPiece();
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
