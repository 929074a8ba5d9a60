package dev.headroom.spring.boot.endpoint;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@code GET /actuator/headroom} of a started application shows what the filter's gate holds now:
 * a route's adaptive limit (the limit learnt, the requests in flight, each plan's share) and a
 * queued policy's waiting requests, while a request is held in flight by the application and
 * another waits in the queue (a plan's version of the policy, {@code paced:free}, waiting in
 * {@code paced}'s queue, and holding no place in the adaptive limit while it waits).
 */
class HeadroomEndpointStateTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient client = HttpClient.newHttpClient();
  private ConfigurableApplicationContext app;
  private int port;

  @BeforeEach
  void start() {
    HeadroomEndpointTest.EndpointApplication.Api.answer = new CountDownLatch(1);
    // one request each 2 s: the second waits for the next unit, well within maxWait; no X-Plan: the free plan
    app = new SpringApplicationBuilder(HeadroomEndpointTest.EndpointApplication.class).properties(Map.ofEntries(
        Map.entry("server.port", "0"), Map.entry("server.address", "127.0.0.1"), Map.entry("spring.main.banner-mode", "off"),
        Map.entry("headroom.service.name", "Endpoint state"),
        Map.entry("headroom.why", "Limits keep the service responsive for every caller."),
        Map.entry("headroom.policies.paced.quota", "1"), Map.entry("headroom.policies.paced.window", "2s"),
        Map.entry("headroom.policies.paced.algorithm", "token-bucket"),
        Map.entry("headroom.policies.paced.queue.max-wait", "30s"),
        Map.entry("headroom.routes[0].path", "/api/**"), Map.entry("headroom.routes[0].policies[0]", "paced"),
        Map.entry("headroom.routes[0].adaptive.initial-limit", "5"),
        Map.entry("headroom.routes[0].adaptive.shares.free", "0.2"),
        Map.entry("headroom.routes[0].adaptive.shares.pro", "0.8"),
        Map.entry("headroom.plans.fallback", "free"), Map.entry("headroom.plans.catalog.free.policies.paced.quota", "1"),
        Map.entry("headroom.plans.catalog.pro.policies.paced.quota", "10"),
        Map.entry("management.endpoints.web.exposure.include", "headroom"))).run();
    port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
  }

  @AfterEach
  void stop() {
    HeadroomEndpointTest.EndpointApplication.Api.answer.countDown();
    app.close();
  }

  private JsonNode read() throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/headroom"))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  /** The endpoint's reading once {@code until} holds (the requests sent reach the gate on the server's threads). */
  private JsonNode readUntil(Predicate<JsonNode> until) throws Exception {
    JsonNode n = read();
    for (int i = 0; i < 1000 && !until.test(n); i++) {
      Thread.sleep(20);
      n = read();
    }
    return n;
  }

  private static JsonNode route(JsonNode limits) {
    JsonNode routes = limits.path("adaptive").path("routes");
    assertThat(routes.size()).as("one adaptive route: %s", limits).isEqualTo(1);
    return routes.elements().next();
  }

  private CompletableFuture<HttpResponse<String>> slow() {
    return client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/slow"))
        .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void showsTheAdaptiveLimitItsSharesAndTheQueue() throws Exception {
    JsonNode idle = read();
    assertThat(idle.path("adaptive").path("unit").asText()).isEqualTo("concurrent-requests");
    JsonNode adaptive = route(idle);
    assertThat(adaptive.path("limit").asInt()).isEqualTo(5);
    assertThat(adaptive.path("inflight").asInt()).isZero();
    assertThat(adaptive.path("shares").path("pro").path("fraction").asDouble()).isEqualTo(0.8);
    assertThat(adaptive.path("shares").path("pro").path("guaranteed").asInt()).isEqualTo(4); // ceil(5 * 0.8)
    assertThat(adaptive.path("shares").path("free").path("guaranteed").asInt()).isEqualTo(1);
    assertThat(idle.path("paced").path("queue").path("maxWaitMillis").asLong()).isEqualTo(30_000);
    assertThat(idle.path("paced").path("queue").path("maxQueued").asInt()).isEqualTo(1000);
    assertThat(idle.path("paced").path("queue").path("waiting").asInt()).isZero();

    CompletableFuture<HttpResponse<String>> first = slow();
    JsonNode busy = readUntil(n -> route(n).path("inflight").asInt() == 1);
    assertThat(route(busy).path("inflight").asInt()).as("held by the application").isEqualTo(1);
    assertThat(route(busy).path("shares").path("free").path("inflight").asInt()).isEqualTo(1);

    CompletableFuture<HttpResponse<String>> second = slow(); // paced:free refuses it for 2 s: it waits in paced's queue
    JsonNode queued = readUntil(n -> n.path("paced").path("queue").path("waiting").asInt() == 1);
    assertThat(queued.path("paced").path("queue").path("waiting").asInt()).as("%s", queued).isEqualTo(1);
    assertThat(route(queued).path("inflight").asInt()).as("the waiting request holds no place").isEqualTo(1);

    HeadroomEndpointTest.EndpointApplication.Api.answer.countDown();
    assertThat(first.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(second.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    JsonNode done = readUntil(n -> route(n).path("inflight").asInt() == 0);
    assertThat(route(done).path("inflight").asInt()).isZero();
    assertThat(done.path("paced").path("queue").path("waiting").asInt()).isZero();
  }
}
