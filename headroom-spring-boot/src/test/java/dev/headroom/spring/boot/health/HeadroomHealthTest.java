package dev.headroom.spring.boot.health;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.Store;
import dev.headroom.conformance.RedisProcess;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.RedisStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The {@code headroom} health contributor of real started applications, servlet and reactive,
 * through {@code /actuator/health}, {@code /actuator/health/headroom} and
 * {@code /actuator/health/readiness}, with a redis-server of the test's own that it kills and starts
 * again on the same port: a fail-closed store is {@code DOWN} (503, and the readiness group, which
 * it joins of itself with no {@code management.endpoint.health.group.readiness.include}, is 503)
 * while Redis is gone and {@code UP} again when it is back; a store whose
 * fallback decides is {@code DEGRADED}, which is 200 and leaves the overall status {@code UP}.
 */
class HeadroomHealthTest {

  static final Duration TIMEOUT = Duration.ofSeconds(30);
  static final ObjectMapper JSON = new ObjectMapper();

  @SpringBootApplication
  static class App {
    @RestController
    static class Items {
      @GetMapping("/api/items")
      String items() {
        return "items";
      }
    }
  }

  /** The application's own Redis store (when the test names a Redis), falling back to a local one when Redis cannot decide. */
  @SpringBootApplication
  static class FallbackApp {
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty("test.redis-uri")
    Store store(org.springframework.core.env.Environment env) {
      return RedisStore.builder().uri(env.getRequiredProperty("test.redis-uri"))
          .keyPrefix("headroom-health-test:").failurePolicy(FailurePolicy.FALLBACK).build();
    }
  }

  final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  final List<AutoCloseable> open = new ArrayList<>();
  URI base;

  @AfterEach
  void close() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  void start(Class<?> app, WebApplicationType type, String... properties) {
    List<String> p = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1",
        "spring.main.banner-mode=off", "management.endpoints.web.exposure.include=health",
        "management.endpoint.health.show-details=always", "management.endpoint.health.probes.enabled=true",
        "headroom.policies.items.quota=5", "headroom.policies.items.window=60s",
        "headroom.routes[0].path=/api/items", "headroom.routes[0].policies[0]=items"));
    p.addAll(List.of(properties));
    ConfigurableApplicationContext context = new SpringApplicationBuilder(app).web(type)
        .properties(p.toArray(String[]::new)).run();
    open.add(context::close);
    base = URI.create("http://127.0.0.1:" + context.getEnvironment().getRequiredProperty("local.server.port"));
  }

  record Reply(int status, JsonNode body) {}

  Reply get(String path) throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    return new Reply(r.statusCode(), r.body().isEmpty() ? JSON.nullNode() : JSON.readTree(r.body()));
  }

  /** Reads {@code path} until {@code done} holds of it (Redis's loss or return is seen asynchronously). */
  Reply awaitReply(String path, Predicate<Reply> done) throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    Reply r = get(path);
    while (!done.test(r) && System.nanoTime() < deadline) {
      Thread.sleep(50);
      r = get(path);
    }
    return r;
  }

  @Test
  void inMemoryStoreIsUpWithItsKeys() throws Exception {
    start(App.class, WebApplicationType.SERVLET);
    assertThat(client.send(HttpRequest.newBuilder(base.resolve("/api/items")).GET().build(),
        HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    Reply h = get("/actuator/health/headroom");
    assertThat(h.status()).isEqualTo(200);
    assertThat(h.body().path("status").asText()).isEqualTo("UP");
    assertThat(h.body().path("details").path("type").asText()).isEqualTo("in-memory");
    assertThat(h.body().path("details").path("keys").asLong()).isEqualTo(1);
  }

  @Test
  void failClosedRedisStoreIsDownAndNotReadyWhileRedisIsGone() throws Exception {
    RedisProcess redis = RedisProcess.launch();
    open.add(redis);
    start(App.class, WebApplicationType.SERVLET, "headroom.store.type=redis",
        "headroom.store.redis-uri=" + redis.uri(),
        "headroom.store.on-failure=refuse");
    Reply up = get("/actuator/health/headroom");
    assertThat(up.status()).isEqualTo(200);
    assertThat(up.body().path("status").asText()).isEqualTo("UP");
    assertThat(up.body().path("details").path("uri").asText()).isEqualTo("redis://127.0.0.1:" + redis.port());
    assertThat(up.body().path("details").path("whenRedisCannotDecide").asText()).isEqualTo("refuse");
    // the probes' readiness group shows no components: its status tells that headroom is a member
    assertThat(get("/actuator/health/readiness").status()).isEqualTo(200);

    redis.stop();
    Reply down = awaitReply("/actuator/health/headroom", r -> r.status() != 200);
    assertThat(down.status()).isEqualTo(503);
    assertThat(down.body().path("status").asText()).isEqualTo("DOWN");
    assertThat(down.body().path("details").path("connected").asBoolean()).isFalse();
    Reply ready = get("/actuator/health/readiness");
    assertThat(ready.status()).isEqualTo(503);
    assertThat(ready.body().path("status").asText()).isEqualTo("DOWN");
    assertThat(get("/actuator/health/liveness").status()).isEqualTo(200);
    assertThat(get("/actuator/health").status()).isEqualTo(503);

    redis.start();
    Reply back = awaitReply("/actuator/health/readiness", r -> r.status() == 200);
    assertThat(back.status()).isEqualTo(200);
    assertThat(get("/actuator/health/headroom").body().path("status").asText()).isEqualTo("UP");
  }

  @Test
  void fallbackRedisStoreOfAReactiveApplicationIsDegradedNotDown() throws Exception {
    RedisProcess redis = RedisProcess.launch();
    open.add(redis);
    start(FallbackApp.class, WebApplicationType.REACTIVE, "test.redis-uri=" + redis.uri());
    Reply up = get("/actuator/health/headroom");
    assertThat(up.body().path("status").asText()).isEqualTo("UP");
    assertThat(up.body().path("details").path("whenRedisCannotDecide").asText()).isEqualTo("fallback");
    assertThat(up.body().path("details").has("uri")).isFalse();

    redis.stop();
    Reply degraded = awaitReply("/actuator/health/headroom", r -> !r.body().path("status").asText().equals("UP"));
    assertThat(degraded.status()).isEqualTo(200);
    assertThat(degraded.body().path("status").asText()).isEqualTo("DEGRADED");
    Reply health = get("/actuator/health");
    assertThat(health.status()).isEqualTo(200);
    assertThat(health.body().path("status").asText()).isEqualTo("UP");
    assertThat(health.body().path("components").path("headroom").path("status").asText()).isEqualTo("DEGRADED");
    assertThat(get("/actuator/health/readiness").status()).isEqualTo(200);
  }
}
