package dev.headroom.gateway;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import io.netty.handler.codec.http.HttpHeaders;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * WebSocket over HTTP/2 (RFC 8441) through the gateway, with Python's h2 package as the client
 * ({@code src/test/resources/h2ws/client.py}: h2 speaks HTTP/2, the script writes the WebSocket
 * frames) and a Netty WebSocket echo as the upstream, over HTTP/1.1: the gateway advertises
 * {@code SETTINGS_ENABLE_CONNECT_PROTOCOL} (section 3); an extended CONNECT (section 4) is one
 * request to the route's policies and becomes the upstream's HTTP/1.1 handshake (section 5: the
 * gateway adds the key and version), answered {@code :status 200} after the upstream's 101, then
 * the stream's DATA frames carry the WebSocket frames both ways, within HTTP/2 flow control
 * (messages of megabytes, several times the stream's window); a {@code concurrent-requests} lease
 * lasts as long as the tunnel; {@code timeouts.tunnelIdle} closes it with END_STREAM; it is one
 * access log line. Refused as for HTTP/1.1: 429 past the quota, 400 {@code upgrade_not_allowed} on
 * a route without {@code upgrade}; 502 when the upstream answers 2xx without switching (the client
 * would read it as the tunnel's opening), the upstream's 4xx relayed. Plain CONNECT stays refused.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ExtendedConnectGatewayTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path PYTHON = Path.of("/usr/bin/python3");

  @TempDir
  Path dir;
  WebSocketEchoUpstream echo;
  TestUpstream plain;
  /** Answers every request with a 101 whose Sec-WebSocket-Accept answers no key. */
  ServerSocket wrongAccept;
  Gateway gateway;
  /** The gateway's timers in virtual time, for the test that drives them; null for the rest. */
  ManualTimers timers;
  final List<H2Client> clients = new ArrayList<>();

  /** The client is Python's h2: a gateway test that cannot run it fails, saying what to install. */
  @BeforeAll
  static void pythonH2IsThere() throws Exception {
    if (!Files.isExecutable(PYTHON)) {
      fail("no " + PYTHON + ": this test drives the gateway with Python's h2 package (apt-get install python3-h2)");
    }
    Process probe = new ProcessBuilder(PYTHON.toString(), "-c", "import h2").redirectErrorStream(true).start();
    String out = new String(probe.getInputStream().readAllBytes(), UTF_8);
    if (!probe.waitFor(30, TimeUnit.SECONDS) || probe.exitValue() != 0) {
      fail("python3-h2 is missing (" + out.strip() + "): this test drives the gateway with Python's h2 package;"
          + " install it with apt-get install python3-h2 (.ci/run does)");
    }
  }

  void start(String tunnelIdle, int inFlight, String extra) throws Exception {
    echo = new WebSocketEchoUpstream();
    plain = new TestUpstream();
    wrongAccept = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::answerWithAWrongAccept, "wrong-accept-upstream");
    t.setDaemon(true);
    t.start();
    Gateway.Builder b = Gateway.builder(GatewayConfig.parse("""
        service: {name: WebSocket over HTTP/2 test}
        listen: {host: 127.0.0.1, port: 0, http2: true}
        admin: {host: 127.0.0.1, port: 0}
        timeouts: {tunnelIdle: %s}
        %s
        upstreams:
          echo: {url: "http://127.0.0.1:%d"}
          plain: {url: "http://127.0.0.1:%d"}
          wrong-accept: {url: "http://127.0.0.1:%d"}
        policies:
          in-flight: {quota: %d, window: 1m, unit: concurrent-requests, partition: global,
                      why: One conversation at a time keeps the echo responsive.}
        routes:
          - {name: ws, method: GET, path: "/ws/**", upstream: echo, policies: [in-flight], upgrade: [websocket]}
          - {name: refusing, method: GET, path: "/reject", upstream: echo, upgrade: [websocket]}
          - {name: ignoring, method: GET, path: "/echo", upstream: plain, upgrade: [websocket]}
          - {name: wrong-accept, method: GET, path: "/wrong-accept", upstream: wrong-accept, upgrade: [websocket]}
          - {name: no-upgrade, method: GET, path: "/plain", upstream: echo}
        """.formatted(tunnelIdle, extra, echo.port(), plain.port(), wrongAccept.getLocalPort(), inFlight), "h2ws.yaml"));
    if (timers != null) {
      b.ticker(timers.ticker()).timers(timers);
    }
    gateway = b.threads(2).start();
  }

  /** The upstream whose switch the gateway must not trust: a 101 with an accept value for no key. */
  private void answerWithAWrongAccept() {
    while (!wrongAccept.isClosed()) {
      try (Socket s = wrongAccept.accept()) {
        InputStream in = s.getInputStream();
        for (int matched = 0; matched < 4; ) { // the request head ends with CRLF CRLF
          int b = in.read();
          if (b < 0) {
            break;
          }
          matched = b == (matched % 2 == 0 ? '\r' : '\n') ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        s.getOutputStream().write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n").getBytes(UTF_8));
        in.read(); // until the gateway closes
      } catch (IOException closed) {
        return;
      }
    }
  }

  @AfterEach
  void stop() throws Exception {
    for (H2Client c : clients) {
      c.close();
    }
    if (gateway != null) {
      gateway.close();
    }
    if (echo != null) {
      echo.close();
    }
    if (plain != null) {
      plain.close();
    }
    if (wrongAccept != null) {
      wrongAccept.close();
    }
  }

  /**
   * One HTTP/2 connection to the gateway, in the Python client: each {@link #ask} writes one
   * command and reads its one JSON answer.
   */
  final class H2Client implements AutoCloseable {
    private final Process process;
    private final Writer in;
    private final BufferedReader out;
    private final Path errors;

    H2Client() throws IOException, URISyntaxException {
      Path script = Path.of(ExtendedConnectGatewayTest.class.getResource("/h2ws/client.py").toURI());
      errors = Files.createTempFile(dir, "client", ".err");
      process = new ProcessBuilder(PYTHON.toString(), script.toString(), String.valueOf(gateway.address().getPort()))
          .redirectError(errors.toFile()).start();
      in = new OutputStreamWriter(process.getOutputStream(), UTF_8);
      out = new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8));
      clients.add(this);
    }

    JsonNode ask(String command) throws IOException {
      in.write(command + "\n");
      in.flush();
      String line = out.readLine();
      if (line == null) {
        fail("the client exited on \"" + command + "\": " + Files.readString(errors));
      }
      JsonNode answer = JSON.readTree(line);
      assertThat(answer.has("error")).as("%s -> %s", command, answer).isFalse();
      return answer;
    }

    /** Opens a WebSocket on a new stream called {@code name}: 200, or fails. */
    void open(String name, String path) throws IOException {
      JsonNode r = ask("open " + name + " " + path);
      assertThat(r.path("status").asInt()).as("%s", r).isEqualTo(200);
    }

    void echo(String name, String text) throws IOException {
      JsonNode r = ask("text " + name + " " + text);
      assertThat(r.get("text").asText()).isEqualTo(text);
    }

    @Override
    public void close() throws Exception {
      process.destroy();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }

  H2Client client() throws Exception {
    return new H2Client();
  }

  /**
   * Opens {@code name} on a route limited to one conversation, again while it is refused with 429:
   * the lease of a tunnel that just closed is given back when its close reaches the gateway, just
   * after the client sees it.
   */
  void openOnceReleased(H2Client c, String name, String path) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    for (int i = 0; ; i++) {
      JsonNode r = c.ask("open " + name + i + " " + path);
      if (r.path("status").asInt() == 200) {
        return;
      }
      assertThat(r.path("status").asInt()).as("%s", r).isEqualTo(429);
      assertThat(System.nanoTime() - deadline).as("the lease was never released").isNegative();
      Thread.sleep(50);
    }
  }

  /**
   * The gateway ended the stream in order (RFC 8441 section 5: END_STREAM), then, as the client's
   * side was still open, Netty reset it with CANCEL (0x8) or not at all.
   */
  static void assertEndStream(JsonNode end) {
    assertThat(end.get("ended").asBoolean()).as("%s", end).isTrue();
    assertThat(end.get("reset").isNull() || end.get("reset").asInt() == 8).as("%s", end).isTrue();
  }

  /** Section 3: the setting is sent; sections 4 and 5: the handshake upstream, the messages through. */
  @Test
  void anExtendedConnectBecomesTheUpstreamsHandshakeAndItsStreamCarriesTheMessages() throws Exception {
    start("5m", 10, "");
    H2Client c = client();
    assertThat(c.ask("settings").get("enableConnectProtocol").asInt()).isEqualTo(1);
    JsonNode opened = c.ask("open a /ws/chat?room=1 sec-websocket-protocol=chat origin=http://example.test");
    assertThat(opened.get("status").asInt()).as("%s", opened).isEqualTo(200);
    // no field of the HTTP/1.1 switch reaches an HTTP/2 client (RFC 8441 section 5, RFC 9113 section 8.2.2)
    assertThat(opened.get("headers").has("sec-websocket-accept")).isFalse();
    assertThat(opened.get("headers").has("upgrade")).isFalse();
    HttpHeaders seen = echo.takeHandshake();
    assertThat(seen.get("Upgrade")).isEqualToIgnoringCase("websocket");
    assertThat(seen.get("Connection")).containsIgnoringCase("upgrade");
    assertThat(seen.get("Sec-WebSocket-Key")).matches("[A-Za-z0-9+/]{22}==");
    assertThat(seen.get("Sec-WebSocket-Version")).isEqualTo("13");
    assertThat(seen.get("Sec-WebSocket-Protocol")).isEqualTo("chat");
    assertThat(seen.get("Origin")).isEqualTo("http://example.test");
    assertThat(seen.get("Host")).isEqualTo("127.0.0.1:" + gateway.address().getPort());
    c.echo("a", "hello,over,h2");
    // several times the 64 KiB stream window each way: carried only as each side's window opens
    JsonNode big = c.ask("binary a " + (3 * 1024 * 1024));
    assertThat(big.get("same").asBoolean()).as("%s", big).isTrue();
    JsonNode closed = c.ask("close a");
    assertThat(closed.get("close").asInt()).isEqualTo(1000);
    assertEndStream(closed); // the upstream's close
  }

  /** Streams of one connection are tunnels of their own, each with its upstream connection. */
  @Test
  void twoTunnelsOnOneConnectionAreIndependent() throws Exception {
    start("5m", 10, "");
    H2Client c = client();
    c.open("a", "/ws/a");
    c.open("b", "/ws/b");
    c.echo("b", "to-b");
    c.echo("a", "to-a");
    assertEndStream(c.ask("close a"));
    c.echo("b", "b-still-open");
  }

  /** The client's END_STREAM ends the tunnel: the upstream connection is closed and the stream ended. */
  @Test
  void theClientsEndStreamClosesTheUpstreamConnection() throws Exception {
    start("5m", 10, "");
    H2Client c = client();
    c.open("a", "/ws/ended-by-client");
    c.echo("a", "before-the-end");
    assertThat(echo.openConnections()).isEqualTo(1);
    JsonNode ended = c.ask("end a");
    assertThat(ended.get("ended").asBoolean()).as("%s", ended).isTrue();
    assertThat(ended.get("reset").isNull()).as("both sides ended: nothing to reset, %s", ended).isTrue();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (echo.openConnections() != 0) {
      assertThat(System.nanoTime() - deadline).as("the upstream connection stayed open").isNegative();
      Thread.sleep(20);
    }
  }

  /** The handshake is one request to the route's policies; its lease lasts as long as the tunnel. */
  @Test
  void aConcurrencyLeaseIsHeldForTheTunnelsLifeAndASecondIsRefusedWithTheOrdinary429() throws Exception {
    start("5m", 1, "");
    H2Client c = client();
    c.open("a", "/ws/one");
    JsonNode refused = c.ask("open b /ws/two accept=application/json");
    assertThat(refused.get("status").asInt()).isEqualTo(429);
    assertThat(refused.get("headers").has("ratelimit-policy")).as("%s", refused).isTrue();
    assertThat(refused.get("headers").has("ratelimit")).as("%s", refused).isTrue();
    assertThat(refused.get("headers").has("retry-after")).as("%s", refused).isTrue();
    JsonNode body = JSON.readTree(refused.get("body").asText());
    assertThat(Schemas.validate(Schemas.REFUSAL_429, body)).isEmpty();
    c.echo("a", "still-here"); // the first tunnel carries on
    assertEndStream(c.ask("close a"));
    openOnceReleased(c, "c", "/ws/three");
  }

  /** A route without upgrade refuses as it does an HTTP/1.1 handshake: 400 upgrade_not_allowed. */
  @Test
  void aRouteWithoutUpgradeRefusesWithTheOrdinary400() throws Exception {
    start("5m", 10, "");
    JsonNode r = client().ask("open a /plain accept=application/json");
    assertThat(r.get("status").asInt()).isEqualTo(400);
    JsonNode b = JSON.readTree(r.get("body").asText());
    assertThat(b.get("error").asText()).isEqualTo("upgrade_not_allowed");
    assertThat(b.get("detail").asText()).contains("does not accept connection upgrades").contains("websocket");
    assertThat(b.get("allowedUpgrades")).isEmpty();
    assertThat(Schemas.validate(Schemas.REFUSAL, b)).isEmpty();
  }

  /**
   * An upstream that answers 2xx without switching would be read by the client as the tunnel's
   * opening (RFC 8441 section 5): 502 instead, and so is a 101 with a wrong Sec-WebSocket-Accept. A
   * 4xx is a refusal the client understands: relayed.
   */
  @Test
  void anUpstreamThatDoesNotSwitchIsA502AndItsRefusalIsRelayed() throws Exception {
    start("5m", 10, "");
    H2Client c = client();
    JsonNode ignored = c.ask("open a /echo accept=application/json");
    assertThat(ignored.get("status").asInt()).as("%s", ignored).isEqualTo(502);
    JsonNode b = JSON.readTree(ignored.get("body").asText());
    assertThat(b.get("detail").asText()).contains("without switching protocols");
    assertThat(Schemas.validate(Schemas.REFUSAL, b)).isEmpty();
    // a switch whose Sec-WebSocket-Accept answers another key (RFC 6455 section 4.1: the client fails it)
    JsonNode forged = c.ask("open w /wrong-accept accept=application/json");
    assertThat(forged.get("status").asInt()).as("%s", forged).isEqualTo(502);
    assertThat(JSON.readTree(forged.get("body").asText()).get("detail").asText()).contains("Sec-WebSocket-Accept");
    JsonNode refused = c.ask("open b /reject");
    assertThat(refused.get("status").asInt()).isEqualTo(400);
    assertThat(refused.get("body").asText()).isEqualTo(WebSocketEchoUpstream.REFUSED);
  }

  /** CONNECT without :protocol (RFC 9113 section 8.5) is refused as before; the connection lives on. */
  @Test
  void aPlainConnectIsStillRefused() throws Exception {
    start("5m", 10, "");
    H2Client c = client();
    JsonNode r = c.ask("connect a 127.0.0.1:" + echo.port());
    // no route matches the authority form: the gateway forwards only to its routes' upstreams
    assertThat(r.path("status").asInt()).as("%s", r).isEqualTo(404);
    assertThat(JSON.readTree(r.get("body").asText()).get("error").asText()).isEqualTo("not_found");
    c.open("b", "/ws/after");
    c.echo("b", "fine");
  }

  /**
   * RFC 8441 section 4: an extended CONNECT has :scheme, :path and :authority, and :protocol goes
   * with CONNECT only; otherwise the request is malformed and its stream reset with PROTOCOL_ERROR
   * (0x1). The connection lives on.
   */
  @Test
  void aMalformedExtendedConnectIsResetWithProtocolError() throws Exception {
    start("5m", 10, "");
    H2Client c = client();
    String authority = ":authority=127.0.0.1:" + gateway.address().getPort();
    List<String> malformed = List.of(
        ":method=CONNECT :protocol=websocket :scheme=http " + authority, // no :path
        ":method=CONNECT :protocol=websocket :path=/ws/x " + authority, // no :scheme
        ":method=CONNECT :protocol=websocket :scheme=http :path=/ws/x", // no :authority
        ":method=GET :protocol=websocket :scheme=http :path=/ws/x " + authority, // :protocol without CONNECT
        ":method=CONNECT :protocol=web@socket :scheme=http :path=/ws/x " + authority); // not a token
    for (int i = 0; i < malformed.size(); i++) {
      JsonNode r = c.ask("raw m" + i + " " + malformed.get(i));
      assertThat(r.path("reset").asInt(-1)).as("%s -> %s", malformed.get(i), r).isEqualTo(1);
    }
    c.open("fine", "/ws/after");
    c.echo("fine", "still-served");
  }

  /**
   * A tunnel that carries nothing either way for timeouts.tunnelIdle is closed (END_STREAM), and
   * its lease given back; each byte starts the idle time again. Time is virtual (the gateway's timers).
   */
  @Test
  void anIdleTunnelEndsAfterTunnelIdleAndGivesItsLeaseBack() throws Exception {
    timers = new ManualTimers(ManualTicker.atFixedInstant());
    start("10s", 1, "");
    H2Client c = client();
    c.open("a", "/ws/idle");
    c.echo("a", "at-0s");
    timers.advance(Duration.ofSeconds(9));
    c.echo("a", "at-9s");
    timers.advance(Duration.ofSeconds(9));
    c.echo("a", "at-18s");
    timers.advance(Duration.ofSeconds(10));
    assertEndStream(c.ask("wait a"));
    openOnceReleased(c, "b", "/ws/after-idle");
  }

  /**
   * Issue 33 item 5 over HTTP/2: a drain says GOAWAY NO_ERROR (RFC 9113 section 6.8) and lets a
   * tunnel on an open stream run, as over HTTP/1.1, until shutdown.drainTimeout, then cuts it: the
   * upstream connection closes and the drain reports that not everything finished.
   */
  @Test
  void aDrainSaysGoAwayAndLetsATunnelRunUntilTheDrainTimeoutThenCutsIt() throws Exception {
    start("5m", 10, "");
    H2Client c = client();
    c.open("a", "/ws/draining");
    c.echo("a", "before-the-drain");
    CompletableFuture<Boolean> drained = Draining.begin(gateway, Duration.ofSeconds(2));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    JsonNode goaway = c.ask("goaway");
    while (goaway.get("goaway").isNull()) {
      assertThat(System.nanoTime() - deadline).as("no GOAWAY came").isNegative();
      c.echo("a", "waiting-for-the-goaway"); // reads what the gateway sent meanwhile
      goaway = c.ask("goaway");
    }
    assertThat(goaway.get("goaway").asInt()).as("NO_ERROR").isZero();
    assertThat(goaway.get("lastStreamId").asInt()).as("the tunnel's stream may go on").isGreaterThanOrEqualTo(1);
    c.echo("a", "during-the-drain");
    assertThat(drained.get(10, TimeUnit.SECONDS)).as("the tunnel was cut, not finished").isFalse();
    while (echo.openConnections() != 0) {
      assertThat(System.nanoTime() - deadline).as("the upstream connection stayed open").isNegative();
      Thread.sleep(20);
    }
  }

  /** The tunnel is one access log line, written when it closes, with the bytes each way (the WebSocket test's). */
  @Test
  void theTunnelIsOneAccessLogLineWrittenAtItsClose() throws Exception {
    Path log = dir.resolve("access.log");
    start("5m", 1, "accessLog: {format: json, path: \"" + log + "\"}");
    H2Client c = client();
    c.open("a", "/ws/logged");
    c.echo("a", "x".repeat(1000));
    c.ask("close a");
    openOnceReleased(c, "probe", "/ws/probe"); // the exchange has ended once its lease is back
    gateway.close(); // writes what the log buffered
    // the handshake the upstream saw: a GET answered 101 (the client saw CONNECT answered 200)
    assertThat(WebSocketGatewayTest.theTunnelsLine(log, "/ws/logged").get("method").asText()).isEqualTo("GET");
  }
}
