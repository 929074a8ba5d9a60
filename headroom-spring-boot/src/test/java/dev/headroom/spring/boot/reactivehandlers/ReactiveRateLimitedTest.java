package dev.headroom.spring.boot.reactivehandlers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.spring.boot.RateLimited;
import dev.headroom.webflux.HeadroomWebFilter;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * On Reactor Netty, a real started WebFlux application: a {@link RateLimited} handler method of a
 * {@code @RestController} is limited by the WebFlux filter, its policies applying only to requests
 * that handler serves (not to an unannotated handler with a more specific pattern, or chosen by a
 * {@code params} condition), and an unannotated handler is not limited; the annotated route is in
 * the discovery document.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReactiveRateLimitedTest {

  @SpringBootApplication
  static class ReactiveThingsApplication {

    @RestController
    static class Things {
      @GetMapping("/api/things/{id}")
      @RateLimited("things")
      Mono<String> thing(@PathVariable String id) {
        return Mono.just("thing " + id);
      }

      /** More specific than /api/things/{id}: WebFlux runs this one for /api/things/health. */
      @GetMapping("/api/things/health")
      Mono<String> health() {
        return Mono.just("up");
      }

      /** Same pattern, with a params condition that templates cannot express. */
      @GetMapping(path = "/api/things/{id}", params = "raw")
      Mono<String> raw(@PathVariable String id) {
        return Mono.just("raw " + id);
      }

      /** Not annotated: never limited. */
      @GetMapping("/api/free/{id}")
      Mono<String> free(@PathVariable String id) {
        return Mono.just("free " + id);
      }
    }
  }

  private ConfigurableApplicationContext context;
  private WebTestClient client;

  @BeforeAll
  void start() {
    context = new SpringApplicationBuilder(ReactiveThingsApplication.class).web(WebApplicationType.REACTIVE)
        .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
            "headroom.service.name=Reactive things",
            "headroom.policies.things.quota=2", "headroom.policies.things.window=60s",
            "headroom.policies.things.partitioning=api-key")
        .run();
    int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
        .responseTimeout(Duration.ofSeconds(30)).build();
  }

  @AfterAll
  void stop() {
    context.close();
  }

  private EntityExchangeResult<String> get(String path, String key) {
    return client.get().uri(path).header("X-Api-Key", key).header("Accept", "application/json").exchange()
        .expectBody(String.class).returnResult();
  }

  @Test
  void theAnnotatedHandlerMethodIsARouteOfTheWebFilter() {
    assertThat(context.getBean(HeadroomWebFilter.class).gate().routes())
        .anySatisfy(r -> assertThat(r.template()).isEqualTo("/api/things/{id}"));
  }

  @Test
  void theAnnotatedHandlerIsLimitedAndRequestsOtherHandlersServeAreNot() throws Exception {
    String key = "k-" + UUID.randomUUID();
    EntityExchangeResult<String> first = get("/api/things/1", key);
    assertThat(first.getStatus().value()).isEqualTo(200);
    assertThat(first.getResponseBody()).isEqualTo("thing 1");
    assertThat(first.getResponseHeaders().getFirst("RateLimit")).startsWith("\"things\";r=1;t=");
    assertThat(get("/api/things/2", key).getStatus().value()).isEqualTo(200);
    EntityExchangeResult<String> refused = get("/api/things/3", key);
    assertThat(refused.getStatus().value()).isEqualTo(429);
    assertThat(refused.getResponseHeaders().getFirst("Retry-After")).isNotNull();
    JsonNode body = new ObjectMapper().readTree(refused.getResponseBody());
    assertThat(body.path("violated-policies").get(0).asText()).isEqualTo("things");

    // the same template, other handlers: not limited, no fields, even with the quota spent
    for (int i = 0; i < 3; i++) {
      EntityExchangeResult<String> health = get("/api/things/health", key);
      assertThat(health.getStatus().value()).isEqualTo(200);
      assertThat(health.getResponseBody()).isEqualTo("up");
      assertThat(health.getResponseHeaders().getFirst("RateLimit")).isNull();
      EntityExchangeResult<String> raw = get("/api/things/7?raw", key);
      assertThat(raw.getStatus().value()).isEqualTo(200);
      assertThat(raw.getResponseBody()).isEqualTo("raw 7");
      assertThat(raw.getResponseHeaders().getFirst("RateLimit")).isNull();
    }
  }

  @Test
  void anUnannotatedHandlerIsNotLimited() {
    String key = "k-" + UUID.randomUUID();
    for (int i = 0; i < 5; i++) {
      EntityExchangeResult<String> free = get("/api/free/" + i, key);
      assertThat(free.getStatus().value()).isEqualTo(200);
      assertThat(free.getResponseBody()).isEqualTo("free " + i);
      assertThat(free.getResponseHeaders().getFirst("RateLimit")).isNull();
    }
  }

  @Test
  void theAnnotatedRouteIsInTheDiscoveryDocument() throws Exception {
    JsonNode doc = new ObjectMapper().readTree(get("/.well-known/limits", "any").getResponseBody());
    assertThat(doc.path("limits").toString()).contains("/api/things/{id}");
  }
}
