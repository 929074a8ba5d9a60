package dev.headroom.spring.boot.endpoint;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.PlanResolver;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The {@code headroom} actuator endpoint of a started application, over its real port: {@code GET
 * /actuator/headroom} reads the limits in force (each plan's version too), {@code POST
 * /actuator/headroom/{policy}} changes one and the next request is decided under it (a plan's
 * version following its base, as {@code RuntimeLimits} says), a change that is not valid is 400
 * naming the property and changes nothing, {@code DELETE} restores it.
 */
class HeadroomEndpointTest {

  @SpringBootApplication
  static class EndpointApplication {
    @Bean
    PlanResolver plans() {
      return view -> CompletableFuture.completedFuture(view.headers("X-Plan").isEmpty()
          ? PlanResolution.anonymous() : new PlanResolution.Named(view.headers("X-Plan").get(0)));
    }

    @RestController
    static class Api {
      /** Holds {@code /api/slow} in flight until a test lets it answer. */
      static volatile CountDownLatch answer = new CountDownLatch(0);

      @GetMapping("/api/hello")
      String hello() {
        return "hello";
      }

      @GetMapping("/api/slow")
      String slow() throws InterruptedException {
        answer.await(60, TimeUnit.SECONDS);
        return "slow";
      }
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient client = HttpClient.newHttpClient();
  private ConfigurableApplicationContext app;
  private int port;

  @BeforeEach
  void start() {
    // a fixed window of a week (aligned to the epoch): counters carry on across a change, as units,
    // and no boundary frees a unit during the test but once a week for a second
    app = new SpringApplicationBuilder(EndpointApplication.class).properties(Map.ofEntries(
        Map.entry("server.port", "0"), Map.entry("server.address", "127.0.0.1"), Map.entry("spring.main.banner-mode", "off"),
        Map.entry("headroom.service.name", "Endpoint"),
        Map.entry("headroom.why", "Limits keep the service responsive for every caller."),
        Map.entry("headroom.policies.api.quota", "2"), Map.entry("headroom.policies.api.window", "7d"),
        Map.entry("headroom.policies.api.algorithm", "fixed-window"),
        Map.entry("headroom.routes[0].path", "/api/**"), Map.entry("headroom.routes[0].policies[0]", "api"),
        Map.entry("headroom.plans.fallback", "free"), Map.entry("headroom.plans.catalog.free.policies.api.quota", "2"),
        Map.entry("headroom.plans.catalog.pro.policies.api.quota", "10"),
        Map.entry("management.endpoints.web.exposure.include", "headroom"))).run();
    port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
  }

  @AfterEach
  void stop() {
    app.close();
  }

  HttpResponse<String> send(String method, String path, String json) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30));
    if (json != null) {
      b.header("Content-Type", "application/json");
    }
    b.method(method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void readsTheLimitsInForce() throws Exception {
    HttpResponse<String> r = send("GET", "/actuator/headroom", null);
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode limits = JSON.readTree(r.body());
    assertThat(limits.path("api").path("quota").asLong()).isEqualTo(2);
    assertThat(limits.path("api").path("windowSeconds").asLong()).isEqualTo(7 * 24 * 3600);
    assertThat(limits.path("api:pro").path("quota").asLong()).isEqualTo(10);
    assertThat(limits.path("api:pro").path("plan").asText()).isEqualTo("pro");
    assertThat(limits.path("api:pro").path("base").asText()).isEqualTo("api");
  }

  @Test
  void aChangeAppliesToTheNextRequestAndIsRestored() throws Exception {
    assertThat(send("GET", "/api/hello", null).statusCode()).isEqualTo(200);
    assertThat(send("GET", "/api/hello", null).statusCode()).isEqualTo(200);
    assertThat(send("GET", "/api/hello", null).statusCode()).isEqualTo(429);

    HttpResponse<String> changed = send("POST", "/actuator/headroom/api", "{\"quota\": 4, \"window\": \"7d\"}");
    assertThat(changed.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(changed.body()).path("quota").asLong()).isEqualTo(4);
    JsonNode limits = JSON.readTree(send("GET", "/actuator/headroom", null).body());
    assertThat(limits.path("api").path("quota").asLong()).isEqualTo(4);
    assertThat(limits.path("api:free").path("quota").asLong()).isEqualTo(4); // twice the base: twice each plan
    assertThat(limits.path("api:pro").path("quota").asLong()).isEqualTo(20);

    HttpResponse<String> next = send("GET", "/api/hello", null); // the free plan's counters carry on: 2 of 4 spent
    assertThat(next.statusCode()).isEqualTo(200);
    assertThat(next.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:free\";q=4");

    HttpResponse<String> restored = send("DELETE", "/actuator/headroom/api", null);
    assertThat(restored.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(restored.body()).path("quota").asLong()).isEqualTo(2);
    assertThat(send("GET", "/api/hello", null).statusCode()).isEqualTo(429);
  }

  @Test
  void aChangeThatIsNotValidIs400AndChangesNothing() throws Exception {
    HttpResponse<String> zero = send("POST", "/actuator/headroom/api", "{\"quota\": 0}");
    assertThat(zero.statusCode()).isEqualTo(400);
    HttpResponse<String> unknown = send("POST", "/actuator/headroom/nope", "{\"quota\": 5}");
    assertThat(unknown.statusCode()).isEqualTo(400);
    assertThat(send("DELETE", "/actuator/headroom/nope", null).statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(send("GET", "/actuator/headroom", null).body()).path("api").path("quota").asLong()).isEqualTo(2);
  }
}
