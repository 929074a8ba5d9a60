package dev.headroom.spring.boot.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.webflux.HeadroomWebFilter;
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
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The starter in a reactive application (issue 20): with headroom-webflux on the classpath, a real
 * started Spring Boot WebFlux application on Reactor Netty gets the WebFlux filter from the same
 * {@code headroom.*} properties as a servlet application, over HTTP: RateLimit fields on allowed
 * responses, a Graceful Boundaries refusal past the quota, the discovery document.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReactiveAutoConfigurationTest {

  static final Duration TIMEOUT = Duration.ofSeconds(30);

  @SpringBootApplication
  static class ReactiveApp {
    @Bean
    RouterFunction<ServerResponse> items() {
      return RouterFunctions.route().GET("/api/items/{id}", r -> ServerResponse.ok().bodyValue("item")).build();
    }
  }

  ConfigurableApplicationContext context;
  URI base;
  final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

  @BeforeAll
  void start() {
    context = new SpringApplicationBuilder(ReactiveApp.class).web(WebApplicationType.REACTIVE)
        .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
            "headroom.service.name=Reactive items", "headroom.service.description=Items over WebFlux.",
            "headroom.why=Limits keep the service responsive for every caller.",
            "headroom.policies.items.quota=2", "headroom.policies.items.window=60s",
            "headroom.policies.items.partitioning=api-key",
            "headroom.routes[0].path=/api/items/{id}", "headroom.routes[0].methods[0]=GET",
            "headroom.routes[0].policies[0]=items")
        .run();
    int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    base = URI.create("http://127.0.0.1:" + port);
  }

  @AfterAll
  void stop() {
    context.close();
  }

  HttpResponse<String> get(String path, String key) throws Exception {
    return client.send(HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT).header("X-Api-Key", key)
        .header("Accept", "application/json").GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theWebFluxFilterIsInstalledFromTheHeadroomProperties() throws Exception {
    assertThat(context.getBean(HeadroomWebFilter.class).gate().routes()).hasSize(1);
    String key = "k-" + UUID.randomUUID();
    HttpResponse<String> first = get("/api/items/1", key);
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).isEqualTo("item");
    assertThat(first.headers().firstValue("RateLimit")).hasValueSatisfying(v -> assertThat(v).contains("r=1"));
    assertThat(first.headers().firstValue("RateLimit-Policy")).hasValueSatisfying(v -> assertThat(v).contains("q=2"));
    assertThat(get("/api/items/2", key).statusCode()).isEqualTo(200);
    HttpResponse<String> refused = get("/api/items/3", key);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.headers().firstValue("Retry-After")).isPresent();
    JsonNode body = new ObjectMapper().readTree(refused.body());
    assertThat(body.path("violated-policies").get(0).asText()).isEqualTo("items");
    assertThat(body.path("why").asText()).isEqualTo("Limits keep the service responsive for every caller.");
  }

  @Test
  void theDiscoveryDocumentIsServed() throws Exception {
    HttpResponse<String> doc = get("/.well-known/limits", "any");
    assertThat(doc.statusCode()).isEqualTo(200);
    JsonNode d = new ObjectMapper().readTree(doc.body());
    assertThat(d.path("service").asText()).isEqualTo("Reactive items");
    assertThat(doc.headers().firstValue("ETag")).isPresent();
  }
}
