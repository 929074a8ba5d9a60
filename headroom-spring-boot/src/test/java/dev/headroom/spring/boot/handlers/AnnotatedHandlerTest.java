package dev.headroom.spring.boot.handlers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.Ticker;
import dev.headroom.spring.boot.RateLimited;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * On embedded Tomcat: a {@link RateLimited} handler's policies apply only to requests that handler
 * serves, even where its path template also matches requests Spring MVC gives to an unannotated
 * handler (a more specific pattern, or a mapping condition such as {@code params}); and
 * {@code headroom.headers.jitter} spreads refusals while the body agrees with Retry-After
 * (draft-ietf-httpapi-ratelimit-headers-09 sections 6 and 8.5).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AnnotatedHandlerTest {

  @SpringBootApplication
  static class ThingsApplication {

    @RestController
    static class Things {
      @GetMapping("/api/things/{id}")
      @RateLimited("things")
      String thing(@PathVariable String id) {
        return "thing " + id;
      }

      /** Literals Spring compares decoded, which the path-template grammar writes percent-encoded. */
      @GetMapping({"/api/:batch", "/api/caf\u00e9"})
      @RateLimited("things")
      String odd() {
        return "odd";
      }

      /** More specific than /api/things/{id}: Spring MVC runs this one for /api/things/health. */
      @GetMapping("/api/things/health")
      String health() {
        return "up";
      }

      /** Same pattern, with a params condition that templates cannot express. */
      @GetMapping(path = "/api/things/{id}", params = "raw")
      String raw(@PathVariable String id) {
        return "raw " + id;
      }
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final HttpClient client = HttpClient.newHttpClient();
  private ConfigurableApplicationContext context;
  private URI base;

  @BeforeAll
  void start() {
    context = new SpringApplicationBuilder(ThingsApplication.class)
        .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
            "headroom.policies.things.quota=2", "headroom.policies.things.window=60s",
            "headroom.policies.things.algorithm=fixed-window", "headroom.policies.things.partitioning=api-key",
            "headroom.headers.jitter=30s")
        .initializers(ctx -> ((GenericApplicationContext) ctx).registerBean(Ticker.class, () -> ticker))
        .run();
    int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    base = URI.create("http://127.0.0.1:" + port);
  }

  @AfterAll
  void stop() {
    context.close();
  }

  private HttpResponse<String> get(String path, String key) throws Exception {
    return client.send(HttpRequest.newBuilder(base.resolve(path)).header("X-Api-Key", key).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aMoreSpecificUnannotatedHandlerIsNotLimitedByTheAnnotatedTemplate() throws Exception {
    String key = UUID.randomUUID().toString();
    for (int i = 0; i < 4; i++) {
      HttpResponse<String> r = get("/api/things/health", key);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("up");
      assertThat(r.headers().firstValue("RateLimit")).isEmpty();
    }
    // The annotated handler still is limited (t carries the jitter).
    assertThat(get("/api/things/1", key).headers().firstValue("RateLimit").orElseThrow()).startsWith("\"things\";r=1;t=");
  }

  @Test
  void literalSegmentsOutsideTheTemplateAlphabetAreLimitedAsSpringMatchesThem() throws Exception {
    String key = UUID.randomUUID().toString();
    HttpResponse<String> colon = get("/api/:batch", key);
    assertThat(colon.body()).isEqualTo("odd");
    assertThat(colon.headers().firstValue("RateLimit")).isPresent();
    HttpResponse<String> accented = get("/api/caf%C3%A9", UUID.randomUUID().toString());
    assertThat(accented.body()).isEqualTo("odd");
    assertThat(accented.headers().firstValue("RateLimit")).isPresent();
  }

  @Test
  void anUnannotatedHandlerChosenByAMappingConditionIsNotLimited() throws Exception {
    String key = UUID.randomUUID().toString();
    for (int i = 0; i < 4; i++) {
      HttpResponse<String> r = get("/api/things/7?raw", key);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("raw 7");
      assertThat(r.headers().firstValue("RateLimit")).isEmpty();
    }
  }

  @Test
  void theAnnotatedHandlerIsLimitedAndItsRefusalsAgreeWithTheJitteredRetryAfter() throws Exception {
    String key = UUID.randomUUID().toString();
    assertThat(get("/api/things/1", key).statusCode()).isEqualTo(200);
    assertThat(get("/api/things/2", key).statusCode()).isEqualTo(200);
    for (int i = 0; i < 6; i++) {
      HttpResponse<String> refused = get("/api/things/3", key);
      assertThat(refused.statusCode()).isEqualTo(429);
      long retryAfter = Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow());
      assertThat(retryAfter).isBetween(60L, 90L);
      assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"things\";r=0;t=" + retryAfter);
      JsonNode body = JSON.readTree(refused.body());
      assertThat(body.path("retryAfterSeconds").asLong()).isEqualTo(retryAfter);
    }
  }
}
