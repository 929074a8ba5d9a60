package dev.headroom.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.plan.Plan;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.PlanResolver;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.enforcement.plan.PolicyOverride;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Plans in the servlet filter, on Tomcat over real sockets: the resolver's plan is enforced
 * (RateLimit-Policy names it), a resolver that hangs or throws gives the fallback plan, a rejected
 * credential is 401 with a Graceful Boundaries body, and the discovery document lists each plan.
 */
class PlansFilterTest {
  static final QuotaPolicy API = QuotaPolicy.builder("api").quota(100).window(Duration.ofMinutes(1)).build();
  TomcatWithFilter tomcat;
  HeadroomFilter filter;

  /** Plan from X-Plan; "hang" never answers, "boom" throws, "bad" is an invalid credential. */
  static final PlanResolver RESOLVER = view -> {
    String p = view.headers("X-Plan").stream().findFirst().orElse("");
    return switch (p) {
      case "" -> CompletableFuture.completedFuture(PlanResolution.anonymous());
      case "hang" -> new CompletableFuture<>();
      case "boom" -> throw new IllegalStateException("resolver defect");
      case "bad" -> CompletableFuture.completedFuture(new PlanResolution.Rejected("invalid_token",
          "The bearer token expired.", "The plan is read from a signed token."));
      default -> CompletableFuture.completedFuture(new PlanResolution.Named(p));
    };
  };

  @BeforeEach
  void start() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    Plans plans = Plans.of(List.of(
        new Plan("free", Map.of("api", PolicyOverride.quota(1)), Optional.of("/pricing#free")),
        new Plan("pro", Map.of("api", PolicyOverride.quota(5)), Optional.of("/pricing#pro"))), "free", List.of(API));
    filter = HeadroomFilter.builder()
        .limiter(QuotaLimiter.inMemory())
        .refusals(plans.speakAsBases(LimitRefusals.builder().ticker(ticker)
            .defaults(PolicyTexts.builder("Limits keep the service fair.").build())).build())
        .route(Route.builder("/a").policy(API).build())
        .plans(plans, RESOLVER, Duration.ofMillis(200))
        .discovery("Plans", "Plans in the filter")
        .ticker(ticker)
        .build();
    tomcat = new TomcatWithFilter(filter);
  }

  @AfterEach
  void stop() throws Exception {
    tomcat.close();
  }

  HttpResponse<String> get(String path, String plan) throws Exception {
    return tomcat.get(path, plan == null ? null : "X-Plan", plan);
  }

  @Test
  void theResolversPlanIsEnforced() throws Exception {
    assertThat(get("/a", "pro").headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:pro\";q=5");
    assertThat(get("/a", null).headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:free\";q=1");
    HttpResponse<String> refused = get("/a", null);
    assertThat(refused.statusCode()).isEqualTo(429);
    // a refusal under free points at the next plan (Graceful Boundaries section 3)
    assertThat(new ObjectMapper().readTree(refused.body()).path("upgradeUrl").asText()).isEqualTo("/pricing#pro");
    assertThat(get("/a", "platinum").statusCode()).isEqualTo(429); // unknown plan: the fallback, exhausted
  }

  @Test
  void aResolverThatHangsOrThrowsGivesTheFallbackPlan() throws Exception {
    HttpResponse<String> hung = get("/a", "hang");
    assertThat(hung.statusCode()).isEqualTo(200);
    assertThat(hung.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:free\"");
    assertThat(get("/a", "boom").statusCode()).isEqualTo(429); // same partition, free plan spent
  }

  @Test
  void aRejectedCredentialIs401WithAStructuredBody() throws Exception {
    HttpResponse<String> r = get("/a", "bad");
    assertThat(r.statusCode()).isEqualTo(401);
    assertThat(r.headers().firstValue("WWW-Authenticate")).hasValue("Bearer error=\"invalid_token\"");
    JsonNode body = new ObjectMapper().readTree(r.body());
    assertThat(body.path("error").asText()).isEqualTo("invalid_token");
    assertThat(body.path("detail").asText()).isEqualTo("The bearer token expired.");
    assertThat(body.path("why").asText()).isNotBlank();
  }

  @Test
  void limitsChangeAtRunTimeWithoutARestart() throws Exception {
    // the configured policy changes; the plans' quotas follow it (aRunTimeChangeOfTheBaseReachesEveryPlan)
    assertThat(filter.limits().current().get("api").quota()).isEqualTo(100);
    filter.limits().set("api", 3, Optional.of(Duration.ofSeconds(30)));
    assertThat(filter.limits().current().get("api").quota()).isEqualTo(3);
    JsonNode doc = new ObjectMapper().readTree(get("/.well-known/limits", null).body());
    assertThat(doc.path("plans").get(0).path("limits").get(0).path("policy").asText()).isEqualTo("api:free");
    assertThatThrownBy(() -> filter.limits().set("nope", 3, Optional.empty()))
        .hasMessageStartingWith("policy: 'nope' is not a policy of the filter's routes");
    assertThatThrownBy(() -> filter.limits().set("api", 0, Optional.empty())).hasMessageContaining("quota");
    filter.limits().reset("api");
    assertThat(filter.limits().current().get("api").quota()).isEqualTo(100);
  }

  /**
   * The rule of {@code RuntimeLimits} and {@code Plans.policy}: a plan's overridden quota keeps its
   * ratio to the base quota; a capacity reduction of the base reduces each plan's version (503
   * temporary-reduced-capacity, draft-ietf-httpapi-ratelimit-headers-09 section 5.2).
   */
  @Test
  void aRunTimeChangeOfTheBaseReachesEveryPlan() throws Exception {
    filter.limits().set("api", 200, Optional.empty()); // twice the configured 100
    assertThat(filter.limits().plans().get("api:pro").quota()).isEqualTo(10);
    assertThat(filter.limits().plans().get("api:free").quota()).isEqualTo(2);
    assertThat(get("/a", "pro").headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:pro\";q=10");
    JsonNode doc = new ObjectMapper().readTree(get("/.well-known/limits", null).body());
    assertThat(doc.path("plans").get(1).path("limits").get(0).path("maxRequests").asLong()).isEqualTo(10);

    filter.reduceCapacity("api", 0.5);
    HttpResponse<String> reduced = get("/a", "pro");
    assertThat(reduced.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:pro\";q=5");
    int served = 2; // at 10 and at 5: at most 5 in all now, on the same counters
    HttpResponse<String> refused = get("/a", "pro");
    while (refused.statusCode() == 200 && served < 10) {
      served++;
      refused = get("/a", "pro");
    }
    assertThat(served).isLessThanOrEqualTo(5);
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(refused.body()).contains("reduced capacity");

    filter.reduceCapacity("api", 1);
    filter.limits().reset("api");
    assertThat(filter.limits().plans().get("api:pro").quota()).isEqualTo(5);
    assertThat(get("/a", "pro").headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:pro\";q=5");
  }

  @Test
  void discoveryListsEachPlan() throws Exception {
    JsonNode doc = new ObjectMapper().readTree(get("/.well-known/limits", null).body());
    assertThat(doc.path("fallbackPlan").asText()).isEqualTo("free");
    assertThat(doc.path("plans").get(1).path("limits").get(0).path("maxRequests").asLong()).isEqualTo(5);
  }
}
