package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.enforcement.discovery.LimitsDiscoveryDocument;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The gateway over real sockets: a real upstream, the gateway started from a YAML file, and
 * java.net.http as the client. Time-dependent behaviour runs on a {@link ManualTicker}.
 */
class GatewayEndToEndTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  TestUpstream upstream;
  ManualTicker ticker;
  Gateway gateway;
  HttpClient client;
  Path configFile;

  String yaml(String routeExtras) {
    return """
        service:
          name: Test service
          description: The end-to-end test's service.
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        limits: {maxHeaderBytes: 2048, maxBodyBytes: 100000}
        timeouts: {connect: 1s, response: 1s}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          minute:
            quota: 3
            window: 1m
            algorithm: fixed-window
            partition: client-ip
            why: Three requests a minute keep the test service available for everyone.
            guidance: {upgradeUrl: /pricing}
          abuse:
            quota: 2
            window: 1m
            algorithm: fixed-window
            partition: api-key
            why: Keys that keep retrying are blocked to protect the service.
            escalation: {threshold: 2, block: 10m}
          one-at-a-time:
            quota: 1
            window: 1m
            unit: concurrent-requests
            partition: global
            why: The upstream serves one streaming download at a time.
          bytes:
            quota: 1000
            window: 1m
            unit: content-bytes
            algorithm: fixed-window
            partition: global
            why: Transfer volume is bounded so that bandwidth is shared fairly.
        routes:
          - {name: echo, methods: [GET, POST], path: "/echo/{id}", upstream: up, policies: [minute], dialect: ietf}
          - {name: d07, method: GET, path: /d07, upstream: up, policies: [minute], dialect: draft-07}
          - {name: d06, method: GET, path: /d06, upstream: up, policies: [minute], dialect: draft-06}
          - {name: d03, method: GET, path: /d03, upstream: up, policies: [minute], dialect: draft-03}
          - {name: dx, method: GET, path: /dx, upstream: up, policies: [minute], dialect: x-ratelimit}
          - {name: abuse, method: GET, path: /abuse, upstream: up, policies: [abuse]}
          - {name: drip, method: GET, path: /drip, upstream: up, policies: [one-at-a-time]}
          - {name: bytes, method: GET, path: /bytes/**, upstream: up, policies: [bytes]}
          - {name: status, method: GET, path: "/status/{code}", upstream: up, normaliseErrors: true}
          - {name: raw, method: GET, path: "/raw/status/{code}", upstream: up}
          - {name: hang, method: GET, path: /hang, upstream: up}
          - {name: sink, method: POST, path: /sink, upstream: up}
          - {name: down, method: GET, path: /down, upstream: nowhere}
        """.formatted(upstream.port()) + routeExtras;
  }

  @BeforeEach
  void start() throws Exception {
    upstream = new TestUpstream();
    ticker = ManualTicker.atFixedInstant();
    configFile = dir.resolve("headroom.yaml");
    int dead;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      dead = s.getLocalPort(); // closed again: connecting to it is refused
    }
    Files.writeString(configFile, yaml("") .replace("upstreams:\n", "upstreams:\n  nowhere: {url: \"http://127.0.0.1:" + dead + "\"}\n"));
    gateway = Gateway.builder(GatewayConfig.load(configFile)).configFile(configFile).watchFile(true)
        .ticker(ticker).threads(2).start();
    client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  }

  @AfterEach
  void stop() {
    gateway.close();
    upstream.close();
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + gateway.address().getPort() + path);
  }

  URI admin(String path) {
    return URI.create("http://127.0.0.1:" + gateway.adminAddress().orElseThrow().getPort() + path);
  }

  HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10));
    if (headers.length > 0) {
      b.headers(headers);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static JsonNode json(HttpResponse<String> r) throws Exception {
    return JSON.readTree(r.body());
  }

  @Test
  void forwardsWithHopByHopRemovedAndForwardedAdded_rfc9110_7_6_1() throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri("/echo/1?x=y"))
        .header("X-Custom", "kept").header("TE", "trailers").header("Proxy-Authorization", "secret")
        .POST(HttpRequest.BodyPublishers.ofString("hello")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(json(r).get("receivedBytes").asInt()).isEqualTo(5);
    assertThat(r.headers().firstValue("x-upstream")).hasValue("test");
    assertThat(r.headers().firstValue("keep-alive")).isEmpty();
    TestUpstream.Seen seen = upstream.requests.poll(5, TimeUnit.SECONDS);
    assertThat(seen.path()).isEqualTo("/echo/1?x=y");
    assertThat(seen.headers()).containsKey("x-custom").doesNotContainKeys("te", "proxy-authorization");
    assertThat(seen.headers().get("x-forwarded-for")).containsExactly("127.0.0.1");
    assertThat(seen.headers().get("forwarded").get(0)).startsWith("for=127.0.0.1;proto=http");
  }

  @ParameterizedTest(name = "{0} writes {1}")
  @CsvSource({
      "/echo/1, RateLimit-Policy, RateLimit",
      "/d07, RateLimit-Policy, RateLimit",
      "/d06, RateLimit-Limit, RateLimit-Remaining",
      "/d03, RateLimit-Limit, RateLimit-Reset",
      "/dx, X-RateLimit-Limit, X-RateLimit-Remaining"})
  void everyDialectOnAllowedResponses(String path, String field1, String field2) throws Exception {
    HttpResponse<String> r = get(path);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue(field1)).isPresent();
    assertThat(r.headers().firstValue(field2)).isPresent();
    if (path.equals("/echo/1")) {
      assertThat(r.headers().firstValue("RateLimit")).hasValue("\"minute\";r=2;t=60");
      assertThat(r.headers().firstValue("RateLimit-Policy")).hasValue("\"minute\";q=3;w=60");
    }
    if (path.equals("/d07")) {
      assertThat(r.headers().firstValue("RateLimit")).hasValue("limit=3, remaining=2, reset=60");
    }
  }

  @Test
  void quotaExceededIs429WithRetryAfterHeadersAndCombinedBody_draft09_5_1() throws Exception {
    for (int i = 0; i < 3; i++) {
      assertThat(get("/echo/1").statusCode()).isEqualTo(200);
    }
    ticker.advance(Duration.ofSeconds(20));
    HttpResponse<String> r = get("/echo/1");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("Retry-After")).hasValue("40");
    assertThat(r.headers().firstValue("RateLimit")).hasValue("\"minute\";r=0;t=40");
    JsonNode b = json(r);
    assertThat(Schemas.validate(Schemas.REFUSAL_429, b)).isEmpty();
    assertThat(b.get("type").asText()).endsWith("quota-exceeded");
    assertThat(b.get("status").asInt()).isEqualTo(429);
    assertThat(b.get("retryAfterSeconds").asLong()).isEqualTo(40);
    assertThat(b.get("violated-policies").get(0).asText()).isEqualTo("minute");
    assertThat(b.get("upgradeUrl").asText()).isEqualTo("/pricing");
    assertThat(b.get("detail").asText()).contains("40 seconds");
    // the same second, the same wait: the same bytes; five seconds on, a body that says 35
    assertThat(get("/echo/1").body()).isEqualTo(r.body());
    ticker.advance(Duration.ofSeconds(5));
    HttpResponse<String> later = get("/echo/1");
    assertThat(later.headers().firstValue("Retry-After")).hasValue("35");
    assertThat(json(later).get("retryAfterSeconds").asLong()).isEqualTo(35);
    assertThat(json(later).get("detail").asText()).contains("35 seconds");
    ticker.advance(Duration.ofSeconds(35));
    assertThat(get("/echo/1").statusCode()).isEqualTo(200);
  }

  @Test
  void htmlRefusalCarriesMetaRetryAfter_gracefulBoundaries_2() throws Exception {
    for (int i = 0; i < 3; i++) {
      get("/echo/1");
    }
    HttpResponse<String> r = get("/echo/1", "Accept", "text/html,application/xhtml+xml");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("content-type").orElseThrow()).startsWith("text/html");
    assertThat(r.body()).contains("<meta name=\"retry-after\" content=\"60\">")
        .contains("rel=\"alternate\" type=\"application/json\"");
  }

  @Test
  void reducedCapacityFromTheAdminPortIs503TemporaryReducedCapacity() throws Exception {
    HttpResponse<String> set = client.send(HttpRequest.newBuilder(admin("/capacity?policy=minute&factor=0.34"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(set.statusCode()).isEqualTo(200);
    assertThat(json(set).at("/policies/minute/effectiveQuota").asLong()).isEqualTo(1);
    assertThat(get("/echo/1").statusCode()).isEqualTo(200);
    HttpResponse<String> r = get("/echo/1");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).isPresent();
    JsonNode b = json(r);
    assertThat(b.get("type").asText()).endsWith("temporary-reduced-capacity");
    assertThat(Schemas.validate(Schemas.REFUSAL, b)).isEmpty();
    assertThat(get("/.well-known/limits").body()).contains("Temporarily reduced to 1");
    gateway.setCapacity("minute", 1.0);
    assertThat(get("/echo/1").statusCode()).isEqualTo(200);
  }

  @Test
  void repeatedRequestsDuringRetryAfterEscalateToAbnormalUsage_draft09_5_3() throws Exception {
    String[] key = {"X-Api-Key", "k1"};
    assertThat(get("/abuse", key).statusCode()).isEqualTo(200);
    assertThat(get("/abuse", key).statusCode()).isEqualTo(200);
    assertThat(json(get("/abuse", key)).get("type").asText()).endsWith("quota-exceeded");
    assertThat(json(get("/abuse", key)).get("type").asText()).endsWith("quota-exceeded");
    HttpResponse<String> escalated = get("/abuse", key);
    assertThat(escalated.statusCode()).isEqualTo(429);
    assertThat(json(escalated).get("type").asText()).endsWith("abnormal-usage-detected");
    assertThat(escalated.headers().firstValue("Retry-After")).hasValue("600");
    ticker.advance(Duration.ofMinutes(2)); // the window is over, the block is not
    HttpResponse<String> blocked = get("/abuse", key);
    assertThat(json(blocked).get("type").asText()).endsWith("abnormal-usage-detected");
    assertThat(blocked.headers().firstValue("Retry-After")).hasValue("480");
    assertThat(Schemas.validate(Schemas.REFUSAL_429, json(blocked))).isEmpty();
    assertThat(get("/abuse", "X-Api-Key", "k2").statusCode()).isEqualTo(200); // another partition
    ticker.advance(Duration.ofMinutes(8));
    assertThat(get("/abuse", key).statusCode()).isEqualTo(200);
  }

  @Test
  void gatewayErrorsAreStructured_gracefulBoundaries_level1() throws Exception {
    HttpResponse<String> notFound = get("/nothing/here");
    assertThat(notFound.statusCode()).isEqualTo(404);
    assertThat(Schemas.validate(Schemas.REFUSAL, json(notFound))).isEmpty();

    HttpResponse<String> wrong = client.send(HttpRequest.newBuilder(uri("/d07")).DELETE().build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(wrong.statusCode()).isEqualTo(405);
    assertThat(wrong.headers().firstValue("Allow")).hasValue("GET, HEAD"); // a GET route serves HEAD too
    assertThat(json(wrong).get("allowedMethods").get(0).asText()).isEqualTo("GET");
    assertThat(Schemas.validate(Schemas.REFUSAL, json(wrong))).isEmpty();

    HttpResponse<String> big = client.send(HttpRequest.newBuilder(uri("/sink"))
        .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[200_000])).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(big.statusCode()).isEqualTo(413);
    assertThat(Schemas.validate(Schemas.REFUSAL, json(big))).isEmpty();
    // Graceful Boundaries section 6, input class: which field, and what valid input looks like
    assertThat(json(big).get("field").asText()).isEqualTo("body");
    assertThat(json(big).get("expected").asText()).isEqualTo("A request body of at most 100000 bytes.");

    HttpResponse<String> headers = get("/d07", "X-Big", "x".repeat(4000));
    assertThat(headers.statusCode()).isEqualTo(431);
    assertThat(json(headers).get("field").asText()).isEqualTo("headers");
    assertThat(Schemas.validate(Schemas.REFUSAL, json(headers))).isEmpty();

    HttpResponse<String> down = get("/down");
    assertThat(down.statusCode()).isEqualTo(502);
    assertThat(Schemas.validate(Schemas.REFUSAL, json(down))).isEmpty();

    HttpResponse<String> timeout = get("/hang");
    assertThat(timeout.statusCode()).isEqualTo(504);
    assertThat(json(timeout).get("error").asText()).isEqualTo("upstream_timeout");
    assertThat(Schemas.validate(Schemas.REFUSAL, json(timeout))).isEmpty();
  }

  @Test
  void chunkedUploadOverTheLimitIs413() throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri("/sink"))
        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(new byte[300_000])))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(413);
  }

  @Test
  void bareUpstreamErrorsAreNormalisedOnlyWhereConfigured() throws Exception {
    HttpResponse<String> normalised = get("/status/500");
    assertThat(normalised.statusCode()).isEqualTo(500);
    JsonNode b = json(normalised);
    assertThat(b.get("error").asText()).isEqualTo("internal_server_error");
    assertThat(b.get("upstreamStatus").asInt()).isEqualTo(500);
    assertThat(Schemas.validate(Schemas.REFUSAL, b)).isEmpty();
    // a 429 needs the limit and the wait, which only the upstream knows: passed through as it is
    HttpResponse<String> limited = get("/status/429");
    assertThat(limited.statusCode()).isEqualTo(429);
    assertThat(limited.body()).isEqualTo("upstream says 429");
    HttpResponse<String> notFound = get("/status/404");
    assertThat(json(notFound).get("error").asText()).isEqualTo("not_found");
    assertThat(Schemas.validate(Schemas.REFUSAL, json(notFound))).isEmpty();
    HttpResponse<String> raw = get("/raw/status/500");
    assertThat(raw.statusCode()).isEqualTo(500);
    assertThat(raw.body()).isEqualTo("upstream says 500");
  }

  @Test
  void discoveryHasEtagAndConditionalGet_gracefulBoundaries_1() throws Exception {
    for (String path : List.of("/.well-known/limits", "/api/limits")) {
      HttpResponse<String> r = get(path);
      assertThat(r.statusCode()).isEqualTo(200);
      // Graceful Boundaries section 1: cacheable for at least 300 seconds by shared caches
      assertThat(r.headers().firstValue("Cache-Control")).hasValue(LimitsDiscoveryDocument.cacheControl());
      assertThat(Long.parseLong(r.headers().firstValue("Cache-Control").orElseThrow().replaceAll(".*s-maxage=(\\d+).*", "$1")))
          .isGreaterThanOrEqualTo(300);
      JsonNode doc = json(r);
      assertThat(Schemas.validate(Schemas.LIMITS, doc)).isEmpty();
      assertThat(doc.get("service").asText()).isEqualTo("Test service");
      assertThat(doc.at("/limits/echo-get/limits/0/maxRequests").asInt()).isEqualTo(3);
      String etag = r.headers().firstValue("ETag").orElseThrow();
      HttpResponse<String> again = get(path, "If-None-Match", etag);
      assertThat(again.statusCode()).isEqualTo(304);
      assertThat(again.body()).isEmpty();
    }
  }

  /** The gate's meters (headroom-enforcement HeadroomMeters) on /metrics after 3 allowed and 2 refused requests. */
  @Test
  void metricsCountTheGatesDecisionsByPolicyOutcomeAndProblem() throws Exception {
    for (int i = 0; i < 5; i++) {
      get("/echo/" + i);
    }
    String metrics = client.send(HttpRequest.newBuilder(admin("/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    assertThat(metrics)
        .contains("headroom_decisions_total{outcome=\"allowed\",policy=\"minute\",problem=\"none\"} 3.0")
        .contains("headroom_decisions_total{outcome=\"refused\",policy=\"minute\",problem=\"quota-exceeded\"} 2.0")
        .contains("headroom_store_latency_seconds_count 5")
        .contains("headroom_store_latency_seconds_bucket")
        .contains("headroom_store_failures_total{fallback=\"refuse\"} 0.0");
  }

  @Test
  void adminServesHealthMetricsAndConfiguration() throws Exception {
    get("/echo/1");
    HttpResponse<String> health = client.send(HttpRequest.newBuilder(admin("/health")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(json(health).get("status").asText()).isEqualTo("up");
    String metrics = client.send(HttpRequest.newBuilder(admin("/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    assertThat(metrics).contains("headroom_decisions_total{outcome=\"allowed\",policy=\"minute\",problem=\"none\"} 1.0")
        .contains("headroom_store_latency_seconds").contains("headroom_upstream_latency_seconds");
    String config = client.send(HttpRequest.newBuilder(admin("/config")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    assertThat(config).contains("Test service");
  }

  @Test
  void reloadOnFileChangeKeepsCountersOfUnchangedPolicies() throws Exception {
    assertThat(get("/echo/1").statusCode()).isEqualTo(200);
    assertThat(get("/echo/1").statusCode()).isEqualTo(200);
    String next = Files.readString(configFile).replace("name: Test service", "name: Renamed service")
        .replace("  - {name: down,", "  - {name: added, method: GET, path: /added, upstream: up}\n  - {name: down,");
    Files.writeString(configFile, next);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (get("/added").statusCode() == 404 && System.nanoTime() < deadline) {
      Thread.onSpinWait(); // waiting for the file watcher, bounded
    }
    assertThat(get("/added").statusCode()).isEqualTo(200);
    assertThat(json(get("/.well-known/limits")).get("service").asText()).isEqualTo("Renamed service");
    HttpResponse<String> third = get("/echo/1");
    assertThat(third.headers().firstValue("RateLimit")).hasValue("\"minute\";r=0;t=60");
    assertThat(get("/echo/1").statusCode()).isEqualTo(429);
  }

  @Test
  void aBadReloadKeepsTheConfigurationInForce() throws Exception {
    Files.writeString(configFile, "service: {name: 5}\nroutes: nope\n");
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(admin("/reload"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(422);
    assertThat(json(r).get("problems").size()).isGreaterThanOrEqualTo(2);
    assertThat(get("/echo/1").statusCode()).isEqualTo(200);
  }

  @Test
  void concurrencyLeaseIsReleasedWhenTheClientDisconnectsMidResponse() throws Exception {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", gateway.address().getPort()));
      OutputStream out = s.getOutputStream();
      out.write("GET /drip HTTP/1.1\r\nHost: test\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[4096];
      int n = in.read(buf);
      assertThat(new String(buf, 0, n, StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 200");
      // the lease is held: a second download is refused
      assertThat(get("/drip").statusCode()).isEqualTo(429);
    }
    // the client went away mid-response; the upstream notices, and so does the lease
    assertThat(upstream.dripClosed.await(20, TimeUnit.SECONDS)).isTrue();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    int status;
    do {
      HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(uri("/drip")).build(),
          HttpResponse.BodyHandlers.ofInputStream());
      status = r.statusCode();
      r.body().close();
    } while (status != 200 && System.nanoTime() < deadline);
    assertThat(status).isEqualTo(200);
  }

  @Test
  void contentBytesChargesTheBytesActuallyTransferred() throws Exception {
    HttpResponse<String> first = get("/bytes/600");
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).hasSize(600);
    HttpResponse<String> second = get("/bytes/600");
    assertThat(second.statusCode()).isEqualTo(200); // admitted: not in debt yet (400 left)
    HttpResponse<String> third = get("/bytes/1");
    assertThat(third.statusCode()).isEqualTo(429); // 1200 of 1000 charged: in debt
    ticker.advance(Duration.ofMinutes(1));
    HttpResponse<String> later = get("/bytes/1");
    assertThat(later.headers().firstValue("RateLimit")).hasValue("\"bytes\";r=800;t=60");
  }
}
