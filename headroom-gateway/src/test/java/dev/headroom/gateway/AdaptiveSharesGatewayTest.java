package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.headroom.ManualTicker;
import dev.headroom.enforcement.partition.ApiKeys;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each plan's guaranteed share of a route's learnt limit through the gateway
 * ({@code routes[].adaptive.shares}, plans from the API key file resolver), over real sockets
 * against a real upstream that holds each request until the test lets it go: with the limit at 10
 * and shares free 0.2, pro 0.8, free alone takes all 10 while pro is idle; pro then still gets its
 * 8 while free is refused 503 {@code temporary-reduced-capacity} with Retry-After
 * (draft-ietf-httpapi-ratelimit-headers-09 section 5.2); once free's borrowed requests complete,
 * free gets its own 2 back and no more. The discovery document lists the adaptive limit with its
 * shares (Graceful Boundaries section 1). The ticker is manual, so the limit stays at 10 and only
 * the shares decide.
 */
class AdaptiveSharesGatewayTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @TempDir Path dir;
  private HttpServer upstream;
  private ExecutorService upstreamThreads;
  private Gateway gateway;
  private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  /** Per plan: released by the test to let that plan's held requests complete. */
  private final Map<String, CountDownLatch> release = new ConcurrentHashMap<>();
  /** One permit per request the upstream has started. */
  private final Semaphore started = new Semaphore(0);

  @BeforeEach
  void start() throws Exception {
    release.put("free", new CountDownLatch(1));
    release.put("pro", new CountDownLatch(1));
    upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    upstreamThreads = Executors.newFixedThreadPool(40);
    upstream.setExecutor(upstreamThreads);
    upstream.createContext("/", ex -> {
      started.release();
      String plan = ex.getRequestURI().getQuery().replace("plan=", "");
      try {
        release.get(plan).await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, -1);
      ex.close();
    });
    upstream.start();
    Path keys = Files.writeString(dir.resolve("keys.txt"), ApiKeys.sha256("pro-key") + " pro\n");
    gateway = Gateway.builder(GatewayConfig.parse(yaml(keys, "{free: 0.2, pro: 0.8}", "free, pro"), "shares.yaml"))
        .ticker(ManualTicker.atFixedInstant()).start();
  }

  private String yaml(Path keys, String shares, String... plans) {
    StringBuilder catalog = new StringBuilder();
    for (String p : plans[0].split(", ")) {
      catalog.append("    ").append(p).append(": {url: /pricing#").append(p).append("}\n");
    }
    return """
        service: {name: Shares, origin: "https://api.example.com"}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        upstreams:
          up: {url: "http://127.0.0.1:%d", maxConnections: 64}
        policies:
          api: {quota: 1000000, window: 1m, why: Limits keep the service available for everyone.}
        routes:
          - name: work
            method: GET
            path: /work
            upstream: up
            policies: [api]
            adaptive: {minLimit: 1, maxLimit: 10, initialLimit: 10, shares: %s}
        plans:
          fallback: free
          resolver: {type: api-key-file, file: "%s"}
          catalog:
        %s""".formatted(upstream.getAddress().getPort(), shares, keys.toString().replace("\\", "\\\\"), catalog);
  }

  @AfterEach
  void stop() {
    release.values().forEach(CountDownLatch::countDown);
    if (gateway != null) {
      gateway.close();
    }
    upstream.stop(0);
    upstreamThreads.shutdownNow();
  }

  private HttpRequest request(String plan) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort()
        + "/work?plan=" + plan)).timeout(Duration.ofSeconds(30));
    if (plan.equals("pro")) {
      b.header("X-Api-Key", "pro-key");
    }
    return b.build();
  }

  /** {@code n} requests of {@code plan} held at the upstream: each admitted, all in flight. */
  private List<CompletableFuture<HttpResponse<String>>> hold(String plan, int n) throws Exception {
    List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      held.add(client.sendAsync(request(plan), HttpResponse.BodyHandlers.ofString()));
    }
    assertThat(started.tryAcquire(n, 30, TimeUnit.SECONDS)).as("%s %s requests reached the upstream", n, plan).isTrue();
    return held;
  }

  private void assertRefused(String plan) throws Exception {
    HttpResponse<String> r = client.send(request(plan), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("%s refused", plan).isEqualTo(503);
    assertThat(r.body()).contains("temporary-reduced-capacity");
    assertThat(Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow())).isGreaterThanOrEqualTo(1);
    assertThat(r.headers().firstValue("RateLimit-Policy").orElseThrow()).as("the route's whole limit")
        .contains("\"adaptive\";q=10;qu=\"concurrent-requests\"");
  }

  @Test
  void aGreedyPlanCannotTakeTheShareOfAnotherAndBorrowsItWhileIdle() throws Exception {
    List<CompletableFuture<HttpResponse<String>>> free = hold("free", 10);
    assertRefused("free");
    List<CompletableFuture<HttpResponse<String>>> pro = hold("pro", 8);
    assertRefused("pro");
    assertRefused("free");

    release.get("free").countDown();
    for (CompletableFuture<HttpResponse<String>> f : free) {
      assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
    release.put("free", new CountDownLatch(1));
    List<CompletableFuture<HttpResponse<String>>> freeAgain = hold("free", 2);
    assertRefused("free");
    assertThat(started.availablePermits()).as("no request beyond the shares reached the upstream").isZero();

    release.get("free").countDown();
    release.get("pro").countDown();
    for (CompletableFuture<HttpResponse<String>> f : pro) {
      assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
    for (CompletableFuture<HttpResponse<String>> f : freeAgain) {
      assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
  }

  @Test
  void theDiscoveryDocumentListsTheAdaptiveLimitWithItsShares() throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + gateway.address().getPort() + "/.well-known/limits")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode limits = JSON.readTree(r.body()).at("/limits/work/limits");
    JsonNode adaptive = limits.get(limits.size() - 1);
    assertThat(adaptive.get("type").asText()).isEqualTo("concurrency");
    assertThat(adaptive.get("limitId").asText()).isEqualTo("adaptive");
    assertThat(adaptive.get("scope").asText()).isEqualTo("global");
    assertThat(adaptive.get("maxRequests").asInt()).isEqualTo(10);
    assertThat(adaptive.at("/adaptive/learnt").asBoolean()).isTrue();
    assertThat(adaptive.at("/adaptive/minLimit").asInt()).isEqualTo(1);
    assertThat(adaptive.at("/adaptive/maxLimit").asInt()).isEqualTo(10);
    assertThat(adaptive.at("/adaptive/shares/free").asDouble()).isEqualTo(0.2);
    assertThat(adaptive.at("/adaptive/shares/pro").asDouble()).isEqualTo(0.8);
    assertThat(adaptive.get("description").asText()).contains("free 20%, pro 80%");
  }

  @Test
  void sharesMustNamePlansOfTheCatalog() throws Exception {
    Path keys = dir.resolve("keys.txt");
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml(keys, "{free: 0.2, gold: 0.8}", "free, pro"),
        "shares.yaml"), ConfigException.class);
    assertThat(e.problems()).containsExactly("routes[0].adaptive.shares.gold: \"gold\" is not valid; expected one of "
        + "the plans [free, pro]");
    ConfigException sum = catchThrowableOfType(() -> GatewayConfig.parse(yaml(keys, "{free: 0.5, pro: 0.8}", "free, pro"),
        "shares.yaml"), ConfigException.class);
    assertThat(sum.problems()).containsExactly("routes[0].adaptive.shares: \"{free=0.5, pro=0.8}\" is not valid; expected "
        + "fractions that together come to at most 1");
    String noPlans = yaml(keys, "{free: 0.2}", "free").replaceAll("(?s)\nplans:.*", "\n");
    ConfigException none = catchThrowableOfType(() -> GatewayConfig.parse(noPlans, "shares.yaml"), ConfigException.class);
    assertThat(none.problems()).containsExactly("routes[0].adaptive.shares: \"{free=0.2}\" is not valid; expected "
        + "plans under plans.catalog, since a request's plan picks its share");
  }
}
