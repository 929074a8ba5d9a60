package dev.headroom.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

/** The demo over a real port: its configuration as shipped, time from a ManualTicker. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class DemoApplicationTest {

  @TestConfiguration
  static class Clock {
    @Bean
    ManualTicker ticker() {
      return ManualTicker.atFixedInstant();
    }
  }

  @LocalServerPort int port;
  @Autowired ManualTicker ticker;
  @Autowired MeterRegistry registry;

  private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final ObjectMapper json = new ObjectMapper();

  private HttpResponse<String> send(String method, String path, String body, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    for (int i = 0; i + 1 < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void itemsAreLimitedPerApiKeyWithHeadersAndAStructuredRefusal() throws Exception {
    for (int i = 1; i <= 5; i++) {
      HttpResponse<String> ok = send("GET", "/api/items/" + i, null, "X-Api-Key", "demo-key-1");
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.headers().firstValue("RateLimit")).hasValue("\"per-client\";r=" + (5 - i) + ";t=60");
    }
    HttpResponse<String> refused = send("GET", "/api/items/6", null, "X-Api-Key", "demo-key-1");
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.headers().firstValue("Retry-After")).hasValue("60");
    JsonNode body = json.readTree(refused.body());
    assertThat(body.path("error").asText()).isEqualTo("rate_limit_exceeded");
    assertThat(body.path("why").asText()).isEqualTo("Limits keep the catalogue responsive and fair for every caller.");
    assertThat(body.path("upgradeUrl").asText()).isEqualTo("/pricing");
    assertThat(body.path("retryAfterSeconds").asInt()).isEqualTo(60);
    // Another key is a partition of its own.
    assertThat(send("GET", "/api/items/1", null, "X-Api-Key", "demo-key-2").statusCode()).isEqualTo(200);
    ticker.advance(Duration.ofMinutes(1));
    assertThat(send("GET", "/api/items/7", null, "X-Api-Key", "demo-key-1").statusCode()).isEqualTo(200);
    assertThat(registry.get("headroom.decisions").tag("policy", "per-client").tag("outcome", "refused").counter().count())
        .isGreaterThanOrEqualTo(1);
  }

  @Test
  void ordersAreLimitedPerUserTheApplicationNames() throws Exception {
    String order = "{\"item\":\"1\",\"quantity\":1}";
    assertThat(send("POST", "/api/orders", order, "X-Demo-User", "ada", "X-Api-Key", "orders-a").statusCode()).isEqualTo(200);
    assertThat(send("POST", "/api/orders", order, "X-Demo-User", "ada", "X-Api-Key", "orders-b").statusCode()).isEqualTo(200);
    HttpResponse<String> refused = send("POST", "/api/orders", order, "X-Demo-User", "ada", "X-Api-Key", "orders-c");
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(json.readTree(refused.body()).path("violated-policies").get(0).asText()).isEqualTo("orders-per-user");
    assertThat(send("POST", "/api/orders", order, "X-Demo-User", "grace", "X-Api-Key", "orders-d").statusCode()).isEqualTo(200);
  }

  @Test
  void browsersGetAnHtmlRefusal() throws Exception {
    for (int i = 0; i < 5; i++) {
      send("GET", "/api/items/1", null, "X-Api-Key", "browser");
    }
    HttpResponse<String> page = send("GET", "/api/items/1", null, "X-Api-Key", "browser", "Accept", "text/html");
    assertThat(page.statusCode()).isEqualTo(429);
    assertThat(page.headers().firstValue("Content-Type").orElse("")).startsWith("text/html");
    assertThat(page.body()).contains("<meta name=\"retry-after\" content=\"");
  }

  @Test
  void discoveryListsEveryLimitAndRevalidates() throws Exception {
    HttpResponse<String> doc = send("GET", "/.well-known/limits", null);
    assertThat(doc.statusCode()).isEqualTo(200);
    JsonNode limits = json.readTree(doc.body()).path("limits");
    assertThat(limits.path("item").path("endpoint").asText()).isEqualTo("/api/items/{id}");
    assertThat(limits.path("order").path("limits")).hasSize(2);
    assertThat(limits.path("report").path("limits").get(0).path("type").asText()).isEqualTo("concurrency");
    assertThat(limits.path("export").path("limits").get(0).path("costMetric").asText()).isEqualTo("bytes");
    String etag = doc.headers().firstValue("ETag").orElseThrow();
    assertThat(send("GET", "/api/limits", null, "If-None-Match", etag).statusCode()).isEqualTo(304);
  }

  @Test
  void asynchronousReportsHoldAConcurrencySlotOnlyWhileRunning() throws Exception {
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> r = send("GET", "/api/reports/" + i, null);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).contains("ready");
      assertThat(r.headers().firstValue("RateLimit-Policy")).hasValue("\"report-slots\";q=2;qu=\"concurrent-requests\";w=60");
    }
  }

  @Test
  void exportBytesAreChargedAfterTheFact() throws Exception {
    HttpResponse<String> first = send("GET", "/api/export", null);
    assertThat(first.statusCode()).isEqualTo(200);
    int size = first.body().length();
    assertThat(first.headers().firstValue("X-RateLimit-Limit")).hasValue("1000");
    // Every export is allowed while the partition has bytes left; the one that goes past ends them.
    int allowed = 1;
    HttpResponse<String> r;
    while ((r = send("GET", "/api/export", null)).statusCode() == 200 && allowed < 10) {
      allowed++;
    }
    assertThat(r.statusCode()).isEqualTo(429);
    // Bytes are charged once a response completes, which a client can observe a moment before the
    // server has run its completion: at most one extra response can slip through.
    int expected = (1000 + size - 1) / size;
    assertThat(allowed).isBetween(expected, expected + 1);
    assertThat(json.readTree(r.body()).path("alternativeEndpoint").asText()).isEqualTo("/api/items/1");
    ticker.advance(Duration.ofMinutes(1));
  }
}
