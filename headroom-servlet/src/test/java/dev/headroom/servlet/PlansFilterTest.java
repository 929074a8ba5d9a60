package dev.headroom.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.http.plan.Plan;
import dev.headroom.http.plan.PlanResolution;
import dev.headroom.http.plan.PlanResolver;
import dev.headroom.http.plan.Plans;
import dev.headroom.http.plan.PolicyOverride;
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
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Limits keep the service fair.").build())
            .plans(plans).build())
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
    // the configured policy changes; every plan here overrides it, so plan policies stay as they are
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

  @Test
  void discoveryListsEachPlan() throws Exception {
    JsonNode doc = new ObjectMapper().readTree(get("/.well-known/limits", null).body());
    assertThat(doc.path("fallbackPlan").asText()).isEqualTo("free");
    assertThat(doc.path("plans").get(1).path("limits").get(0).path("maxRequests").asLong()).isEqualTo(5);
  }
}
