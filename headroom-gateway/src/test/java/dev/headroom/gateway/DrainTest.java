package dev.headroom.gateway;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.gateway.ProxyFramingTest.Head;
import dev.headroom.gateway.ProxyFramingTest.Message;
import dev.headroom.gateway.ProxyFramingTest.Wire;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The gateway's graceful stop ({@link Gateway#drain(Duration)}, {@code POST /drain}) and its
 * readiness ({@code GET /ready}), over real sockets with a slow upstream: a drain refuses new
 * connections, answers the request in flight with its 200 and {@code Connection: close} (RFC 9112
 * section 9.6) and then closes the connection, closes idle keep-alive connections, and cuts what
 * is still running at {@code shutdown.drainTimeout}. {@code /ready} is 503 (RFC 9110 section
 * 15.6.4, with a Graceful Boundaries body) while it drains, and while a Redis store that fails
 * closed has no connection; {@code /health} stays 200.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DrainTest {
  private static final int TIMEOUT_MILLIS = 20_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  TestUpstream upstream;
  Gateway gateway;
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  void start(String drainTimeout, String store) throws Exception {
    upstream = new TestUpstream();
    gateway = Gateway.builder(GatewayConfig.parse("""
        service: {name: Drain}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        store: %s
        shutdown: {drainTimeout: %s}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          lots: {quota: 1000, window: 1m, partition: global, why: A bound the test never reaches.}
        routes:
          - {name: all, method: GET, path: "/**", upstream: up, policies: [lots]}
        """.formatted(store, drainTimeout, upstream.port()), "drain.yaml")).threads(2).start();
  }

  void start(String drainTimeout) throws Exception {
    start(drainTimeout, "{type: memory}");
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

  @Test
  void aRequestInFlightWhenTheDrainBeginsGetsIts200ThenTheConnectionCloses_rfc9112_9_6() throws Exception {
    start("10s");
    assertThat(ready().statusCode()).isEqualTo(200);
    try (Socket c = send("GET /slow/3000 HTTP/1.1\r\nHost: test\r\n\r\n")) {
      upstream.awaitRequest("/slow/3000");
      CompletableFuture<Boolean> drained = CompletableFuture.supplyAsync(this::drain);

      HttpResponse<String> notReady = awaitNotReady();
      JsonNode body = JSON.readTree(notReady.body());
      assertThat(body.get("error").asText()).isEqualTo("draining");
      assertThat(body.get("detail").asText()).isNotBlank();
      assertThat(body.get("why").asText()).isNotBlank();
      assertThat(http.send(HttpRequest.newBuilder(admin("/health")).build(), HttpResponse.BodyHandlers.ofString())
          .statusCode()).isEqualTo(200); // liveness is not readiness
      awaitRefused(); // no new connection is taken

      InputStream in = new BufferedInputStream(c.getInputStream());
      Message r = read(in);
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.data()).isEqualTo("slow");
      assertThat(r.head().get("connection")).isEqualTo("close");
      assertThat(in.read()).as("the connection ends after the response (FIN)").isEqualTo(-1);
      assertThat(drained.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).as("every exchange finished").isTrue();
    }
  }

  @Test
  void anIdleKeepAliveConnectionIsClosedWhenTheDrainBegins_rfc9112_9_6() throws Exception {
    start("10s");
    try (Socket c = send("GET /echo HTTP/1.1\r\nHost: test\r\n\r\n")) {
      InputStream in = new BufferedInputStream(c.getInputStream());
      Message r = read(in);
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.head().has("connection")).isFalse(); // kept alive
      CompletableFuture<Boolean> drained = CompletableFuture.supplyAsync(this::drain);
      assertThat(in.read()).as("the idle connection is closed (FIN)").isEqualTo(-1);
      c.close(); // the client closes its side: nothing is left in flight
      assertThat(drained.get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).isTrue();
    }
  }

  @Test
  void postDrainOnTheAdminPortBeginsTheDrain() throws Exception {
    start("10s");
    try (Socket c = send("GET /slow/1000 HTTP/1.1\r\nHost: test\r\n\r\n")) {
      upstream.awaitRequest("/slow/1000");
      HttpResponse<String> accepted = http.send(HttpRequest.newBuilder(admin("/drain"))
          .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(accepted.statusCode()).isEqualTo(202); // RFC 9110 section 15.3.3: begun, not finished
      assertThat(JSON.readTree(accepted.body()).get("drainTimeoutSeconds").asDouble()).isEqualTo(10.0);
      assertThat(ready().statusCode()).isEqualTo(503);
      awaitRefused();
      InputStream in = new BufferedInputStream(c.getInputStream());
      Message r = read(in);
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.head().get("connection")).isEqualTo("close");
      assertThat(in.read()).isEqualTo(-1);
    }
    assertThat(gateway.drained().toCompletableFuture().get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)).isTrue();
  }

  @Test
  void anExchangeStillRunningAtTheDrainTimeoutIsCut() throws Exception {
    start("500ms");
    try (Socket c = send("GET /slow/3000 HTTP/1.1\r\nHost: test\r\n\r\n")) {
      upstream.awaitRequest("/slow/3000");
      assertThat(drain()).as("an exchange had to be cut").isFalse();
      // the connection ended without a response: the 200 the upstream sends later never arrives
      int first;
      try {
        first = c.getInputStream().read();
      } catch (IOException reset) {
        first = -1;
      }
      assertThat(first).isEqualTo(-1);
    }
  }

  @Test
  void readinessIs503WhileARedisStoreThatFailsClosedHasNoConnectionButHealthStays200() throws Exception {
    int dead;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      dead = s.getLocalPort(); // closed again: connecting to it is refused
    }
    start("10s", "{type: redis, uri: \"redis://127.0.0.1:" + dead + "\", failurePolicy: fail-closed}");
    HttpResponse<String> r = ready();
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("retry-after")).hasValue("1");
    JsonNode body = JSON.readTree(r.body());
    assertThat(body.get("error").asText()).isEqualTo("store_unavailable");
    assertThat(body.get("why").asText()).contains("fail-closed");
    assertThat(http.send(HttpRequest.newBuilder(admin("/health")).build(), HttpResponse.BodyHandlers.ofString())
        .statusCode()).isEqualTo(200);
  }

  @Test
  void readinessIs200OnAReachableRedisStoreThatFailsClosed() throws Exception {
    start("10s", "{type: redis, uri: \"redis://127.0.0.1:6379\", failurePolicy: fail-closed, keyPrefix: \"drain-test:\"}");
    // the connection is made in the background: ready once it is open
    HttpResponse<String> r = ready();
    while (r.statusCode() != 200) {
      Thread.sleep(20);
      r = ready();
    }
    assertThat(JSON.readTree(r.body()).get("status").asText()).isEqualTo("ready");
  }

  @Test
  void aDrainTimeoutThatIsNotADurationIsAConfigurationError() {
    assertThatThrownBy(() -> GatewayConfig.parse("""
        service: {name: Drain}
        shutdown: {drainTimeout: soon}
        upstreams:
          up: {url: "http://127.0.0.1:1"}
        routes:
          - {name: all, method: GET, path: "/**", upstream: up}
        """, "drain.yaml")).isInstanceOf(ConfigException.class)
        .hasMessage("drain.yaml: shutdown.drainTimeout: \"soon\" is not valid; expected a duration: whole seconds (60) "
            + "or a value such as 500ms, 30s, 5m, 1h, 1d or PT1H");
    assertThatThrownBy(() -> GatewayConfig.parse("""
        service: {name: Drain}
        shutdown: {grace: 5s}
        upstreams:
          up: {url: "http://127.0.0.1:1"}
        routes:
          - {name: all, method: GET, path: "/**", upstream: up}
        """, "drain.yaml")).isInstanceOf(ConfigException.class).hasMessageContaining("shutdown.grace");
  }

  private boolean drain() {
    try {
      return gateway.drain();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private HttpResponse<String> ready() throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(admin("/ready")).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** {@code /ready} until it is not 200: the drain has begun. */
  private HttpResponse<String> awaitNotReady() throws IOException, InterruptedException {
    HttpResponse<String> r = ready();
    while (r.statusCode() == 200) {
      Thread.sleep(10);
      r = ready();
    }
    assertThat(r.statusCode()).isEqualTo(503);
    return r;
  }

  /**
   * Connects until the gateway refuses: its listener closes as the drain begins, asynchronously, so
   * a connection made in that instant is taken (and closed at once, retired). A connection that
   * reaches the listener's backlog as it closes is reset by the kernel rather than refused: that
   * too is the listener gone.
   */
  private void awaitRefused() throws IOException {
    while (true) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), gateway.address().getPort()), TIMEOUT_MILLIS);
      } catch (ConnectException refused) {
        return;
      } catch (SocketException reset) {
        if (!String.valueOf(reset.getMessage()).contains("reset")) {
          throw reset;
        }
      }
    }
  }

  private URI admin(String path) {
    return URI.create("http://127.0.0.1:" + gateway.adminAddress().orElseThrow().getPort() + path);
  }

  /** A raw HTTP/1.1 connection to the gateway, with {@code request} sent on it. */
  private Socket send(String request) throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), gateway.address().getPort()), TIMEOUT_MILLIS);
    s.setSoTimeout(TIMEOUT_MILLIS);
    s.getOutputStream().write(request.getBytes(ISO_8859_1));
    return s;
  }

  /** One response, framed by its fields. */
  private static Message read(InputStream in) throws IOException {
    Head h = Wire.head(in);
    assertThat(h).as("a response before the end of the stream").isNotNull();
    return Wire.body(in, h, false);
  }
}
