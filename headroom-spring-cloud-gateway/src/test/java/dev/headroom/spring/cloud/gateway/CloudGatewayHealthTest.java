package dev.headroom.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.conformance.RedisProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code headroom} health contributor of a real started Spring Cloud Gateway application
 * (HeadroomCloudGatewayHealthAutoConfiguration), through {@code /actuator/health/headroom} and the
 * probes' groups, with a redis-server of the test's own that it kills and starts again on the same
 * port: a fail-closed store ({@code on-failure: refuse}) is {@code UP}, then {@code DOWN} (503)
 * while Redis is gone, and the readiness group, which it joins of itself, answers 503 until Redis
 * is back; a store that admits what it cannot decide is {@code DEGRADED}, which is 200 and leaves
 * the overall status and readiness {@code UP}. An in-memory store is {@code UP} with its keys.
 */
class CloudGatewayHealthTest {

  static final Duration TIMEOUT = Duration.ofSeconds(30);
  static final ObjectMapper JSON = new ObjectMapper();

  final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  final List<AutoCloseable> open = new ArrayList<>();
  URI base;

  @AfterEach
  void close() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  void start(Map<String, Object> properties) {
    Map<String, Object> p = new HashMap<>(Map.of("management.endpoints.web.exposure.include", "health",
        "management.endpoint.health.show-details", "always", "management.endpoint.health.probes.enabled", "true"));
    p.putAll(properties);
    GatewayApp.Running app = GatewayApp.start(p);
    open.add(app);
    base = app.base();
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
  void inMemoryStoreIsUp() throws Exception {
    start(Map.of());
    Reply h = get("/actuator/health/headroom");
    assertThat(h.status()).isEqualTo(200);
    assertThat(h.body().path("status").asText()).isEqualTo("UP");
    assertThat(h.body().path("details").path("type").asText()).isEqualTo("in-memory");
    assertThat(h.body().path("details").path("maxKeys").asLong()).isPositive();
  }

  @Test
  void failClosedRedisStoreIsDownAndNotReadyWhileRedisIsGone() throws Exception {
    RedisProcess redis = RedisProcess.launch();
    open.add(redis);
    start(Map.of("headroom.cloud-gateway.store.type", "redis", "headroom.cloud-gateway.store.redis-uri", redis.uri(),
        "headroom.cloud-gateway.store.on-failure", "refuse"));
    Reply up = get("/actuator/health/headroom");
    assertThat(up.status()).isEqualTo(200);
    assertThat(up.body().path("status").asText()).isEqualTo("UP");
    assertThat(up.body().path("details").path("type").asText()).isEqualTo("redis");
    assertThat(up.body().path("details").path("uri").asText()).isEqualTo("redis://127.0.0.1:" + redis.port());
    assertThat(up.body().path("details").path("whenRedisCannotDecide").asText()).isEqualTo("refuse");
    assertThat(get("/actuator/health/readiness").status()).isEqualTo(200);

    redis.stop();
    Reply down = awaitReply("/actuator/health/headroom", r -> r.status() != 200);
    assertThat(down.status()).isEqualTo(503);
    assertThat(down.body().path("status").asText()).isEqualTo("DOWN");
    assertThat(down.body().path("details").path("connected").asBoolean()).isFalse();
    // the probes' readiness group shows no components: its status tells that headroom is a member
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
  void redisStoreThatAdmitsIsDegradedNotDownAndStaysReady() throws Exception {
    RedisProcess redis = RedisProcess.launch();
    open.add(redis);
    start(Map.of("headroom.cloud-gateway.store.type", "redis", "headroom.cloud-gateway.store.redis-uri", redis.uri()));
    Reply up = get("/actuator/health/headroom");
    assertThat(up.body().path("status").asText()).isEqualTo("UP");
    assertThat(up.body().path("details").path("whenRedisCannotDecide").asText()).isEqualTo("admit");

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
