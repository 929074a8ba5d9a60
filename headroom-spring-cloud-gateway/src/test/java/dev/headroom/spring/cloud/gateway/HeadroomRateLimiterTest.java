package dev.headroom.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.Lease;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.Store;
import dev.headroom.StoreException;
import dev.headroom.conformance.SpecFixture;
import dev.headroom.conformance.SpecUpstream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@link HeadroomRateLimiter} in Spring Cloud Gateway's {@code RequestRateLimiter}, on a real
 * Spring Cloud Gateway application (Netty, a loopback port) in front of a real upstream: the
 * fields of draft-ietf-httpapi-ratelimit-headers-09 (sections 3, 4) on every answer, a refusal's
 * {@code Retry-After} equal to the violated policy's {@code t} (section 6), other dialects, named
 * policies, the Java DSL, the Redis store, and a store that cannot decide.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HeadroomRateLimiterTest {

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

  /** A manual clock, so that {@code t} is the whole window. */
  @Configuration(proxyBeanMethods = false)
  static class ManualClock {
    @Bean
    ManualTicker ticker() {
      return ManualTicker.atFixedInstant();
    }
  }

  /** A route from the Java DSL with the rate limiter configured in code. */
  @Configuration(proxyBeanMethods = false)
  static class DslRoute {
    @Bean
    RouteLocator dslRoutes(RouteLocatorBuilder routes, @Value("${spec.upstream}") String upstream) {
      return routes.routes()
          .route("dsl", r -> r.path("/spec/items/**")
              .filters(f -> f.requestRateLimiter()
                  .rateLimiter(HeadroomRateLimiter.class, (HeadroomRateLimiter.Config c) -> c.setQuota(1L).setWindow("2m"))
                  .and())
              .uri(upstream))
          .build();
    }
  }

  private Map<String, Object> route(String id, String path, Map<String, Object> args) {
    Map<String, Object> p = new HashMap<>();
    String r = "spring.cloud.gateway.server.webflux.routes[0]";
    p.put(r + ".id", id);
    p.put(r + ".uri", "http://127.0.0.1:" + upstream.port());
    p.put(r + ".predicates[0]", "Path=" + path);
    p.put(r + ".filters[0].name", "RequestRateLimiter");
    p.put(r + ".filters[0].args.key-resolver", "#{@apiKeyResolver}");
    args.forEach((k, v) -> p.put(r + ".filters[0].args." + k, v));
    return p;
  }

  private HttpResponse<String> get(URI base, String path, String key) throws Exception {
    return client.send(HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT).header("X-Api-Key", key).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String header(HttpResponse<?> r, String name) {
    return r.headers().firstValue(name).orElse(null);
  }

  @Test
  void inlinePolicyAnswersWithIetfFieldsAndRefusesWithRetryAfterEqualToT_draft09_sections3_4_6() throws Exception {
    try (GatewayApp.Running app = GatewayApp.start(route("limited", "/spec/**",
        Map.of("headroom-rate-limiter.quota", "2", "headroom-rate-limiter.window", "60s")), ManualClock.class)) {
      String key = "k-" + UUID.randomUUID();
      HttpResponse<String> first = get(app.base(), "/spec/free", key);
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.body()).isEqualTo("ok");
      assertThat(header(first, "RateLimit-Policy")).isEqualTo("\"limited\";q=2;w=60");
      assertThat(header(first, "RateLimit")).isEqualTo("\"limited\";r=1;t=60");
      assertThat(header(first, "Retry-After")).isNull();
      assertThat(header(get(app.base(), "/spec/free", key), "RateLimit")).isEqualTo("\"limited\";r=0;t=60");
      HttpResponse<String> refused = get(app.base(), "/spec/free", key);
      assertThat(refused.statusCode()).isEqualTo(429);
      assertThat(header(refused, "Retry-After")).isEqualTo("60");
      assertThat(header(refused, "RateLimit")).isEqualTo("\"limited\";r=0;t=60");
      assertThat(header(refused, "RateLimit-Policy")).isEqualTo("\"limited\";q=2;w=60");
      // another key is another partition
      assertThat(get(app.base(), "/spec/free", "k-" + UUID.randomUUID()).statusCode()).isEqualTo(200);
      // the window ends: allowed again
      app.bean(ManualTicker.class).advance(Duration.ofSeconds(60));
      assertThat(header(get(app.base(), "/spec/free", key), "RateLimit")).isEqualTo("\"limited\";r=1;t=60");
    }
  }

  @Test
  void aNamedPolicyInAnotherDialect_draft07() throws Exception {
    Map<String, Object> p = new HashMap<>(route("named", "/spec/**",
        Map.of("headroom-rate-limiter.policy", "per-key", "headroom-rate-limiter.dialect", "draft-07")));
    p.put("headroom.cloud-gateway.policies.per-key.quota", "3");
    p.put("headroom.cloud-gateway.policies.per-key.window", "1m");
    p.put("headroom.cloud-gateway.policies.per-key.algorithm", "fixed-window");
    try (GatewayApp.Running app = GatewayApp.start(p, ManualClock.class)) {
      String key = "k-" + UUID.randomUUID();
      HttpResponse<String> first = get(app.base(), "/spec/free", key);
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(header(first, "RateLimit")).isEqualTo("limit=3, remaining=2, reset=60");
      assertThat(header(first, "RateLimit-Policy")).isEqualTo("3;w=60");
    }
  }

  @Test
  void costAndXRateLimitFromTheRoutesArguments() throws Exception {
    try (GatewayApp.Running app = GatewayApp.start(route("costly", "/spec/**", Map.of("headroom-rate-limiter.quota", "10",
        "headroom-rate-limiter.cost", "4", "headroom-rate-limiter.dialect", "x-ratelimit,ietf")), ManualClock.class)) {
      String key = "k-" + UUID.randomUUID();
      HttpResponse<String> first = get(app.base(), "/spec/free", key);
      assertThat(header(first, "X-RateLimit-Limit")).isEqualTo("10");
      assertThat(header(first, "X-RateLimit-Remaining")).isEqualTo("6");
      assertThat(header(first, "RateLimit")).isEqualTo("\"costly\";r=6;t=60");
      assertThat(get(app.base(), "/spec/free", key).statusCode()).isEqualTo(200);
      assertThat(get(app.base(), "/spec/free", key).statusCode()).isEqualTo(429);
    }
  }

  @Test
  void theJavaDslConfiguresTheRateLimiterInCode() throws Exception {
    try (GatewayApp.Running app = GatewayApp.start(Map.of("spec.upstream", "http://127.0.0.1:" + upstream.port()),
        ManualClock.class, DslRoute.class)) {
      String key = "k-" + UUID.randomUUID();
      HttpResponse<String> first = get(app.base(), "/spec/items/1", key);
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(header(first, "RateLimit")).isEqualTo("\"dsl\";r=0;t=120");
      HttpResponse<String> refused = get(app.base(), "/spec/items/1", key);
      assertThat(refused.statusCode()).isEqualTo(429);
      assertThat(header(refused, "Retry-After")).isEqualTo("120");
    }
  }

  @Test
  void theRedisStoreDecidesForEveryInstance() throws Exception {
    Map<String, Object> p = new HashMap<>(route("shared", "/spec/**",
        Map.of("headroom-rate-limiter.quota", "2", "headroom-rate-limiter.window", "1h")));
    p.put("headroom.cloud-gateway.store.type", "redis");
    p.put("headroom.cloud-gateway.store.key-prefix", "headroom-scg-test:" + UUID.randomUUID() + ":");
    try (GatewayApp.Running one = GatewayApp.start(p); GatewayApp.Running two = GatewayApp.start(p)) {
      String key = "k-" + UUID.randomUUID();
      assertThat(header(get(one.base(), "/spec/free", key), "RateLimit")).startsWith("\"shared\";r=1;t=");
      assertThat(header(get(two.base(), "/spec/free", key), "RateLimit")).startsWith("\"shared\";r=0;t=");
      HttpResponse<String> refused = get(one.base(), "/spec/free", key);
      assertThat(refused.statusCode()).isEqualTo(429);
      assertThat(Long.parseLong(header(refused, "Retry-After"))).isBetween(1L, 3600L);
    }
  }

  /** A store that cannot decide anything. */
  @Configuration(proxyBeanMethods = false)
  static class FailingStore {
    @Bean
    Store failingStore() {
      return new Store() {
        @Override
        public Decision acquire(List<Acquisition> acquisitions) {
          throw new StoreException("the test's store never decides");
        }

        @Override
        public void charge(Acquisition acquisition) {}

        @Override
        public void refund(Acquisition acquisition) {}

        @Override
        public void release(Lease lease) {}
      };
    }
  }

  @Test
  void aStoreThatCannotDecideLetsThroughOrRefusesWithTheSharedRetryAfter() throws Exception {
    Map<String, Object> p = route("fragile", "/spec/**", Map.of("headroom-rate-limiter.quota", "2"));
    try (GatewayApp.Running app = GatewayApp.start(p, FailingStore.class)) {
      HttpResponse<String> r = get(app.base(), "/spec/free", "k-1");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(header(r, "RateLimit")).isNull();
    }
    Map<String, Object> refusing = new HashMap<>(p);
    refusing.put("headroom.cloud-gateway.store.on-failure", "refuse");
    try (GatewayApp.Running app = GatewayApp.start(refusing, FailingStore.class)) {
      HttpResponse<String> r = get(app.base(), "/spec/free", "k-1");
      assertThat(r.statusCode()).isEqualTo(429);
      assertThat(header(r, "Retry-After")).isEqualTo("2");
    }
  }

  @Test
  void aRefusalMemoryOutOfRangeStopsStartupNamingTheProperty() {
    assertThat(startupFailure("headroom.cloud-gateway.store.refusal-memory", "2h").getMessage())
        .contains("headroom.cloud-gateway.store.refusal-memory").contains("PT2H")
        .contains("from 0 (every request to Redis) to 1h");
  }

  @Test
  void aDecisionDeadlineOutOfRangeStopsStartupNamingTheProperty() {
    assertThat(startupFailure("headroom.cloud-gateway.store.decision-deadline", "2m").getMessage())
        .contains("headroom.cloud-gateway.store.decision-deadline").contains("PT2M").contains("from 1ms to 1m");
  }

  /** The configuration exception a Redis-store gateway with {@code property} set to {@code value} fails to start with. */
  private static CloudGatewayConfigurationException startupFailure(String property, String value) {
    Map<String, Object> p = new HashMap<>();
    p.put("headroom.cloud-gateway.store.type", "redis");
    p.put(property, value);
    Throwable failure = Assertions.catchThrowable(() -> GatewayApp.start(p).close());
    CloudGatewayConfigurationException cause = null;
    for (Throwable c = failure; c != null; c = c.getCause()) {
      if (c instanceof CloudGatewayConfigurationException) {
        cause = (CloudGatewayConfigurationException) c;
      }
    }
    assertThat(cause).as("a CloudGatewayConfigurationException in %s", failure).isNotNull();
    return cause;
  }

  @Test
  void aRouteArgumentThatCannotBeUsedIsNamedWithItsValueAndWhatIsExpected() {
    HeadroomRateLimiter.Config c = new HeadroomRateLimiter.Config().setQuota(5L).setAlgorithm("leaky");
    HeadroomRateLimiter limiter = HeadroomRateLimiter.of(QuotaLimiter.of(InMemoryStore.builder().build()),
        List.of(), null);
    limiter.getConfig().put("r1", c);
    assertThatThrownBy(() -> limiter.isAllowed("r1", "k").block(TIMEOUT))
        .isInstanceOf(CloudGatewayConfigurationException.class)
        .hasMessageContaining("headroom-rate-limiter.algorithm").hasMessageContaining("'leaky'")
        .hasMessageContaining("token-bucket");
    limiter.getConfig().put("r2", new HeadroomRateLimiter.Config().setPolicy("nowhere"));
    assertThatThrownBy(() -> limiter.isAllowed("r2", "k").block(TIMEOUT))
        .hasMessageContaining("headroom-rate-limiter.policy").hasMessageContaining("'nowhere'");
    limiter.getConfig().put("r3", new HeadroomRateLimiter.Config().setQuota(5L).setWindow("soon"));
    assertThatThrownBy(() -> limiter.isAllowed("r3", "k").block(TIMEOUT))
        .hasMessageContaining("headroom-rate-limiter.window").hasMessageContaining("'soon'").hasMessageContaining("60s");
    limiter.getConfig().put("r4", new HeadroomRateLimiter.Config().setQuota(5L).setDialect(List.of("draft-99")));
    assertThatThrownBy(() -> limiter.isAllowed("r4", "k").block(TIMEOUT))
        .hasMessageContaining("headroom-rate-limiter.dialect").hasMessageContaining("'draft-99'");
    assertThatThrownBy(() -> limiter.isAllowed("unconfigured", "k").block(TIMEOUT))
        .hasMessageContaining("routes[id=unconfigured]");
  }
}
