package dev.headroom.vend;

import static dev.headroom.vend.Fixtures.perMinute;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.vend.format.Scope;
import dev.headroom.vend.format.VendRequest;
import dev.headroom.vend.format.VendRequestException;
import dev.headroom.vend.format.VendRequestReader;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Seed 003 over real sockets: a tiny vend service on {@code com.sun.net.httpserver.HttpServer}
 * (loopback, port 0), fronted by a minimal proxy built from this library in a second HttpServer,
 * driven by {@code java.net.http.HttpClient}. Time is the proxy store's {@code ManualTicker}.
 */
class VendProxyEndToEndTest {

  private final Fixtures f = new Fixtures();
  private final AtomicInteger upstreamCalls = new AtomicInteger();
  private HttpServer upstream;
  private HttpServer proxy;
  private ExecutorService threads;
  private HttpClient client;
  private VendRateLimiter vend;
  private final VendRequestReader reader = VendRequestReader.builder().maxBytes(8192).build();
  // The seed's "Retry-After Header" example uses the RateLimit-Limit / -Remaining / -Reset fields.
  // (An EnumSet: RateLimitHeaders.Builder.dialects(HeaderDialect...) throws NullPointerException
  // from List.of(..).contains(null) on the http-headers branch as merged.)
  // Jitter (0 to 3 s, seeded) proves the body's retry_after follows the Retry-After actually sent.
  private final RateLimitHeaders headers = RateLimitHeaders.builder()
      .dialects(EnumSet.of(HeaderDialect.DRAFT_06)).jitter(Duration.ofSeconds(3), new SplittableRandom(7)).build();

  @BeforeEach
  void start() throws IOException {
    threads = Executors.newFixedThreadPool(4);
    InetAddress loopback = InetAddress.getLoopbackAddress();
    upstream = HttpServer.create(new InetSocketAddress(loopback, 0), 0);
    upstream.createContext("/vend", this::serveUpstream);
    upstream.setExecutor(threads);
    upstream.start();

    vend = f.vend(VendRateLimits.builder()
        .limit(Scope.SERVICE, perMinute("vend-service", 1000))
        .limit(Scope.FUNCTION, "orders.create", perMinute("vend-orders-create", 3))
        .documentation(URI.create("https://docs.example.com/rate-limits")).build());
    client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).executor(threads).build();
    proxy = HttpServer.create(new InetSocketAddress(loopback, 0), 0);
    proxy.createContext("/vend", this::serveProxy);
    proxy.setExecutor(threads);
    proxy.start();
  }

  @AfterEach
  void stop() {
    proxy.stop(0);
    upstream.stop(0);
    threads.shutdownNow();
  }

  /** The vend service: echoes the id, answers orders.* and vend.capabilities. */
  private void serveUpstream(HttpExchange ex) throws IOException {
    upstreamCalls.incrementAndGet();
    JsonNode req = Fixtures.MAPPER.readTree(ex.getRequestBody());
    ObjectNode res = Fixtures.MAPPER.createObjectNode();
    res.putObject("protocol").put("name", "vend").put("version", "0.1.0");
    res.set("id", req.get("id"));
    if ("vend.capabilities".equals(req.at("/call/function").asText())) {
      res.putObject("result").put("service", "orders-api").putArray("functions").add("orders.create");
    } else {
      res.putObject("result").put("order_id", 456).put("status", "created")
          .put("caller_header", ex.getRequestHeaders().getFirst("X-Vend-Caller"));
    }
    send(ex, 200, Fixtures.MAPPER.writeValueAsBytes(res));
  }

  /** The proxy: read (bounded), decide, refuse or forward and decorate. */
  private void serveProxy(HttpExchange ex) throws IOException {
    byte[] raw = ex.getRequestBody().readNBytes(reader.maxBytes() + 1); // parse refuses the extra byte
    VendRequest call;
    VendDecision d;
    try {
      call = reader.parse(raw);
      d = vend.decide(call, CallIdentity.of(ex.getRequestHeaders().getFirst(VendRateLimiter.CALLER_HEADER),
          ex.getRequestHeaders().getFirst("X-User")));
    } catch (VendRequestException e) {
      send(ex, e.httpStatus(), e.responseBody());
      return;
    }
    if (!d.allowed()) {
      byte[] body = d.refuse(headers, ex.getResponseHeaders()::add);
      send(ex, d.httpStatus(), body);
      return;
    }
    try {
      HttpRequest.Builder forward = HttpRequest.newBuilder(URI.create("http://" + hostPort(upstream) + "/vend"))
          .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofByteArray(raw));
      String callerHeader = ex.getRequestHeaders().getFirst(VendRateLimiter.CALLER_HEADER);
      if (callerHeader != null) {
        forward.header(VendRateLimiter.CALLER_HEADER, callerHeader);
      }
      HttpResponse<byte[]> up = client.send(forward.build(), HttpResponse.BodyHandlers.ofByteArray());
      byte[] body = call.isCapabilities() ? d.decorate(vend.mergeCapabilities(up.body())) : d.decorate(up.body());
      d.writeHeaders(headers, up.statusCode(), ex.getResponseHeaders()::add);
      send(ex, up.statusCode(), body);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      send(ex, 502, new byte[0]);
    } finally {
      vend.release(d);
    }
  }

  private static void send(HttpExchange ex, int status, byte[] body) throws IOException {
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }

  private static String hostPort(HttpServer s) {
    return s.getAddress().getAddress().getHostAddress() + ":" + s.getAddress().getPort();
  }

  private HttpResponse<String> post(String body, String callerHeader) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + hostPort(proxy) + "/vend"))
        .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (callerHeader != null) {
      b.header(VendRateLimiter.CALLER_HEADER, callerHeader);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  private static String call(String id, String function, boolean withExtension) {
    return "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"" + id + "\",\"call\":{\"function\":\""
        + function + "\",\"version\":\"1\",\"arguments\":{\"customer_id\":42}}"
        + (withExtension ? ",\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\",\"options\":{}}]" : "") + "}";
  }

  @Test
  void allowedCallsCarryExtensionData_theFourthIsRefusedWith429_andRetryAfterMatchesTheBody() throws Exception {
    for (int i = 1; i <= 3; i++) {
      HttpResponse<String> r = post(call("req_" + i, "orders.create", true), "checkout");
      assertThat(r.statusCode()).isEqualTo(200);
      JsonNode body = Fixtures.tree(r.body());
      assertThat(body.get("id").asText()).isEqualTo("req_" + i);
      assertThat(body.at("/result/order_id").asInt()).isEqualTo(456);
      assertThat(body.at("/result/caller_header").asText()).isEqualTo("checkout");
      assertThat(body.at("/extensions/0/urn").asText()).isEqualTo("urn:vnd:ext:rate-limit");
      assertThat(body.at("/extensions/0/data/scopes/function/used").asInt()).isEqualTo(i);
      assertThat(body.at("/extensions/0/data/scopes/service/used").asInt()).isEqualTo(i);
      assertThat(r.headers().firstValue("RateLimit-Limit")).isPresent();
      assertThat(r.headers().firstValue("Retry-After")).isEmpty();
    }
    f.ticker.advance(Duration.ofSeconds(37));
    HttpResponse<String> refused = post(call("req_789", "orders.create", true), "checkout");
    assertThat(refused.statusCode()).isEqualTo(429);
    JsonNode body = Fixtures.tree(refused.body());
    assertThat(body.get("id").asText()).isEqualTo("req_789");
    assertThat(body.get("result").isNull()).isTrue();
    assertThat(body.at("/errors/0/code").asText()).isEqualTo("RATE_LIMITED");
    assertThat(body.at("/errors/0/message").asText()).isEqualTo("Rate limit exceeded for orders.create");
    assertThat(body.at("/errors/0/retryable").asBoolean()).isTrue();
    assertThat(body.at("/errors/0/details/scope").asText()).isEqualTo("function");
    long retryAfter = Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow());
    assertThat(retryAfter).isBetween(23L, 26L);
    assertThat(body.at("/errors/0/details/retry_after")).isEqualTo(
        Fixtures.tree("{\"value\":" + retryAfter + ",\"unit\":\"second\"}"));
    assertThat(refused.headers().firstValue("RateLimit-Remaining")).contains("0");
    assertThat(body.at("/extensions/0/data/scopes/function/remaining").asInt()).isZero();
    assertThat(upstreamCalls.get()).isEqualTo(3); // the refusal never reached the service

    f.ticker.advance(Duration.ofSeconds(23));
    assertThat(post(call("req_next", "orders.create", true), "checkout").statusCode()).isEqualTo(200);
  }

  @Test
  void aCallWithoutTheExtensionGetsTheUpstreamBodyUnchanged() throws Exception {
    HttpResponse<String> r = post(call("plain", "orders.list", false), null);
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode body = Fixtures.tree(r.body());
    assertThat(body.has("extensions")).isFalse();
    assertThat(body.at("/result/status").asText()).isEqualTo("created");
  }

  @Test
  void malformedEnvelopesAreAnswered400WithoutReachingTheService() throws Exception {
    HttpResponse<String> notJson = post("{\"id\":", null);
    assertThat(notJson.statusCode()).isEqualTo(400);
    assertThat(Fixtures.tree(notJson.body()).at("/errors/0/code").asText()).isEqualTo("PARSE_ERROR");
    HttpResponse<String> numericId = post(call("x", "orders.create", true).replace("\"id\":\"x\"", "\"id\":7"), null);
    assertThat(numericId.statusCode()).isEqualTo(400);
    assertThat(Fixtures.tree(numericId.body()).at("/errors/0/message").asText())
        .isEqualTo("id: expected a non-empty string, got number 7");
    HttpResponse<String> tooLarge = post(call("big", "orders.create", false).replace("42", "\"" + "x".repeat(9000) + "\""), null);
    assertThat(tooLarge.statusCode()).isEqualTo(400);
    assertThat(Fixtures.tree(tooLarge.body()).at("/errors/0/code").asText()).isEqualTo("INVALID_REQUEST");
    assertThat(upstreamCalls.get()).isZero();
  }

  @Test
  void capabilitiesFromTheServiceAreMergedWithTheEnforcedLimits() throws Exception {
    HttpResponse<String> r = post(call("req_caps", "vend.capabilities", false), null);
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode result = Fixtures.tree(r.body()).get("result");
    assertThat(result.get("service").asText()).isEqualTo("orders-api");
    assertThat(result.get("functions")).isEqualTo(Fixtures.tree("[\"orders.create\"]"));
    assertThat(result.get("extensions")).isEqualTo(Fixtures.tree(
        "[{\"urn\":\"urn:vnd:ext:rate-limit\",\"documentation\":\"https://docs.example.com/rate-limits\"}]"));
    assertThat(result.get("rate_limits")).isEqualTo(Fixtures.tree(
        "[{\"scope\":\"service\",\"limit\":1000,\"window\":{\"value\":1,\"unit\":\"minute\"}},"
            + "{\"scope\":\"function\",\"function\":\"orders.create\",\"limit\":3,\"window\":{\"value\":1,\"unit\":\"minute\"}}]"));
    assertThat(List.of(r.headers().firstValue("Content-Type").orElseThrow())).containsExactly("application/json");
  }
}
