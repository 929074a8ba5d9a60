package dev.headroom.spring.boot.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Store;
import dev.headroom.conformance.HealthProbe;
import dev.headroom.conformance.RedisProcess;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.RedisStore;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
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

  final List<AutoCloseable> open = new ArrayList<>();
  HealthProbe probe;

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
    probe = new HealthProbe(URI.create("http://127.0.0.1:"
        + context.getEnvironment().getRequiredProperty("local.server.port")));
  }

  @Test
  void inMemoryStoreIsUpWithItsKeys() throws Exception {
    start(App.class, WebApplicationType.SERVLET);
    assertThat(probe.status("/api/items")).isEqualTo(200);
    HealthProbe.Reply h = probe.get("/actuator/health/headroom");
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
    probe.failsClosedWhileGone(redis);
  }

  @Test
  void fallbackRedisStoreOfAReactiveApplicationIsDegradedNotDown() throws Exception {
    RedisProcess redis = RedisProcess.launch();
    open.add(redis);
    start(FallbackApp.class, WebApplicationType.REACTIVE, "test.redis-uri=" + redis.uri());
    assertThat(probe.get("/actuator/health/headroom").body().path("details").has("uri")).isFalse();
    probe.degradedWhileGone(redis, "fallback");
  }
}
