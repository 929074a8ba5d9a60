package dev.headroom.gateway;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.gateway.ProxyFramingTest.Message;
import dev.headroom.gateway.ProxyFramingTest.Wire;
import io.netty.handler.codec.http.HttpHeaders;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * WebSocket through the gateway ({@code routes[].upgrade}, RFC 9110 section 7.8, RFC 6455), with
 * the JDK's {@link WebSocket} client against a Netty WebSocket echo upstream: the handshake is
 * forwarded with its Upgrade and Sec-WebSocket-* fields, and after the upstream's 101 the
 * connection is a byte tunnel (messages of several megabytes echo whole, which the tunnel only
 * carries by reading each side as the other drains); the handshake is one request to the route's
 * policies and a {@code concurrent-requests} policy's lease lasts as long as the tunnel; an idle
 * tunnel closes after {@code timeouts.tunnelIdle}; the tunnel is one access log line at its
 * close. Refused: another protocol, or an upgrade on a route without {@code upgrade} (Graceful
 * Boundaries 400); a handshake the upstream answers otherwise than 101 is relayed as it came.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class WebSocketGatewayTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int TIMEOUT_MILLIS = 20_000;

  @TempDir
  Path dir;
  WebSocketEchoUpstream upstream;
  Gateway gateway;
  /** The gateway's timers in virtual time, for the test that drives them; null for the rest. */
  ManualTimers timers;
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** Starts the echo and a gateway in front of it; {@code extra} is YAML added at the top level. */
  void start(String tunnelIdle, int inFlight, String extra) throws Exception {
    upstream = new WebSocketEchoUpstream();
    Gateway.Builder b = Gateway.builder(GatewayConfig.parse("""
        service: {name: WebSocket test}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        timeouts: {tunnelIdle: %s}
        %s
        upstreams:
          echo: {url: "http://127.0.0.1:%d"}
        policies:
          in-flight: {quota: %d, window: 1m, unit: concurrent-requests, partition: global,
                      why: One conversation at a time keeps the echo responsive.}
        routes:
          - {name: ws, method: GET, path: "/ws/**", upstream: echo, policies: [in-flight], upgrade: [websocket]}
          - {name: refusing, method: GET, path: "/reject", upstream: echo, upgrade: [websocket]}
          - {name: plain, method: GET, path: "/plain", upstream: echo}
        """.formatted(tunnelIdle, extra, upstream.port(), inFlight), "ws.yaml"));
    if (timers != null) {
      b.ticker(timers.ticker()).timers(timers);
    }
    gateway = b.threads(2).start();
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

  URI ws(String path) {
    return URI.create("ws://127.0.0.1:" + gateway.address().getPort() + path);
  }

  /** A client that collects the messages it receives, whole, and hears the connection's end. */
  static final class Collector implements WebSocket.Listener {
    private final ByteArrayOutputStream parts = new ByteArrayOutputStream();
    private final StringBuilder text = new StringBuilder();
    private CompletableFuture<Object> next = new CompletableFuture<>();
    /** Completes with the close code, or the error, when the connection ends. */
    final CompletableFuture<Object> ended = new CompletableFuture<>();

    synchronized CompletableFuture<Object> expect() {
      next = new CompletableFuture<>();
      return next;
    }

    @Override
    public void onOpen(WebSocket webSocket) {
      webSocket.request(1);
    }

    @Override
    public synchronized CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
      text.append(data);
      if (last) {
        next.complete(text.toString());
        text.setLength(0);
      }
      webSocket.request(1);
      return null;
    }

    @Override
    public synchronized CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
      byte[] b = new byte[data.remaining()];
      data.get(b);
      parts.writeBytes(b);
      if (last) {
        next.complete(parts.toByteArray());
        parts.reset();
      }
      webSocket.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
      ended.complete(statusCode);
      return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
      ended.complete(error);
    }
  }

  WebSocket open(String path, Collector c) throws Exception {
    return http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5)).buildAsync(ws(path), c)
        .get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
  }

  /** The handshake's failure: the response the gateway answered instead of 101. */
  WebSocketHandshakeException refusedHandshake(String path) {
    Throwable t = catchThrowable(() -> http.newWebSocketBuilder().buildAsync(ws(path), new Collector()).join());
    assertThat(t).isInstanceOf(CompletionException.class).hasCauseInstanceOf(WebSocketHandshakeException.class);
    return (WebSocketHandshakeException) t.getCause();
  }

  @Test
  void textAndBinaryMessagesEchoThroughTheTunnelAndTheHandshakeKeepsItsWebSocketFields() throws Exception {
    start("5m", 10, "");
    Collector c = new Collector();
    WebSocket w = open("/ws/chat?room=1", c);
    HttpHeaders seen = upstream.takeHandshake();
    assertThat(seen.get("Upgrade")).isEqualToIgnoringCase("websocket");
    assertThat(seen.get("Connection")).containsIgnoringCase("upgrade");
    assertThat(seen.get("Sec-WebSocket-Key")).isNotBlank();
    assertThat(seen.get("Sec-WebSocket-Version")).isEqualTo("13");
    assertThat(seen.get("X-Forwarded-For")).isEqualTo("127.0.0.1");
    CompletableFuture<Object> hello = c.expect();
    w.sendText("hello, tunnel", true).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    assertThat(hello.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).isEqualTo("hello, tunnel");
    CompletableFuture<Object> bin = c.expect();
    w.sendBinary(ByteBuffer.wrap(new byte[] {0, 1, 2, (byte) 0xff}), true).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    assertThat((byte[]) bin.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).containsExactly(0, 1, 2, 0xff);
    w.sendClose(WebSocket.NORMAL_CLOSURE, "bye").get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    assertThat(c.ended.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).isEqualTo(WebSocket.NORMAL_CLOSURE);
  }

  /** Several messages of several megabytes each, sent back to back: each comes back whole and in order. */
  @Test
  void messagesOfSeveralMegabytesEchoWholeAndInOrder() throws Exception {
    start("5m", 10, "");
    Collector c = new Collector();
    WebSocket w = open("/ws/bulk", c);
    Random random = new Random(42);
    for (int i = 0; i < 3; i++) {
      byte[] message = new byte[(6 << 20) + i];
      random.nextBytes(message);
      CompletableFuture<Object> echoed = c.expect();
      w.sendBinary(ByteBuffer.wrap(message), true).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
      assertThat((byte[]) echoed.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).isEqualTo(message);
    }
    w.sendClose(WebSocket.NORMAL_CLOSURE, "").get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    c.ended.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
  }

  /**
   * A client that reads nothing while the echo sends it megabytes: the gateway stops reading the
   * upstream once the client's side is full, and the whole stream still arrives once the client
   * reads (bytes are never dropped under back-pressure).
   */
  @Test
  void aClientThatStopsReadingHoldsTheUpstreamBackWithoutLosingBytes() throws Exception {
    start("5m", 10, "");
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), gateway.address().getPort()), TIMEOUT_MILLIS);
      s.setSoTimeout(TIMEOUT_MILLIS);
      s.setReceiveBufferSize(16 << 10);
      InputStream in = new BufferedInputStream(s.getInputStream());
      s.getOutputStream().write(("GET /ws/raw HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
          + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").getBytes(ISO_8859_1));
      ProxyFramingTest.Head h = Wire.head(in);
      assertThat(h.startLine()).startsWith("HTTP/1.1 101");
      assertThat(h.get("Upgrade")).isEqualToIgnoringCase("websocket");
      assertThat(h.get("Connection")).isEqualToIgnoringCase("upgrade");
      // RFC 6455 section 1.3: the accept value of this key
      assertThat(h.get("Sec-WebSocket-Accept")).isEqualTo("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
      // eight masked binary frames of 1 MiB each, echoed back unmasked, read only after all went out
      int frames = 8;
      int size = 1 << 20;
      byte[] payload = new byte[size];
      new Random(7).nextBytes(payload);
      for (int i = 0; i < frames; i++) {
        s.getOutputStream().write(maskedBinaryFrame(payload));
      }
      s.getOutputStream().flush();
      for (int i = 0; i < frames; i++) {
        assertThat(in.read()).isEqualTo(0x82); // FIN, binary
        assertThat(in.read()).isEqualTo(127); // unmasked, 64-bit length
        long len = 0;
        for (int j = 0; j < 8; j++) {
          len = len << 8 | in.read();
        }
        assertThat(len).isEqualTo(size);
        assertThat(Wire.exactly(in, size)).isEqualTo(payload);
      }
    }
  }

  static byte[] maskedBinaryFrame(byte[] payload) {
    ByteArrayOutputStream f = new ByteArrayOutputStream();
    f.write(0x82);
    f.write(0x80 | 127);
    for (int j = 7; j >= 0; j--) {
      f.write((int) ((long) payload.length >>> (8 * j)) & 0xff);
    }
    byte[] mask = {1, 2, 3, 4};
    f.writeBytes(mask);
    for (int i = 0; i < payload.length; i++) {
      f.write(payload[i] ^ mask[i & 3]);
    }
    return f.toByteArray();
  }

  /**
   * With one conversation allowed, a second handshake while the first tunnel is open is refused
   * with the ordinary 429 and its RateLimit fields; once the first closes, its lease is given back
   * and a handshake is accepted again.
   */
  @Test
  void aConcurrencyLeaseIsHeldForTheTunnelsLifeAndReleasedWhenItCloses() throws Exception {
    start("5m", 1, "");
    Collector first = new Collector();
    WebSocket w = open("/ws/one", first);
    WebSocketHandshakeException refused = refusedHandshake("/ws/two");
    assertThat(refused.getResponse().statusCode()).isEqualTo(429);
    assertThat(refused.getResponse().headers().firstValue("RateLimit-Policy")).isPresent();
    assertThat(refused.getResponse().headers().firstValue("Retry-After")).isPresent();
    // the first tunnel is still open and carries messages
    CompletableFuture<Object> echoed = first.expect();
    w.sendText("still here", true).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    assertThat(echoed.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).isEqualTo("still here");
    w.sendClose(WebSocket.NORMAL_CLOSURE, "").get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    first.ended.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    openOnceReleased("/ws/three").abort();
  }

  /**
   * A handshake on a route limited to one conversation, retried while it is refused with 429: the
   * lease of a tunnel that just closed is given back when its close reaches the gateway, just
   * after the client sees it.
   */
  WebSocket openOnceReleased(String path) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try {
        return open(path, new Collector());
      } catch (ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(WebSocketHandshakeException.class);
        assertThat(((WebSocketHandshakeException) e.getCause()).getResponse().statusCode()).isEqualTo(429);
        assertThat(System.nanoTime() - deadline).as("the lease was never released").isNegative();
        Thread.sleep(50);
      }
    }
  }

  /**
   * A tunnel that carries nothing either way for timeouts.tunnelIdle is closed, and its lease given
   * back; each byte it carries starts the idle time again. Time is virtual (the gateway's timers).
   */
  @Test
  void anIdleTunnelClosesAfterTunnelIdleAndGivesItsLeaseBack() throws Exception {
    timers = new ManualTimers(ManualTicker.atFixedInstant());
    start("10s", 1, "");
    Collector c = new Collector();
    WebSocket w = open("/ws/idle", c);
    echo(w, c, "at 0s");
    timers.advance(Duration.ofSeconds(9));
    echo(w, c, "at 9s, before the idle time"); // still open, and the idle time starts again
    timers.advance(Duration.ofSeconds(9));
    echo(w, c, "at 18s, 9s after the last message");
    assertThat(c.ended).isNotDone();
    timers.advance(Duration.ofSeconds(10));
    // the gateway closes both connections without a WebSocket close frame: the client sees the end
    assertThat(c.ended.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).isNotNull();
    openOnceReleased("/ws/after-idle").abort();
  }

  void echo(WebSocket w, Collector c, String text) throws Exception {
    CompletableFuture<Object> echoed = c.expect();
    w.sendText(text, true).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    assertThat(echoed.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).isEqualTo(text);
  }

  @Test
  void anotherProtocolIsRefusedWithAGracefulBoundaries400NamingWhatTheRouteAllows() throws Exception {
    start("5m", 10, "");
    Message m = raw("GET /ws/x HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: IRC/6.9\r\n"
        + "Accept: application/json\r\n\r\n");
    assertThat(m.status()).isEqualTo(400);
    JsonNode b = JSON.readTree(m.data());
    assertThat(b.get("error").asText()).isEqualTo("upgrade_not_allowed");
    assertThat(b.get("detail").asText()).contains("/ws/x").contains("websocket").contains("IRC/6.9");
    assertThat(b.get("why").asText()).isNotBlank();
    assertThat(b.get("allowedUpgrades")).hasSize(1);
    assertThat(b.get("allowedUpgrades").get(0).asText()).isEqualTo("websocket");
    assertThat(Schemas.validate(Schemas.REFUSAL, b)).isEmpty();
  }

  /** A route without upgrade refuses a WebSocket handshake (rather than serving it as a plain GET). */
  @Test
  void aRouteWithoutUpgradeRefusesAWebSocketHandshakeWith400() throws Exception {
    start("5m", 10, "");
    WebSocketHandshakeException e = refusedHandshake("/plain");
    assertThat(e.getResponse().statusCode()).isEqualTo(400);
    Message m = raw("GET /plain HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        + "Accept: application/json\r\n\r\n");
    JsonNode b = JSON.readTree(m.data());
    assertThat(b.get("error").asText()).isEqualTo("upgrade_not_allowed");
    assertThat(b.get("detail").asText()).contains("does not accept connection upgrades");
    assertThat(b.get("allowedUpgrades")).isEmpty();
  }

  /** An offer of h2c alone is ignored (RFC 9113 section 3.1 deprecates it): the request is served in HTTP/1.1. */
  @Test
  void anOfferOfH2cAloneIsIgnoredAndTheRequestServedPlain() throws Exception {
    start("5m", 10, "");
    Message m = raw("GET /reject HTTP/1.1\r\nHost: test\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
        + "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n");
    // the echo answers 400 to anything but a handshake: so it was reached, as a plain GET
    assertThat(m.status()).isEqualTo(400);
    assertThat(m.data()).isEqualTo(WebSocketEchoUpstream.REFUSED);
  }

  @Test
  void aHandshakeTheUpstreamRefusesIsRelayedAsAnOrdinaryResponse() throws Exception {
    start("5m", 10, "");
    WebSocketHandshakeException e = refusedHandshake("/reject");
    assertThat(e.getResponse().statusCode()).isEqualTo(400);
    assertThat(e.getResponse().body()).isEqualTo(WebSocketEchoUpstream.REFUSED);
  }

  /** The tunnel is one access log line, written when it closes: status 101, the bytes each way, its duration. */
  @Test
  void theTunnelIsOneAccessLogLineWrittenAtItsClose() throws Exception {
    Path log = dir.resolve("access.log");
    start("5m", 1, "accessLog: {format: json, path: \"" + log + "\"}");
    Collector c = new Collector();
    WebSocket w = open("/ws/logged", c);
    CompletableFuture<Object> echoed = c.expect();
    w.sendText("x".repeat(1000), true).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    echoed.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    w.sendClose(WebSocket.NORMAL_CLOSURE, "").get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    c.ended.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    // the exchange has ended (its line offered to the log) once its lease is back: one at a time
    openOnceReleased("/ws/probe").abort();
    gateway.close(); // writes what the log buffered
    assertThat(theTunnelsLine(log, "/ws/logged").get("durationMs").asDouble()).isPositive();
  }

  /**
   * The one access log line of the tunnel at {@code path} on route {@code ws} that carried a text
   * message of 1000 bytes each way and a close: status 101, the bytes each way.
   */
  static JsonNode theTunnelsLine(Path log, String path) throws IOException {
    List<JsonNode> lines = new ArrayList<>();
    for (String l : Files.readAllLines(log)) {
      JsonNode n = JSON.readTree(l);
      if (n.get("path").asText().equals(path)) {
        lines.add(n);
      }
    }
    assertThat(lines).hasSize(1);
    JsonNode a = lines.get(0);
    assertThat(a.get("status").asInt()).isEqualTo(101);
    assertThat(a.get("route").asText()).isEqualTo("ws");
    // 1000 bytes of text in a masked frame (4 header, 4 mask) and a close frame, and back unmasked
    assertThat(a.get("bytesIn").asLong()).isGreaterThanOrEqualTo(1008);
    assertThat(a.get("bytesOut").asLong()).isGreaterThanOrEqualTo(1004);
    return a;
  }

  /**
   * A drain lets an open tunnel run (it has no response to end with Connection: close) until
   * shutdown.drainTimeout, then cuts it.
   */
  @Test
  void aDrainLetsATunnelRunUntilTheDrainTimeoutThenCutsIt() throws Exception {
    start("5m", 10, "");
    Collector c = new Collector();
    WebSocket w = open("/ws/draining", c);
    int port = gateway.address().getPort();
    CompletableFuture<Boolean> drained = Draining.begin(gateway, Duration.ofSeconds(2));
    // the drain has begun once the listener refuses new connections
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
      } catch (IOException refused) {
        break;
      }
      assertThat(System.nanoTime() - deadline).as("the drain never began").isNegative();
      Thread.sleep(20);
    }
    CompletableFuture<Object> echoed = c.expect();
    w.sendText("during the drain", true).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    assertThat(echoed.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).isEqualTo("during the drain");
    assertThat(drained.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).as("the tunnel was cut, not finished").isFalse();
    assertThat(c.ended.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).isNotNull();
  }

  /** Python's websockets library (python3-websockets) as the client: a second, independent implementation. */
  @Test
  void aPythonWebsocketsClientEchoesThroughTheGateway() throws Exception {
    Path python = Path.of("/usr/bin/python3");
    Assumptions.assumeTrue(Files.isExecutable(python), "no /usr/bin/python3");
    Process probe = new ProcessBuilder(python.toString(), "-c", "import websockets").redirectErrorStream(true).start();
    Assumptions.assumeTrue(probe.waitFor(30, TimeUnit.SECONDS) && probe.exitValue() == 0, "no python3-websockets");
    start("5m", 10, "");
    String script = """
        import asyncio, hashlib, os, sys, websockets
        async def main():
            async with websockets.connect(sys.argv[1], max_size=None) as ws:
                await ws.send("hello from python")
                print(await ws.recv())
                big = os.urandom(3 * 1024 * 1024)
                await ws.send(big)
                echoed = await ws.recv()
                print(hashlib.sha256(echoed).hexdigest() == hashlib.sha256(big).hexdigest(), len(echoed))
        asyncio.run(main())
        """;
    Process p = new ProcessBuilder(python.toString(), "-c", script, ws("/ws/python").toString())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), ISO_8859_1);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out.lines().toList()).containsExactly("hello from python", "True " + (3 * 1024 * 1024));
  }

  /** Sends {@code request} on a new connection and reads one response. */
  Message raw(String request) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), gateway.address().getPort()), TIMEOUT_MILLIS);
      s.setSoTimeout(TIMEOUT_MILLIS);
      s.getOutputStream().write(request.getBytes(ISO_8859_1));
      InputStream in = new BufferedInputStream(s.getInputStream());
      return Wire.body(in, Wire.head(in), false);
    }
  }
}
