package dev.headroom.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.Ticker;
import dev.headroom.conformance.SpecFixture;
import dev.headroom.conformance.SpecUpstream;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.webflux.ReactiveUserResolver;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
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
 * The {@code Headroom} filter from the Java DSL ({@code RouteLocatorBuilder}) as well as from
 * properties ({@link CloudGatewaySpecTest} covers those), and its arguments' errors, which name the
 * argument, the value and what is expected.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HeadroomFilterTest {

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

  /** A route of the Java DSL with the Headroom filter, and a manual clock. */
  @Configuration(proxyBeanMethods = false)
  static class DslRoute {
    @Bean
    ManualTicker ticker() {
      return ManualTicker.atFixedInstant();
    }

    @Bean
    RouteLocator dslRoutes(RouteLocatorBuilder routes, HeadroomGatewayFilterFactory headroom,
        @Value("${spec.upstream}") String upstream) {
      return routes.routes()
          .route("dsl-items", r -> r.path("/spec/items/{id}")
              .filters(f -> f.filter(headroom.apply("dsl-items", c -> c.setPolicies(List.of("two"))
                  .setPath("/spec/items/{id}").setMethods(List.of("GET")).setDialects(List.of("ietf", "x-ratelimit")))))
              .uri(upstream))
          .build();
    }
  }

  @Test
  void theJavaDslGivesARouteTheWholeBehaviour() throws Exception {
    Map<String, Object> p = new HashMap<>();
    p.put("spec.upstream", "http://127.0.0.1:" + upstream.port());
    p.put("headroom.cloud-gateway.policies.two.quota", "2");
    p.put("headroom.cloud-gateway.policies.two.partitioning", "api-key");
    try (GatewayApp.Running app = GatewayApp.start(p, DslRoute.class)) {
      String key = "k-" + UUID.randomUUID();
      HttpRequest req = HttpRequest.newBuilder(app.base().resolve("/spec/items/1")).timeout(TIMEOUT)
          .header("X-Api-Key", key).build();
      HttpResponse<String> first = client.send(req, HttpResponse.BodyHandlers.ofString());
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.headers().firstValue("RateLimit")).hasValue("\"two\";r=1;t=60");
      assertThat(first.headers().firstValue("X-RateLimit-Remaining")).hasValue("1");
      client.send(req, HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> refused = client.send(req, HttpResponse.BodyHandlers.ofString());
      assertThat(refused.statusCode()).isEqualTo(429);
      assertThat(refused.headers().firstValue("Retry-After")).hasValue("60");
      JsonNode body = new ObjectMapper().readTree(refused.body());
      assertThat(body.path("violated-policies").get(0).asText()).isEqualTo("two");
      assertThat(body.path("retryAfterSeconds").asLong()).isEqualTo(60);
      HttpResponse<String> doc = client.send(HttpRequest.newBuilder(app.base().resolve("/api/limits")).timeout(TIMEOUT).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(new ObjectMapper().readTree(doc.body()).path("limits").path("dsl-items").path("endpoint").asText())
          .isEqualTo("/spec/items/{id}");
    }
  }

  @Test
  void anArgumentThatCannotBeUsedIsNamedWithItsValueAndWhatIsExpected() {
    CloudGatewayProperties props = new CloudGatewayProperties();
    CloudGatewayProperties.Policy one = new CloudGatewayProperties.Policy();
    one.setQuota(5L);
    props.getPolicies().put("one", one);
    HeadroomGatewayFilterFactory factory = new HeadroomGatewayFilterFactory(
        new HeadroomRoutes(b -> b.limiter(QuotaLimiter.inMemory())
            .refusals(LimitRefusals.builder().ticker(Ticker.system())
                .defaults(PolicyTexts.builder("why").build()).build()), Map.of(), Map.of(),
            ReactiveUserResolver.principal()),
        PolicyCatalog.from(props), QuotaLimiter.inMemory());
    assertThatThrownBy(() -> factory.apply("r", c -> c.setPolicies(List.of("nowhere"))))
        .hasMessageContaining("routes[id=r].filters[Headroom].policies").hasMessageContaining("'nowhere'")
        .hasMessageContaining("[one]");
    assertThatThrownBy(() -> factory.apply("r", c -> c.setPolicies(List.of())))
        .hasMessageContaining(".policies").hasMessageContaining("one or more");
    assertThatThrownBy(() -> factory.apply("r", c -> c.setPolicies(List.of("one")).setDialects(List.of("draft-99"))))
        .hasMessageContaining(".dialects").hasMessageContaining("'draft-99'");
    assertThatThrownBy(() -> factory.apply("r", c -> c.setPolicies(List.of("one")).setJitter("soon")))
        .hasMessageContaining(".jitter").hasMessageContaining("'soon'");
    assertThatThrownBy(() -> factory.apply("r", c -> c.setPolicies(List.of("one")).setOnlyNearExhaustion(2.0)))
        .hasMessageContaining(".only-near-exhaustion").hasMessageContaining("'2.0'");
    assertThatThrownBy(() -> factory.apply(c -> c.setPolicies(List.of("one"))))
        .hasMessageContaining("route id");
  }
}
