package dev.headroom.examples.scg;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The demo as its README describes it, started as {@code main} starts it (its own upstream, the
 * routes of application.yaml) on a free loopback port: what a caller sees.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DemoGatewayTest {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  private ConfigurableApplicationContext app;
  private URI base;

  @BeforeAll
  void start() {
    app = DemoGateway.start(Map.of("server.port", "0", "server.address", "127.0.0.1"));
    int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    base = URI.create("http://127.0.0.1:" + port);
  }

  @AfterAll
  void stop() {
    app.close();
  }

  private HttpResponse<String> get(String path, String key, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT).header("X-Api-Key", key);
    for (int i = 0; i + 1 < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String header(HttpResponse<?> r, String name) {
    return r.headers().firstValue(name).orElse(null);
  }

  /** README, "RequestRateLimiter with HeadroomRateLimiter": fields on every answer, Retry-After on a refusal. */
  @Test
  void quotesAreLimitedByTheRateLimiterWithIetfFieldsAndRetryAfter() throws Exception {
    String key = "demo-" + UUID.randomUUID();
    HttpResponse<String> first = get("/quotes/1", key);
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).contains("\"quote\":\"1\"");
    assertThat(header(first, "RateLimit-Policy")).isEqualTo("\"per-key\";q=5;w=60");
    assertThat(header(first, "RateLimit")).startsWith("\"per-key\";r=4;t=");
    HttpResponse<String> last = first;
    for (int i = 0; i < 10 && last.statusCode() == 200; i++) {
      last = get("/quotes/1", key);
    }
    assertThat(last.statusCode()).isEqualTo(429);
    long retryAfter = Long.parseLong(header(last, "Retry-After"));
    assertThat(retryAfter).isBetween(1L, 60L);
    assertThat(header(last, "RateLimit")).isEqualTo("\"per-key\";r=0;t=" + retryAfter);
  }

  /** README, "The Headroom filter": the refusal's fields and its Graceful Boundaries body, JSON and HTML. */
  @Test
  void itemsAreRefusedWithFieldsAndAGracefulBoundariesBody() throws Exception {
    String key = "demo-" + UUID.randomUUID();
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> ok = get("/items/1", key);
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(header(ok, "RateLimit")).startsWith("\"items\";r=" + (2 - i) + ";t=");
    }
    HttpResponse<String> refused = get("/items/1", key);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(header(refused, "Content-Type")).startsWith("application/problem+json");
    assertThat(header(refused, "Cache-Control")).isEqualTo("no-store");
    long retryAfter = Long.parseLong(header(refused, "Retry-After"));
    assertThat(header(refused, "RateLimit")).contains("\"items\";r=0;t=" + retryAfter);
    JsonNode body = new ObjectMapper().readTree(refused.body());
    assertThat(body.path("type").asText()).endsWith("quota-exceeded");
    assertThat(body.path("status").asInt()).isEqualTo(429);
    assertThat(body.path("retryAfterSeconds").asLong()).isEqualTo(retryAfter);
    assertThat(body.path("violated-policies").get(0).asText()).isEqualTo("items");
    assertThat(body.path("why").asText()).isEqualTo("Limits keep the service responsive for every caller.");
    assertThat(body.path("detail").asText()).isNotBlank();
    HttpResponse<String> html = get("/items/1", key, "Accept", "text/html");
    assertThat(header(html, "Content-Type")).startsWith("text/html");
    assertThat(html.body()).contains("<meta name=\"retry-after\"");
  }

  /** README: the discovery document lists the Headroom route, by its route id. */
  @Test
  void theDiscoveryDocumentListsTheItemsRoute() throws Exception {
    HttpResponse<String> r = get("/.well-known/limits", "any");
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode doc = new ObjectMapper().readTree(r.body());
    assertThat(doc.path("service").asText()).isEqualTo("Demo gateway");
    JsonNode items = doc.path("limits").path("items");
    assertThat(items.path("endpoint").asText()).as(r.body()).isEqualTo("/items/{id}");
    assertThat(items.path("limits").get(0).path("maxRequests").asLong()).isEqualTo(3);
  }
}
