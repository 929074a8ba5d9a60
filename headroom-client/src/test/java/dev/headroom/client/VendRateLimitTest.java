package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The client side of the vend rate-limit extension (seed 003, "Client Behavior"): backoff by
 * {@code min(retry_after * 2^attempt, max_wait)}, bounded attempts, no immediate retry, retry only
 * when opted in, and proactive throttling by the extension data, against a real vend service on
 * loopback in virtual time.
 */
class VendRateLimitTest {

  static final String RATE_LIMITED_BODY = """
      { "protocol": { "name": "vend", "version": "0.1.0" }, "id": "req_789", "result": null,
        "errors": [{ "code": "RATE_LIMITED", "message": "Rate limit exceeded for orders.create", "retryable": true,
          "details": { "limit": 100, "used": 100, "window": { "value": 1, "unit": "minute" },
            "retry_after": { "value": 23, "unit": "second" }, "scope": "function", "function": "orders.create" } }],
        "extensions": [ { "urn": "urn:vnd:ext:rate-limit", "data": { "limit": 100, "used": 100, "remaining": 0,
          "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 23, "unit": "second" }, "scope": "function" } } ] }
      """;

  static final String MULTIPLE_SCOPES_BODY = """
      { "protocol": { "name": "vend", "version": "0.1.0" }, "id": "req_multi", "result": { "success": true },
        "extensions": [ { "urn": "urn:vnd:ext:rate-limit", "data": { "scopes": {
          "global": { "limit": 10000, "used": 4523, "remaining": 5477, "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 32, "unit": "second" } },
          "service": { "limit": 1000, "used": 153, "remaining": 847, "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 32, "unit": "second" } },
          "function": { "limit": 100, "used": 45, "remaining": 55, "window": { "value": 1, "unit": "minute" }, "resets_in": { "value": 32, "unit": "second" } } } } } ] }
      """;

  static final Map<String, String> RATE_LIMITED_HEADERS = Map.of("Retry-After", "23", "RateLimit-Limit", "100",
      "RateLimit-Remaining", "0", "RateLimit-Reset", "23");

  final ManualTicker ticker = ManualTicker.atFixedInstant();
  final List<Duration> waits = Collections.synchronizedList(new ArrayList<>());
  final Scheduler scheduler = delay -> {
    if (!delay.isZero() && !delay.isNegative()) {
      waits.add(delay);
    }
    return Scheduler.advancing(ticker).delay(delay);
  };
  final HttpClient http = HttpClient.newHttpClient();
  VendServer server;

  @AfterEach
  void close() {
    if (server != null) {
      server.close();
    }
  }

  HeadroomClient client(VendClientOptions options, Pacing pacing) {
    return HeadroomClient.builder(http).ticker(ticker).scheduler(scheduler).pacing(pacing).vend(options).build();
  }

  static String envelope(String id, String function, boolean declare) {
    return "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"" + id + "\",\"call\":{\"function\":\""
        + function + "\",\"arguments\":{}}" + (declare ? ",\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\",\"options\":{}}]" : "")
        + "}";
  }

  HttpRequest call(String function) {
    return call(function, true);
  }

  HttpRequest call(String function, boolean declare) {
    return HttpRequest.newBuilder(server.uri("/vend")).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(envelope("req_1", function, declare))).build();
  }

  long seconds(long nanos) {
    return Duration.ofNanos(nanos).toSeconds();
  }

  // seed 003, "Backoff Strategy": wait_time = min(retry_after * 2^attempt, max_wait)
  @Test
  void retriesWaitRetryAfterTimesTwoToTheAttemptCappedAtMaxWaitThenGiveUp() throws Exception {
    server = new VendServer(ticker, c -> new VendServer.Reply(429, RATE_LIMITED_HEADERS, RATE_LIMITED_BODY));
    HeadroomClient client = client(VendClientOptions.builder().retry(true).maxAttempts(4).maxWait(Duration.ofSeconds(60))
        .build(), Pacing.BURST);
    long start = ticker.read();

    assertThatThrownBy(() -> client.send(call("orders.create"), BodyHandlers.ofString()))
        .isInstanceOfSatisfying(VendRateLimitedException.class, e -> {
          assertThat(e.attempts()).isEqualTo(4);
          assertThat(e.status()).isEqualTo(429);
          assertThat(e.vendError()).hasValueSatisfying(v -> {
            assertThat(v.code()).isEqualTo("RATE_LIMITED");
            assertThat(v.retryable()).isTrue();
            assertThat(v.details().orElseThrow().path("retry_after").path("value").asLong()).isEqualTo(23);
            assertThat(v.details().orElseThrow().path("scope").asText()).isEqualTo("function");
          });
          assertThat(e.extensionData()).singleElement().satisfies(b -> {
            assertThat(b.policy()).isEqualTo("vend:function:orders.create");
            assertThat(b.remaining()).isZero();
            assertThat(b.reset()).isEqualTo(Duration.ofSeconds(23));
          });
          assertThat(e).hasMessageContaining("maxAttempts 4 reached").hasMessageContaining("RATE_LIMITED");
        });

    // 23 * 2^0, 23 * 2^1, min(23 * 2^2, 60): bounded, and nothing else waited.
    assertThat(waits).containsExactly(Duration.ofSeconds(23), Duration.ofSeconds(46), Duration.ofSeconds(60));
    assertThat(server.log()).extracting(l -> seconds(l.call().atNanos() - start)).containsExactly(0L, 23L, 69L, 129L);
  }

  // seed 003, "Handling RATE_LIMITED": "Clients MUST NOT retry immediately without waiting"
  @Test
  void aZeroRetryAfterStillWaitsOneSecondDoubling() throws Exception {
    String zero = RATE_LIMITED_BODY.replace("\"value\": 23", "\"value\": 0");
    server = new VendServer(ticker, c -> new VendServer.Reply(429, Map.of(), zero));
    HeadroomClient client = client(VendClientOptions.builder().retry(true).maxAttempts(3).build(), Pacing.BURST);

    assertThatThrownBy(() -> client.send(call("orders.create"), BodyHandlers.ofString()))
        .isInstanceOf(VendRateLimitedException.class);
    assertThat(waits).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
    List<VendServer.Logged> log = server.log();
    for (int i = 1; i < log.size(); i++) {
      assertThat(log.get(i).call().atNanos()).isGreaterThan(log.get(i - 1).call().atNanos());
    }
  }

  // A vend call is a POST: not idempotent, so not retried unless the caller opted in.
  @Test
  void withoutOptInARefusedVendCallFailsAfterOneAttempt() throws Exception {
    server = new VendServer(ticker, c -> new VendServer.Reply(429, RATE_LIMITED_HEADERS, RATE_LIMITED_BODY));
    HeadroomClient client = client(VendClientOptions.defaults(), Pacing.BURST);

    assertThatThrownBy(() -> client.send(call("orders.create"), BodyHandlers.ofString()))
        .isInstanceOfSatisfying(VendRateLimitedException.class, e -> {
          assertThat(e.attempts()).isEqualTo(1);
          assertThat(e.vendError()).isPresent();
          assertThat(e).hasMessageContaining("retry is off");
        });
    assertThat(server.log()).hasSize(1);
    assertThat(waits).isEmpty();
  }

  // The error envelope alone marks the refusal, whatever the status.
  @Test
  void aRateLimitedErrorInA200EnvelopeIsARefusalToo() throws Exception {
    AtomicLong n = new AtomicLong();
    server = new VendServer(ticker, c -> n.getAndIncrement() == 0
        ? new VendServer.Reply(200, Map.of(), RATE_LIMITED_BODY)
        : new VendServer.Reply(200, Map.of(), MULTIPLE_SCOPES_BODY));
    HeadroomClient client = client(VendClientOptions.builder().retry(true).build(), Pacing.BURST);

    HttpResponse<String> r = client.send(call("orders.create"), BodyHandlers.ofString());
    assertThat(r.body()).contains("req_multi");
    assertThat(waits).containsExactly(Duration.ofSeconds(23));
    assertThat(server.log()).hasSize(2);
  }

  // seed 003, "Multiple Scopes": one budget per scope, function-scoped by call.function.
  @Test
  void multipleScopesBecomeOneBudgetEach() throws Exception {
    server = new VendServer(ticker, c -> new VendServer.Reply(200, Map.of(), MULTIPLE_SCOPES_BODY));
    HeadroomClient client = client(VendClientOptions.defaults(), Pacing.EVEN);

    client.send(call("orders.create"), BodyHandlers.ofString());

    assertThat(client.budgets().snapshot(call("orders.create")))
        .extracting(Budget::policy, Budget::remaining, Budget::reset, Budget::source)
        .containsExactlyInAnyOrder(
            Tuple.tuple("vend:global", 5477L, Duration.ofSeconds(32), "vend"),
            Tuple.tuple("vend:service", 847L, Duration.ofSeconds(32), "vend"),
            Tuple.tuple("vend:function:orders.create", 55L, Duration.ofSeconds(32), "vend"));
    HttpRequest nonVend = HttpRequest.newBuilder(server.uri("/status")).GET().build();
    assertThat(client.budgets().snapshot(nonVend)).isEmpty();
  }

  /**
   * A fixed-window vend service: {@code limit} calls per function per {@code window}, extension data
   * on every response to a call that declared the extension, a warning under 10%, RATE_LIMITED with
   * retry_after beyond the limit, and RateLimit headers consistent with the data.
   */
  static VendServer.Script fixedWindow(ManualTicker ticker, long limit, Duration window) {
    return fixedWindow(ticker, limit, window, true);
  }

  /** {@link #fixedWindow(ManualTicker, long, Duration)}, with RateLimit headers or with the extension data alone. */
  static VendServer.Script fixedWindow(ManualTicker ticker, long limit, Duration window, boolean rateLimitHeaders) {
    Map<String, long[]> counts = new HashMap<>();
    return c -> {
      if (!c.method().equals("POST")) {
        return new VendServer.Reply(200, Map.of(), "{\"status\":\"ok\"}");
      }
      long now = ticker.read();
      long windowNanos = window.toNanos();
      long start = now - Math.floorMod(now, windowNanos);
      long resetsIn = Duration.ofNanos(start + windowNanos - now).toSeconds()
          + (Duration.ofNanos(start + windowNanos - now).toNanosPart() > 0 ? 1 : 0);
      long[] state;
      synchronized (counts) {
        state = counts.computeIfAbsent(c.function(), k -> new long[] {start, 0});
        if (state[0] != start) {
          state[0] = start;
          state[1] = 0;
        }
      }
      boolean allowed = state[1] < limit;
      if (allowed) {
        state[1]++;
      }
      long remaining = limit - state[1];
      String data = "{\"limit\":" + limit + ",\"used\":" + state[1] + ",\"remaining\":" + remaining
          + ",\"window\":{\"value\":" + window.toSeconds() + ",\"unit\":\"second\"},\"resets_in\":{\"value\":" + resetsIn
          + ",\"unit\":\"second\"},\"scope\":\"function\""
          + (allowed && remaining < 0.1 * limit ? ",\"warning\":\"Rate limit nearly exhausted\"" : "") + "}";
      String ext = c.declaresRateLimit() ? ",\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\",\"data\":" + data + "}]" : "";
      Map<String, String> headers = new HashMap<>();
      if (rateLimitHeaders) {
        headers.putAll(Map.of("RateLimit-Limit", String.valueOf(limit),
            "RateLimit-Remaining", String.valueOf(remaining), "RateLimit-Reset", String.valueOf(resetsIn)));
      }
      if (allowed) {
        return new VendServer.Reply(200, headers, "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"req_1\","
            + "\"result\":{\"success\":true}" + ext + "}");
      }
      headers.put("Retry-After", String.valueOf(resetsIn));
      return new VendServer.Reply(429, headers, "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"req_1\","
          + "\"result\":null,\"errors\":[{\"code\":\"RATE_LIMITED\",\"message\":\"Rate limit exceeded for " + c.function()
          + "\",\"retryable\":true,\"details\":{\"retry_after\":{\"value\":" + resetsIn + ",\"unit\":\"second\"},"
          + "\"scope\":\"function\",\"function\":\"" + c.function() + "\"}}]" + ext + "}");
    };
  }

  // seed 003, "Proactive Throttling": after the first response with data, no refusal at all.
  @ParameterizedTest(name = "RateLimit headers too: {0}")
  @ValueSource(booleans = {false, true})
  void pacingByExtensionDataGivesZeroRefusals(boolean rateLimitHeaders) throws Exception {
    server = new VendServer(ticker, fixedWindow(ticker, 5, Duration.ofSeconds(10), rateLimitHeaders));
    for (Pacing pacing : Pacing.values()) {
      HeadroomClient client = client(VendClientOptions.defaults(), pacing);
      for (int i = 0; i < 23; i++) {
        assertThat(client.send(call("orders.create"), BodyHandlers.ofString()).statusCode()).isEqualTo(200);
      }
    }
    assertThat(server.count(429)).isZero();
    assertThat(server.count(200)).isEqualTo(23L * Pacing.values().length);
  }

  // vend-notes.md, "Extensions": data comes only for a declared extension; the client declares it on request.
  @Test
  void declareExtensionAddsTheDeclarationAndTheDataThenPaces() throws Exception {
    server = new VendServer(ticker, fixedWindow(ticker, 3, Duration.ofSeconds(10)));
    HeadroomClient client = client(VendClientOptions.builder().declareExtension(true).build(), Pacing.BURST);
    for (int i = 0; i < 10; i++) {
      client.send(call("orders.create", false), BodyHandlers.ofString());
    }
    assertThat(server.log()).allSatisfy(l -> assertThat(l.call().declaresRateLimit()).isTrue());
    assertThat(server.log()).allSatisfy(l -> assertThat(l.call().function()).isEqualTo("orders.create"));
    assertThat(server.count(429)).isZero();
  }

  // Budgets of the function scope pace that function only; non-vend calls are not paced by vend data.
  @Test
  void functionBudgetsPaceTheirFunctionOnlyAndNonVendCallsAreUnaffected() throws Exception {
    server = new VendServer(ticker, fixedWindow(ticker, 1, Duration.ofSeconds(60)));
    HeadroomClient client = client(VendClientOptions.defaults(), Pacing.BURST);
    long start = ticker.read();
    client.send(call("orders.create"), BodyHandlers.ofString());
    client.send(call("orders.list"), BodyHandlers.ofString());
    HttpResponse<String> status = client.send(HttpRequest.newBuilder(server.uri("/status")).GET().build(),
        BodyHandlers.ofString());
    assertThat(status.statusCode()).isEqualTo(200);
    assertThat(waits).isEmpty();
    assertThat(ticker.read()).isEqualTo(start);

    client.send(call("orders.create"), BodyHandlers.ofString());
    assertThat(waits).containsExactly(Duration.ofSeconds(60));
    assertThat(server.count(429)).isZero();
  }

  // A POST to a path that is not a vend endpoint keeps the client's ordinary rules: no vend retry.
  @Test
  void aNonVendPostIsNotRetriedByTheVendStep() throws Exception {
    server = new VendServer(ticker, c -> new VendServer.Reply(429, RATE_LIMITED_HEADERS, RATE_LIMITED_BODY));
    HeadroomClient client = client(VendClientOptions.builder().retry(true).build(), Pacing.BURST);
    HttpRequest other = HttpRequest.newBuilder(server.uri("/orders")).POST(HttpRequest.BodyPublishers.ofString("{}")).build();
    assertThatThrownBy(() -> client.send(other, BodyHandlers.ofString()))
        .isInstanceOf(RateLimitedException.class).isNotInstanceOf(VendRateLimitedException.class);
    assertThat(server.log()).hasSize(1);
  }

  @Test
  void optionsRefuseBadValuesNamingTheField() {
    assertThatThrownBy(() -> VendClientOptions.builder().maxWait(Duration.ZERO))
        .hasMessageContaining("maxWait").hasMessageContaining("PT0S");
    assertThatThrownBy(() -> VendClientOptions.builder().maxAttempts(0)).hasMessageContaining("maxAttempts: expected 1 to 100, got 0");
    assertThatThrownBy(() -> VendClientOptions.builder().paths("vend")).hasMessageContaining("paths").hasMessageContaining("\"vend\"");
  }

  @Test
  void asyncSendFailsWithTheVendException() throws Exception {
    server = new VendServer(ticker, c -> new VendServer.Reply(429, RATE_LIMITED_HEADERS, RATE_LIMITED_BODY));
    HeadroomClient client = client(VendClientOptions.defaults(), Pacing.BURST);
    assertThatThrownBy(() -> client.sendAsync(call("orders.create"), BodyHandlers.ofString()).get())
        .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(VendRateLimitedException.class);
  }
}
