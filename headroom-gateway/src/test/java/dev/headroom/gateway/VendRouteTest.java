package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.headroom.ManualTicker;
import java.io.ByteArrayInputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code type: vend} routes (seed 003, the vend rate-limit extension; reference/vend-notes.md) in
 * front of a real vend service on loopback (the JDK's HTTP server): every example shape of the
 * seed through the gateway, RATE_LIMITED with Retry-After equal to details.retry_after.value,
 * malformed envelopes, no extension data unless declared, vend.capabilities merged or answered.
 */
class VendRouteTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String URN = "urn:vnd:ext:rate-limit";

  HttpServer vendService;
  final List<String> seenBodies = new ArrayList<>();
  Gateway gateway;
  final HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    vendService = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    vendService.setExecutor(Executors.newFixedThreadPool(2));
    vendService.createContext("/", ex -> {
      byte[] in = ex.getRequestBody().readAllBytes();
      synchronized (seenBodies) {
        seenBodies.add(new String(in, StandardCharsets.UTF_8));
      }
      JsonNode call = JSON.readTree(in);
      String function = call.at("/call/function").asText();
      ObjectNode out = JSON.createObjectNode();
      out.putObject("protocol").put("name", "vend").put("version", "0.1.0");
      out.put("id", call.path("id").asText());
      if (function.equals("vend.capabilities")) {
        ObjectNode result = out.putObject("result");
        result.put("service", "orders-api");
        result.putArray("extensions").addObject().put("urn", "urn:vnd:ext:other");
        result.putArray("rate_limits");
      } else if (function.equals("reports.big")) {
        out.putObject("result").put("blob", "x".repeat(4000));
      } else {
        out.putObject("result").put("order_id", 456).put("status", "created");
      }
      byte[] b = JSON.writeValueAsBytes(out);
      ex.getResponseHeaders().set("Content-Type", "application/json");
      ex.sendResponseHeaders(200, function.equals("orders.stream") ? 0 : b.length); // 0: chunked
      ex.getResponseBody().write(b);
      ex.close();
    });
    vendService.start();
    String yaml = """
        service: {name: Vend test}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        limits: {maxBodyBytes: 4096}
        upstreams:
          vend: {url: "http://127.0.0.1:%d"}
        policies:
          svc: {quota: 1000, window: 1m, algorithm: fixed-window, why: Limits keep the service available for everyone.}
          small: {quota: 10, window: 1m, algorithm: fixed-window, why: Limits keep the service available for everyone.}
          g: {quota: 10000, window: 1m, algorithm: fixed-window, why: Limits keep the service available for everyone.}
          s: {quota: 1000, window: 1m, algorithm: fixed-window, why: Limits keep the service available for everyone.}
          f: {quota: 100, window: 1m, algorithm: fixed-window, why: Limits keep the service available for everyone.}
          u: {quota: 2, window: 1m, algorithm: fixed-window, why: Limits keep the service available for everyone.}
        routes:
          - {name: one, type: vend, path: /one, upstream: vend, vend: {limits: {service: svc}, maxResponseBytes: 1024}}
          - {name: small, type: vend, path: /small, upstream: vend, vend: {limits: {function: small}, capabilities: local}}
          - name: multi
            type: vend
            path: /multi
            upstream: vend
            vend:
              service: orders-api
              documentation: https://docs.example.com/rate-limits
              user: header:X-User
              limits: {global: g, service: s, functions: {orders.create: {function: f}}}
          - {name: users, type: vend, path: /users, upstream: vend, vend: {limits: {user: u}, user: "header:X-User"}}
          - {name: tight, type: vend, path: /tight, upstream: vend, vend: {limits: {service: svc}, maxRequestBytes: 256}}
        """.formatted(vendService.getAddress().getPort());
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "vend.yaml")).ticker(ManualTicker.atFixedInstant()).start();
  }

  @AfterEach
  void stop() {
    gateway.close();
    vendService.stop(0);
  }

  static String call(String id, String function, boolean extension, String caller) {
    return "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"" + id + "\",\"call\":{\"function\":\""
        + function + "\",\"version\":\"1\",\"arguments\":{\"customer_id\":42}}"
        + (caller == null ? "" : ",\"context\":{\"caller\":\"" + caller + "\"}")
        + (extension ? ",\"extensions\":[{\"urn\":\"" + URN + "\",\"options\":{}}]" : "") + "}";
  }

  HttpResponse<String> post(String path, String body, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + path))
        .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json");
    if (headers.length > 0) {
      b.headers(headers);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> postStreamed(String path, byte[] body) throws Exception {
    // a publisher of unknown length: the client sends the body chunked, without Content-Length
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + path))
        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)))
        .header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
  }

  /** A valid call of exactly {@code size} bytes (the arguments padded). */
  static String callOfSize(String id, int size) {
    String shape = call(id, "orders.create", true, "billing").replace("\"customer_id\":42", "\"pad\":\"%s\"");
    return shape.formatted("x".repeat(size - shape.length() + 2));
  }

  static JsonNode data(HttpResponse<String> r) throws Exception {
    for (JsonNode e : JSON.readTree(r.body()).path("extensions")) {
      if (URN.equals(e.path("urn").asText())) {
        return e.get("data");
      }
    }
    return null;
  }

  static List<String> names(JsonNode n) {
    List<String> out = new ArrayList<>();
    for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
      out.add(it.next());
    }
    return out;
  }

  @Test
  void normalResponseGetsTheSingleScopeData_seed003_normalResponse() throws Exception {
    HttpResponse<String> r = post("/one", call("req_123", "orders.create", true, "billing"));
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode body = JSON.readTree(r.body());
    assertThat(body.at("/result/order_id").asInt()).isEqualTo(456);
    assertThat(body.get("id").asText()).isEqualTo("req_123");
    JsonNode d = data(r);
    assertThat(names(d)).containsExactly("limit", "used", "remaining", "window", "resets_in", "scope");
    assertThat(d.get("limit").asInt()).isEqualTo(1000);
    assertThat(d.get("used").asInt()).isEqualTo(1);
    assertThat(d.get("remaining").asInt()).isEqualTo(999);
    assertThat(d.get("window").toString()).isEqualTo("{\"value\":1,\"unit\":\"minute\"}");
    assertThat(d.get("scope").asText()).isEqualTo("service");
    assertThat(r.headers().firstValue("RateLimit")).hasValue("\"svc\";r=999;t=60");
    // the call itself reached the service unchanged
    assertThat(seenBodies).containsExactly(call("req_123", "orders.create", true, "billing"));
  }

  @Test
  void withoutTheExtensionTheResponseIsUntouched_seed003_options() throws Exception {
    HttpResponse<String> r = post("/one", call("req_1", "orders.create", false, "billing"));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(r.body()).has("extensions")).isFalse();
    assertThat(r.body()).isEqualTo("{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"req_1\","
        + "\"result\":{\"order_id\":456,\"status\":\"created\"}}");
    assertThat(r.headers().firstValue("RateLimit")).isPresent();
  }

  @Test
  void approachingTheLimitWarnsThenRateLimitedIs429WithMatchingRetryAfter_seed003() throws Exception {
    HttpResponse<String> r = null;
    for (int i = 1; i <= 10; i++) {
      r = post("/small", call("req_" + i, "orders.create", true, null));
      assertThat(r.statusCode()).isEqualTo(200);
    }
    assertThat(data(r).get("warning").asText()).isEqualTo("Rate limit nearly exhausted");
    assertThat(data(r).get("remaining").asInt()).isZero();
    HttpResponse<String> refused = post("/small", call("req_789", "orders.create", true, null));
    assertThat(refused.statusCode()).isEqualTo(429);
    JsonNode body = JSON.readTree(refused.body());
    assertThat(body.get("id").asText()).isEqualTo("req_789");
    assertThat(body.get("result").isNull()).isTrue();
    JsonNode error = body.at("/errors/0");
    assertThat(error.get("code").asText()).isEqualTo("RATE_LIMITED");
    assertThat(error.get("retryable").asBoolean()).isTrue();
    assertThat(names(error.get("details"))).containsExactly("limit", "used", "window", "retry_after", "scope", "function");
    assertThat(error.at("/details/retry_after/unit").asText()).isEqualTo("second");
    assertThat(refused.headers().firstValue("Retry-After"))
        .hasValue(Long.toString(error.at("/details/retry_after/value").asLong()));
    assertThat(refused.headers().firstValue("RateLimit")).isPresent();
    assertThat(data(refused).get("remaining").asInt()).isZero(); // extension data still present
    assertThat(seenBodies).hasSize(10); // the refused call never reached the service
  }

  @Test
  void multipleScopesAreReportedTogether_seed003_multipleScopes() throws Exception {
    HttpResponse<String> r = post("/multi", call("req_multi", "orders.create", true, "billing"), "X-User", "alice");
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode scopes = data(r).get("scopes");
    assertThat(names(scopes)).containsExactlyInAnyOrder("global", "service", "function");
    assertThat(scopes.at("/function/limit").asInt()).isEqualTo(100);
    assertThat(names(scopes.get("global"))).containsExactly("limit", "used", "remaining", "window", "resets_in");
  }

  @Test
  void userScopeCountsTheConfiguredUserHeader() throws Exception {
    assertThat(post("/users", call("a1", "orders.create", false, null), "X-User", "alice").statusCode()).isEqualTo(200);
    assertThat(post("/users", call("a2", "orders.create", false, null), "X-User", "alice").statusCode()).isEqualTo(200);
    assertThat(post("/users", call("a3", "orders.create", false, null), "X-User", "alice").statusCode()).isEqualTo(429);
    assertThat(post("/users", call("b1", "orders.create", false, null), "X-User", "bob").statusCode()).isEqualTo(200);
  }

  @Test
  void malformedEnvelopesAre400WithTheVendErrorEnvelope_vendNotes_httpTransport() throws Exception {
    HttpResponse<String> notJson = post("/one", "{not json");
    assertThat(notJson.statusCode()).isEqualTo(400);
    JsonNode b = JSON.readTree(notJson.body());
    assertThat(b.at("/errors/0/code").asText()).isEqualTo("PARSE_ERROR");
    assertThat(b.get("id").isNull()).isTrue();
    HttpResponse<String> noCall = post("/one", "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"x1\"}");
    assertThat(noCall.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(noCall.body()).at("/errors/0/code").asText()).isEqualTo("INVALID_REQUEST");
    assertThat(JSON.readTree(noCall.body()).get("id").asText()).isEqualTo("x1");
    HttpResponse<String> badCaller = post("/one", call("x2", "orders.create", false, null), "X-Vend-Caller", "");
    assertThat(badCaller.statusCode()).isEqualTo(400);
    assertThat(seenBodies).isEmpty();
  }

  @Test
  void capabilitiesAreMergedIntoTheServicesOrAnsweredLocally_seed003_discovery() throws Exception {
    HttpResponse<String> merged = post("/multi", call("req_caps", "vend.capabilities", false, null));
    assertThat(merged.statusCode()).isEqualTo(200);
    JsonNode result = JSON.readTree(merged.body()).get("result");
    assertThat(result.get("service").asText()).isEqualTo("orders-api");
    assertThat(result.get("extensions").findValuesAsText("urn")).containsExactly("urn:vnd:ext:other", URN);
    assertThat(result.get("rate_limits").findValuesAsText("scope")).containsExactly("global", "service", "function");
    assertThat(result.at("/rate_limits/2/function").asText()).isEqualTo("orders.create");
    int before = seenBodies.size();
    HttpResponse<String> local = post("/small", call("req_caps2", "vend.capabilities", false, null));
    assertThat(local.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(local.body()).at("/result/extensions/0/urn").asText()).isEqualTo(URN);
    assertThat(seenBodies).hasSize(before); // answered by the gateway
  }

  @Test
  void responsesOverTheBoundPassThroughUnchanged() throws Exception {
    HttpResponse<String> big = post("/one", call("req_big", "reports.big", true, "billing"));
    assertThat(big.statusCode()).isEqualTo(200);
    assertThat(data(big)).isNull();
    assertThat(JSON.readTree(big.body()).at("/result/blob").asText()).hasSize(4000);
    assertThat(big.headers().firstValue("RateLimit")).isPresent();
    HttpResponse<String> chunked = post("/one", call("req_stream", "orders.stream", true, "billing"));
    assertThat(chunked.statusCode()).isEqualTo(200);
    assertThat(data(chunked).get("scope").asText()).isEqualTo("service"); // chunked but small: decorated
  }

  /**
   * A body over the bound (limits.maxBodyBytes 4096 on /one, the route's maxRequestBytes 256 on
   * /tight), declared by Content-Length or streamed chunked, is answered with the vend error
   * envelope a vend client reads, not the gateway's application/problem+json 413. Seed 003 names no
   * error for it; the vend HTTP transport (reference/vend-notes.md) maps no code to 413, so it is
   * the reader's own answer to an oversized envelope: INVALID_REQUEST, 400, not retryable, id null
   * (the envelope was not read).
   */
  @ParameterizedTest(name = "{0} {1} bytes, streamed: {2}")
  @CsvSource({"/one, 5000, false, 4096", "/one, 100000, true, 4096", "/tight, 300, false, 256", "/tight, 300, true, 256"})
  void anOversizedCallIsTheVendErrorEnvelope_vendNotes_httpTransport(String path, int size, boolean streamed, int bound)
      throws Exception {
    byte[] body = callOfSize("req_big", size).getBytes(StandardCharsets.UTF_8);
    assertThat(body).hasSize(size);
    HttpResponse<String> r = streamed ? postStreamed(path, body) : post(path, new String(body, StandardCharsets.UTF_8));

    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
    JsonNode envelope = JSON.readTree(r.body());
    assertThat(names(envelope)).containsExactly("protocol", "id", "result", "errors");
    assertThat(envelope.get("protocol").toString()).isEqualTo("{\"name\":\"vend\",\"version\":\"0.1.0\"}");
    assertThat(envelope.get("id").isNull()).isTrue();
    assertThat(envelope.get("result").isNull()).isTrue();
    assertThat(envelope.get("errors")).hasSize(1);
    JsonNode error = envelope.at("/errors/0");
    assertThat(names(error)).containsExactly("code", "message", "retryable");
    assertThat(error.get("code").asText()).isEqualTo("INVALID_REQUEST");
    assertThat(error.get("retryable").asBoolean()).isFalse();
    assertThat(error.get("message").asText()).isEqualTo("request: expected a body of at most " + bound + " bytes, got "
        + (streamed ? "more" : size + " bytes"));
    assertThat(seenBodies).isEmpty();
    assertThat(r.headers().firstValue("RateLimit")).isEmpty(); // refused before any decision
  }

  @Test
  void aStreamedCallWithinTheBoundIsCollectedAndForwarded() throws Exception {
    String body = callOfSize("req_fits", 256);
    HttpResponse<String> r = postStreamed("/tight", body.getBytes(StandardCharsets.UTF_8));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(data(r).get("scope").asText()).isEqualTo("service");
    assertThat(seenBodies).containsExactly(body);
  }
}
