package dev.headroom.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.conformance.HealthProbe;
import dev.headroom.conformance.RedisProcess;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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

  final List<AutoCloseable> open = new ArrayList<>();
  HealthProbe probe;

  @AfterEach
  void close() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  void start(Map<String, Object> properties) {
    // Spring Data Redis's own health indicator (on the class path for RedisRateLimiter, the peer)
    // pings the shared Redis on 6379, which is not the store's: off, so that the overall status is
    // Headroom's and a busy shared Redis cannot hold /actuator/health past the probe's timeout.
    Map<String, Object> p = new HashMap<>(Map.of("management.endpoints.web.exposure.include", "health",
        "management.endpoint.health.show-details", "always", "management.endpoint.health.probes.enabled", "true",
        "management.health.redis.enabled", "false"));
    p.putAll(properties);
    GatewayApp.Running app = GatewayApp.start(p);
    open.add(app);
    probe = new HealthProbe(app.base());
  }

  @Test
  void inMemoryStoreIsUp() throws Exception {
    start(Map.of());
    HealthProbe.Reply h = probe.get("/actuator/health/headroom");
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
    assertThat(probe.get("/actuator/health/headroom").body().path("details").path("type").asText()).isEqualTo("redis");
    probe.failsClosedWhileGone(redis);
  }

  @Test
  void redisStoreThatAdmitsIsDegradedNotDownAndStaysReady() throws Exception {
    RedisProcess redis = RedisProcess.launch();
    open.add(redis);
    start(Map.of("headroom.cloud-gateway.store.type", "redis", "headroom.cloud-gateway.store.redis-uri", redis.uri()));
    probe.degradedWhileGone(redis, "admit");
  }
}
