package dev.headroom.gateway.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.headroom.ManualTicker;
import dev.headroom.client.HeadroomClient;
import dev.headroom.client.Pacing;
import dev.headroom.client.Scheduler;
import dev.headroom.client.VendClientOptions;
import dev.headroom.client.VendRateLimitedException;
import dev.headroom.gateway.Gateway;
import dev.headroom.gateway.GatewayConfig;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The self-pacing client's vend support ({@link VendClientOptions}) against the gateway's
 * {@code type: vend} routes in front of a real vend service, over loopback sockets (seed 003,
 * "Client Behavior" read against "Behavior" and "HTTP Mapping"). Gateway and client share one
 * {@link ManualTicker}: the client waits through {@link Scheduler#advancing}, which moves the
 * gateway's clock too, so windows pass in virtual time and no test depends on the machine's speed.
 */
class VendClientGatewayInteropTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  /** Every wait the clients asked for, in order. */
  private final List<Duration> waits = Collections.synchronizedList(new ArrayList<>());
  /** Status of every exchange the clients saw on the wire, retries included. */
  private final List<Integer> statuses = Collections.synchronizedList(new ArrayList<>());
  /** {@code call.function} of every call that reached the vend service. */
  private final List<String> served = Collections.synchronizedList(new ArrayList<>());

  private HttpServer vendService;
  private ExecutorService vendThreads;
  private Gateway gateway;

  @BeforeEach
  void start() throws Exception {
    vendThreads = Executors.newFixedThreadPool(2);
    vendService = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    vendService.setExecutor(vendThreads);
    vendService.createContext("/", ex -> {
      try (ex) {
        JsonNode call = JSON.readTree(ex.getRequestBody().readAllBytes());
        served.add(call.at("/call/function").asText());
        ObjectNode out = JSON.createObjectNode();
        out.putObject("protocol").put("name", "vend").put("version", "0.1.0");
        out.put("id", call.path("id").asText());
        out.putObject("result").put("success", true);
        byte[] b = JSON.writeValueAsBytes(out);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(200, b.length);
        ex.getResponseBody().write(b);
      }
    });
    vendService.start();
    // /multi: a service scope and a per-function limit of orders.create, reported under `scopes`;
    // /fn: a function scope only, one partition per function.
    String yaml = """
        service: {name: Vend interop}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        upstreams:
          vend: {url: "http://127.0.0.1:%d"}
        policies:
          svc: {quota: 5, window: 2s, algorithm: fixed-window, why: Limits keep the service available for everyone.}
          create: {quota: 3, window: 2s, algorithm: fixed-window, why: Limits keep the service available for everyone.}
          perfn: {quota: 2, window: 2s, algorithm: fixed-window, why: Limits keep the service available for everyone.}
        routes:
          - name: multi
            type: vend
            path: /multi
            upstream: vend
            vend: {limits: {service: svc, functions: {orders.create: {function: create}}}}
          - {name: fn, type: vend, path: /fn, upstream: vend, vend: {limits: {function: perfn}}}
        """.formatted(vendService.getAddress().getPort());
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "vend-interop.yaml")).ticker(ticker).threads(2).start();
  }

  @AfterEach
  void stop() {
    gateway.close();
    vendService.stop(0);
    vendThreads.shutdownNow();
  }

  /** A client on the shared virtual clock that declares the extension on every vend call. */
  private HeadroomClient client(Pacing pacing, boolean retry) {
    Scheduler advancing = Scheduler.advancing(ticker);
    return HeadroomClient.builder(HTTP).ticker(ticker).pacing(pacing)
        .scheduler(delay -> {
          if (!delay.isZero() && !delay.isNegative()) {
            waits.add(delay);
          }
          return advancing.delay(delay);
        })
        .vend(VendClientOptions.builder().paths("/multi", "/fn").declareExtension(true).retry(retry).build())
        .addNetworkInterceptor(chain -> chain.proceed(chain.request()).whenComplete((ex, e) -> {
          if (ex != null) {
            statuses.add(ex.status());
          }
        }))
        .build();
  }

  /** A call without the extension's declaration: the client adds it. */
  private HttpRequest call(String path, String id, String function) {
    String envelope = "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"" + id + "\",\"call\":{"
        + "\"function\":\"" + function + "\",\"version\":\"1\",\"arguments\":{}},\"context\":{\"caller\":\"billing\"}}";
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(envelope, StandardCharsets.UTF_8)).build();
  }

  private static JsonNode extensionData(HttpResponse<String> r) throws Exception {
    for (JsonNode e : JSON.readTree(r.body()).path("extensions")) {
      if ("urn:vnd:ext:rate-limit".equals(e.path("urn").asText())) {
        return e.get("data");
      }
    }
    return null;
  }

  /** Another client spends the window's two calls of orders.create on /fn. */
  private void spendOrdersCreateFromAnotherClient() throws Exception {
    HeadroomClient other = client(Pacing.BURST, false);
    for (String id : List.of("a1", "a2")) {
      assertThat(other.send(call("/fn", id, "orders.create"), BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    }
  }

  private long elapsedSeconds(long since) {
    return Duration.ofNanos(ticker.read() - since).toSeconds();
  }

  // seed 003, "Proactive Throttling": paced by the data of both scopes, the burst is never refused.
  @ParameterizedTest(name = "{0}")
  @EnumSource(Pacing.class)
  void aClientPacingByTheExtensionDataIsNeverRateLimited(Pacing pacing) throws Exception {
    HeadroomClient client = client(pacing, false);
    long start = ticker.read();
    HttpResponse<String> last = null;
    for (int i = 0; i < 10; i++) {
      last = client.send(call("/multi", "req_" + i, "orders.create"), BodyHandlers.ofString());
      assertThat(last.statusCode()).isEqualTo(200);
    }
    assertThat(statuses).hasSize(10).containsOnly(200);
    assertThat(served).hasSize(10);
    // the data the client paced by: both scopes, as the gateway reports them
    assertThat(extensionData(last).path("scopes").has("service")).isTrue();
    assertThat(extensionData(last).path("scopes").has("function")).isTrue();
    // 10 calls at 3 per 2 s window: the client waited through at least three window ends
    assertThat(elapsedSeconds(start)).isGreaterThanOrEqualTo(6);
  }

  // seed 003, "Handling RATE_LIMITED" and "Retry-After Header": retry off, the refusal is the outcome.
  @Test
  void withRetryOffACallBeyondTheQuotaFailsWithRateLimitedAndTheGatewaysRetryAfter() throws Exception {
    spendOrdersCreateFromAnotherClient();
    long start = ticker.read();
    // A second client knows nothing of the budget the first one spent: its call goes, and is refused.
    HeadroomClient second = client(Pacing.BURST, false);

    assertThatThrownBy(() -> second.send(call("/fn", "b1", "orders.create"), BodyHandlers.ofString()))
        .isInstanceOfSatisfying(VendRateLimitedException.class, e -> {
          assertThat(e.status()).isEqualTo(429);
          assertThat(e.attempts()).isEqualTo(1);
          String retryAfterHeader = e.headers().firstValue("Retry-After").orElseThrow();
          assertThat(e.vendError()).hasValueSatisfying(v -> {
            assertThat(v.code()).isEqualTo("RATE_LIMITED");
            assertThat(v.retryable()).isTrue();
            JsonNode details = v.details().orElseThrow();
            assertThat(details.at("/retry_after/unit").asText()).isEqualTo("second");
            assertThat(details.at("/retry_after/value").asLong()).isPositive()
                .isEqualTo(Long.parseLong(retryAfterHeader));
            assertThat(details.path("scope").asText()).isEqualTo("function");
            assertThat(details.path("function").asText()).isEqualTo("orders.create");
          });
          assertThat(e.retryAfter()).hasValue(Duration.ofSeconds(Long.parseLong(retryAfterHeader)));
          // "Server MUST still include extension data with current status"
          assertThat(e.extensionData()).singleElement().satisfies(b -> {
            assertThat(b.policy()).isEqualTo("vend:function:orders.create");
            assertThat(b.remaining()).isZero();
          });
        });
    assertThat(served).hasSize(2); // the refused call never reached the service
    assertThat(statuses).containsExactly(200, 200, 429);
    assertThat(ticker.read()).isEqualTo(start); // nothing waited
  }

  // seed 003, "Handling RATE_LIMITED": retry on, the client waits retry_after and the call then succeeds.
  @Test
  void withRetryOnTheClientWaitsTheRetryAfterAndTheCallSucceedsInTheNextWindow() throws Exception {
    spendOrdersCreateFromAnotherClient();
    long start = ticker.read();
    HeadroomClient second = client(Pacing.BURST, true);

    HttpResponse<String> r = second.send(call("/fn", "b1", "orders.create"), BodyHandlers.ofString());

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(r.body()).get("id").asText()).isEqualTo("b1");
    assertThat(statuses).containsExactly(200, 200, 429, 200);
    assertThat(served).hasSize(3);
    // one wait, retry_after * 2^0, no longer than the 2 s window
    assertThat(waits).singleElement().satisfies(w -> assertThat(w).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(2)));
    assertThat(ticker.read() - start).isEqualTo(waits.get(0).toNanos());
    assertThat(extensionData(r).path("remaining").asLong()).isEqualTo(1); // counted in the new window
  }

  // VendClientOptions: a function budget paces calls of that function only.
  @Test
  void aFunctionBudgetHoldsItsFunctionOnly() throws Exception {
    HeadroomClient client = client(Pacing.BURST, false);
    long start = ticker.read();
    client.send(call("/fn", "c1", "orders.create"), BodyHandlers.ofString());
    client.send(call("/fn", "c2", "orders.create"), BodyHandlers.ofString());
    // orders.create is spent for this window; orders.list has its own partition and budget
    HttpResponse<String> list1 = client.send(call("/fn", "l1", "orders.list"), BodyHandlers.ofString());
    HttpResponse<String> list2 = client.send(call("/fn", "l2", "orders.list"), BodyHandlers.ofString());
    assertThat(list1.statusCode()).isEqualTo(200);
    assertThat(list2.statusCode()).isEqualTo(200);
    assertThat(waits).isEmpty();
    assertThat(ticker.read()).isEqualTo(start);

    HttpResponse<String> create3 = client.send(call("/fn", "c3", "orders.create"), BodyHandlers.ofString());
    assertThat(create3.statusCode()).isEqualTo(200);
    assertThat(waits).singleElement().satisfies(w -> assertThat(w).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(2)));
    assertThat(statuses).hasSize(5).containsOnly(200);
    assertThat(served).containsExactly("orders.create", "orders.create", "orders.list", "orders.list", "orders.create");
  }
}
