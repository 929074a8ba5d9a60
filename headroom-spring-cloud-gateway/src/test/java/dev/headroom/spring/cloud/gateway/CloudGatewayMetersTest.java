package dev.headroom.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.conformance.SpecFixture;
import dev.headroom.conformance.SpecUpstream;
import dev.headroom.enforcement.HeadroomMeters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Both Headroom front ends of a real Spring Cloud Gateway application ({@code RequestRateLimiter}
 * with {@link HeadroomRateLimiter}, and the {@code Headroom} filter) record the meters of
 * headroom-enforcement's {@code HeadroomMeters} in the application's {@code MeterRegistry}, under
 * the names and tags the servlet and WebFlux filters use: scripted traffic, then the registry read.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CloudGatewayMetersTest {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  private SpecUpstream upstream;

  @BeforeAll
  void upstream() throws Exception {
    upstream = SpecUpstream.start(new SpecFixture());
  }

  @AfterAll
  void stopUpstream() {
    upstream.close();
  }

  /** The application's registry, as Spring Boot's actuator would make it. */
  @Configuration(proxyBeanMethods = false)
  static class Registry {
    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  /** A RequestRateLimiter route (policy {@code limited}, 2 a minute) and a Headroom filter route (policy {@code two}). */
  private Map<String, Object> routes() {
    Map<String, Object> p = new HashMap<>();
    String r = "spring.cloud.gateway.server.webflux.routes[0].";
    p.put(r + "id", "limited");
    p.put(r + "uri", "http://127.0.0.1:" + upstream.port());
    p.put(r + "predicates[0]", "Path=/spec/free");
    p.put(r + "filters[0].name", "RequestRateLimiter");
    p.put(r + "filters[0].args.key-resolver", "#{@apiKeyResolver}");
    p.put(r + "filters[0].args.headroom-rate-limiter.quota", "2");
    p.put(r + "filters[0].args.headroom-rate-limiter.window", "60s");
    String h = "spring.cloud.gateway.server.webflux.routes[1].";
    p.put(h + "id", "items");
    p.put(h + "uri", "http://127.0.0.1:" + upstream.port());
    p.put(h + "predicates[0]", "Path=/spec/items/**");
    p.put(h + "filters[0].name", "Headroom");
    p.put(h + "filters[0].args.policies", "two");
    p.put(h + "filters[0].args.path", "/spec/items/{id}");
    p.put("headroom.cloud-gateway.policies.two.quota", "2");
    p.put("headroom.cloud-gateway.policies.two.partitioning", "api-key");
    return p;
  }

  private int get(URI base, String path, String key) throws Exception {
    return client.send(HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT).header("X-Api-Key", key).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private static double decisions(MeterRegistry registry, String policy, String outcome, String problem) {
    Counter c = registry.find(HeadroomMeters.DECISIONS).tag(HeadroomMeters.POLICY, policy)
        .tag(HeadroomMeters.OUTCOME, outcome).tag(HeadroomMeters.PROBLEM, problem).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void bothFrontEndsRecordDecisionsByPolicyOutcomeAndProblemAndTheStoresLatency() throws Exception {
    try (GatewayApp.Running app = GatewayApp.start(routes(), Registry.class)) {
      MeterRegistry registry = app.bean(MeterRegistry.class);
      String key = "k-" + UUID.randomUUID();
      for (int i = 0; i < 3; i++) {
        assertThat(get(app.base(), "/spec/free", key)).isEqualTo(i < 2 ? 200 : 429);
      }
      for (int i = 0; i < 4; i++) {
        assertThat(get(app.base(), "/spec/items/1", key)).isEqualTo(i < 2 ? 200 : 429);
      }

      // RequestRateLimiter: HeadroomRateLimiter's decisions
      assertThat(decisions(registry, "limited", "allowed", HeadroomMeters.NONE)).isEqualTo(2.0);
      assertThat(decisions(registry, "limited", "refused", "quota-exceeded")).isEqualTo(1.0);
      // the Headroom filter: its gate's decisions
      assertThat(decisions(registry, "two", "allowed", HeadroomMeters.NONE)).isEqualTo(2.0);
      assertThat(decisions(registry, "two", "refused", "quota-exceeded")).isEqualTo(2.0);

      // one store latency for every decided request of both front ends
      Timer latency = registry.find(HeadroomMeters.STORE_LATENCY).timer();
      assertThat(latency).isNotNull();
      assertThat(latency.count()).isEqualTo(7);
      assertThat(latency.totalTime(TimeUnit.NANOSECONDS)).isPositive();
      assertThat(registry.find(HeadroomMeters.STORE_FAILURES).counters())
          .allSatisfy(c -> assertThat(c.count()).isZero());
    }
  }

  @Test
  void aStoreThatCannotDecideIsCountedWithTheFallbackApplied() throws Exception {
    Map<String, Object> p = routes();
    try (GatewayApp.Running app = GatewayApp.start(p, Registry.class, HeadroomRateLimiterTest.FailingStore.class)) {
      MeterRegistry registry = app.bean(MeterRegistry.class);
      assertThat(get(app.base(), "/spec/free", "k-1")).isEqualTo(200);
      assertThat(get(app.base(), "/spec/items/1", "k-1")).isEqualTo(200);
      assertThat(registry.find(HeadroomMeters.STORE_FAILURES).tag(HeadroomMeters.FALLBACK, "allow").counter().count())
          .isEqualTo(2.0);
      assertThat(registry.find(HeadroomMeters.STORE_LATENCY).timer().count()).isEqualTo(2);
      assertThat(registry.find(HeadroomMeters.DECISIONS).counters()).isEmpty();
    }
    p.put("headroom.cloud-gateway.store.on-failure", "refuse");
    try (GatewayApp.Running app = GatewayApp.start(p, Registry.class, HeadroomRateLimiterTest.FailingStore.class)) {
      MeterRegistry registry = app.bean(MeterRegistry.class);
      assertThat(get(app.base(), "/spec/free", "k-1")).isEqualTo(429);
      assertThat(get(app.base(), "/spec/items/1", "k-1")).isEqualTo(503);
      assertThat(registry.find(HeadroomMeters.STORE_FAILURES).tag(HeadroomMeters.FALLBACK, "refuse").counter().count())
          .isEqualTo(2.0);
    }
  }

  @Test
  void withoutARegistryNothingIsRecordedAndBothFrontEndsDecide() throws Exception {
    Map<String, Object> p = routes();
    // the actuator (on this module's test class path for the health contributor) makes no registry either
    p.put("spring.autoconfigure.exclude", String.join(",",
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration"));
    try (GatewayApp.Running app = GatewayApp.start(p)) {
      assertThat(app.context().getBeansOfType(MeterRegistry.class)).isEmpty();
      String key = "k-" + UUID.randomUUID();
      assertThat(get(app.base(), "/spec/free", key)).isEqualTo(200);
      assertThat(get(app.base(), "/spec/items/1", key)).isEqualTo(200);
    }
  }
}
