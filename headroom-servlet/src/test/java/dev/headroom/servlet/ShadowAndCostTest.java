package dev.headroom.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.GateListener;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A route's cost (fixed, or from a request header bounded by a maximum: 400 beyond it, Graceful
 * Boundaries section 6) and shadow policies (decided, reported, never refusing) in the servlet
 * filter, on Tomcat over real sockets.
 */
class ShadowAndCostTest {

  @Test
  void costAndShadow() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    QuotaPolicy units = QuotaPolicy.builder("units").quota(10).window(Duration.ofMinutes(1)).algorithm(Algorithm.FIXED_WINDOW).build();
    QuotaPolicy trial = QuotaPolicy.builder("trial").quota(1).window(Duration.ofMinutes(1)).algorithm(Algorithm.FIXED_WINDOW).build();
    List<Decision> shadowed = new CopyOnWriteArrayList<>();
    HeadroomFilter filter = HeadroomFilter.builder().limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Limits keep the service fair.").build()).build())
        .route(Route.builder("/five").policy(units).cost(5).build())
        .route(Route.builder("/stated").policy(units).costHeader("X-Cost", 4).shadowPolicy(trial).build())
        .listener(new GateListener() {
          @Override
          public void decided(RouteRules route, Decision decision) {}

          @Override
          public void shadowDecided(RouteRules route, Decision decision) {
            shadowed.add(decision);
          }
        })
        .ticker(ticker).build();
    try (TomcatWithFilter tomcat = new TomcatWithFilter(filter)) {
      assertThat(tomcat.get("/five", null, null).headers().firstValue("RateLimit").orElseThrow()).contains("r=5");
      assertThat(tomcat.get("/stated", "X-Cost", "1").headers().firstValue("RateLimit").orElseThrow()).contains("r=4");
      HttpResponse<String> bad = tomcat.get("/stated", "X-Cost", "5");
      assertThat(bad.statusCode()).isEqualTo(400);
      JsonNode body = new ObjectMapper().readTree(bad.body());
      assertThat(body.path("error").asText()).isEqualTo("invalid_cost");
      assertThat(body.path("field").asText()).isEqualTo("X-Cost");
      // the shadow policy (quota 1) would refuse the second request: it goes through
      HttpResponse<String> second = tomcat.get("/stated", "X-Cost", "1");
      assertThat(second.statusCode()).isEqualTo(200);
      assertThat(second.headers().firstValue("RateLimit-Policy").orElseThrow()).doesNotContain("trial");
      assertThat(shadowed).hasSize(2);
      assertThat(shadowed.get(0).allowed()).isTrue();
      assertThat(shadowed.get(1).allowed()).isFalse();
    }
  }

  @Test
  void aRouteCountingOnlyFailuresGivesSuccessesBack() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    QuotaPolicy login = QuotaPolicy.builder("login").quota(2).window(Duration.ofMinutes(1)).algorithm(Algorithm.FIXED_WINDOW).build();
    HeadroomFilter filter = HeadroomFilter.builder().limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Limits keep the service fair.").build()).build())
        .route(Route.builder("/status/{code}").policy(login).counting(RouteRules.Counting.FAILURES).build())
        .ticker(ticker).build();
    try (TomcatWithFilter tomcat = new TomcatWithFilter(filter)) {
      for (int i = 0; i < 4; i++) {
        assertThat(tomcat.get("/status/200", null, null).statusCode()).isEqualTo(200);
      }
      assertThat(tomcat.get("/status/401", null, null).statusCode()).isEqualTo(401);
      assertThat(tomcat.get("/status/401", null, null).statusCode()).isEqualTo(401);
      assertThat(tomcat.get("/status/200", null, null).statusCode()).isEqualTo(429);
    }
  }
}
