package dev.headroom.enforcement;

import static dev.headroom.enforcement.TestRequests.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The gate every embedded front end writes (issue 20): the blocking and the non-blocking paths give
 * the same verdicts, a route's condition is tested on the front end's own request, and an admitted
 * request's completion releases its lease once. Over HTTP the servlet filter's, the WebFlux
 * filter's and the gateway filter's HttpAdapterSpec runs cover the rest.
 */
class GateTest {
  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
  private final QuotaPolicy perKey = QuotaPolicy.builder("per-key").quota(1).window(Duration.ofMinutes(1))
      .partitioning("api-key").build();
  private final QuotaPolicy slots = QuotaPolicy.builder("slots").quota(1).window(Duration.ofMinutes(1))
      .unit(QuotaUnit.CONCURRENT_REQUESTS).partitioning("api-key").build();
  private final Gate<String> gate = Gate.<String>builder().limiter(limiter)
      .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Fair use.").build()).build())
      .route(RouteRules.builder("/only/{id}").policy(perKey).build(), "yes"::equals)
      .route(RouteRules.builder("/items/{id}").methods("GET").policy(perKey).build())
      .route(RouteRules.builder("/slow").policy(slots).build())
      .discovery("Items", "Items for tests.")
      .build();

  @Test
  void blockingAndNonBlockingDecideAlike() {
    assertThat(gate.decide(request("GET", "/items/1", "a"), "").kind()).isEqualTo(Verdict.Kind.ADMIT);
    Verdict refused = gate.decideAsync(request("GET", "/items/1", "a"), "").toCompletableFuture().join();
    assertThat(refused.kind()).isEqualTo(Verdict.Kind.ANSWER);
    assertThat(refused.answer().status()).isEqualTo(429);
    assertThat(refused.answer().refusal()).isTrue();
    assertThat(refused.answer().fields()).extracting(Map.Entry::getKey).contains("RateLimit", "Retry-After",
        "Cache-Control", "Vary");
    assertThat(gate.decideAsync(request("GET", "/free", "a"), "").toCompletableFuture().join().kind())
        .isEqualTo(Verdict.Kind.PASS);
    assertThat(gate.decide(request("POST", "/items/1", "a"), "").kind()).isEqualTo(Verdict.Kind.PASS);
  }

  @Test
  void aRouteConditionTestsTheFrontEndsOwnRequest() {
    assertThat(gate.decide(request("GET", "/only/1", "b"), "no").kind()).isEqualTo(Verdict.Kind.PASS);
    assertThat(gate.decide(request("GET", "/only/1", "b"), "yes").kind()).isEqualTo(Verdict.Kind.ADMIT);
  }

  @Test
  void discoveryIsAnsweredWithItsEtagAnd304() {
    GateResponse doc = gate.decide(request("GET", "/.well-known/limits", "c"), "").answer();
    assertThat(doc.status()).isEqualTo(200);
    assertThat(doc.refusal()).isFalse();
    assertThat(doc.contentType()).contains("application/json");
    String etag = doc.fields().stream().filter(f -> f.getKey().equals("ETag")).findFirst().orElseThrow().getValue();
    GateRequest conditional = request("GET", "/.well-known/limits", "c", "If-None-Match", etag);
    assertThat(gate.decide(conditional, "").answer().status()).isEqualTo(304);
  }

  @Test
  void completionReleasesTheLeaseOnce() {
    Admission first = gate.decideAsync(request("GET", "/slow", "d"), "").toCompletableFuture().join().admission();
    assertThat(gate.decide(request("GET", "/slow", "d"), "").answer().status()).isEqualTo(429);
    assertThat(first.completeAsync(200, 0).toCompletableFuture()).isCompleted();
    assertThat(first.completeAsync(200, 0).toCompletableFuture()).isCompleted();
    Admission second = gate.decide(request("GET", "/slow", "d"), "").admission();
    second.complete(200, 0);
    assertThat(gate.decide(request("GET", "/slow", "d"), "").kind()).isEqualTo(Verdict.Kind.ADMIT);
  }

  /**
   * The rules the standalone gateway had alone, now the gate's for every front end: a policy that
   * decides some methods only ({@code policies.NAME.when}), one that counts failures only, and a
   * response header that states units charged on top ({@code cost.chargeHeader}).
   */
  @Test
  void aPolicyDecidesOnlyTheMethodsItsRuleNames() {
    QuotaPolicy writes = QuotaPolicy.builder("writes").quota(1).window(Duration.ofMinutes(1)).partitioning("api-key")
        .build();
    Gate<String> g = gateOf(RouteRules.builder("/docs").methods("GET", "POST").policy(writes)
        .when("writes", List.of("post")).build());
    for (int i = 0; i < 3; i++) {
      assertThat(g.decide(request("GET", "/docs", "w"), "").kind()).as("GET %d", i).isEqualTo(Verdict.Kind.PASS);
      assertThat(g.decide(request("HEAD", "/docs", "w"), "").kind()).as("HEAD %d", i).isEqualTo(Verdict.Kind.PASS);
    }
    assertThat(g.decide(request("POST", "/docs", "w"), "").kind()).isEqualTo(Verdict.Kind.ADMIT);
    assertThat(g.decide(request("POST", "/docs", "w"), "").answer().status()).isEqualTo(429);
  }

  @Test
  void aPolicyCountingFailuresGivesBackTheUnitsOfASuccessOnly() {
    QuotaPolicy logins = QuotaPolicy.builder("logins").quota(1).window(Duration.ofMinutes(1)).partitioning("api-key")
        .build();
    QuotaPolicy attempts = QuotaPolicy.builder("attempts").quota(3).window(Duration.ofMinutes(1))
        .partitioning("api-key").build();
    Gate<String> g = gateOf(RouteRules.builder("/login").policy(logins).policy(attempts)
        .counting("logins", RouteRules.Counting.FAILURES).build());
    g.decide(request("POST", "/login", "f"), "").admission().complete(200, 0);
    g.decide(request("POST", "/login", "f"), "").admission().complete(401, 0);
    Verdict third = g.decide(request("POST", "/login", "f"), "");
    assertThat(third.answer().status()).isEqualTo(429);
    assertThat(third.answer().fields()).extracting(Map.Entry::getValue).anyMatch(v -> v.contains("\"logins\";r=0"));
  }

  @Test
  void aChargeHeaderAddsTheUnitsTheResponseStates() {
    QuotaPolicy tokens = QuotaPolicy.builder("tokens").quota(10).window(Duration.ofMinutes(1)).partitioning("api-key")
        .build();
    Gate<String> g = gateOf(RouteRules.builder("/ask").policy(tokens).chargeHeader("X-Units", 100).build());
    g.decide(request("POST", "/ask", "t"), "").admission().complete(200, 0, List.of("6"));
    g.decide(request("POST", "/ask", "t"), "").admission().complete(200, 0, List.of("not a number"));
    Admission third = g.decide(request("POST", "/ask", "t"), "").admission();
    StringBuilder fields = new StringBuilder();
    third.writeFields(200, (name, value) -> fields.append(name).append(": ").append(value).append('\n'));
    assertThat(fields.toString()).contains("\"tokens\";r=1;"); // 10 - (1 + 6) - 1 - 1
  }

  /**
   * A refusal storm on a route of one policy whose fields carry numbers only: everyone refused with
   * the same numbers in the same second gets the same answer, built once (its fields agree with its
   * body, draft-09 section 6: t and Retry-After agree); new numbers, or a new second, make a new one.
   */
  @Test
  void aRefusalStormOnOnePolicyIsAnsweredWithOneKeptAnswerPerSecondAndNumbers() {
    QuotaPolicy one = QuotaPolicy.builder("one").quota(1).window(Duration.ofMinutes(1)).partitioning("api-key")
        .algorithm(Algorithm.FIXED_WINDOW).build();
    Gate<String> g = gateOf(RouteRules.builder("/storm").policy(one).build());
    g.decide(request("GET", "/storm", "a"), "").admission().complete(200, 0);
    g.decide(request("GET", "/storm", "b"), "").admission().complete(200, 0);
    GateResponse first = g.decide(request("GET", "/storm", "a"), "").answer();
    GateResponse again = g.decide(request("GET", "/storm", "b"), "").answer();
    assertThat(first.status()).isEqualTo(429);
    assertThat(again).isSameAs(first);
    ticker.advance(Duration.ofSeconds(1));
    GateResponse later = g.decide(request("GET", "/storm", "a"), "").answer();
    assertThat(later).isNotSameAs(first);
    assertThat(later.fields()).contains(Map.entry("Retry-After", "59"));
    assertThat(first.fields()).contains(Map.entry("Retry-After", "60"));
    assertThat(new String(later.body(), StandardCharsets.UTF_8)).contains("\"retryAfterSeconds\":59");
  }

  /**
   * The discovery document every front end serves says the limits in force: a capacity an operator
   * reduced shows the reduced quota and says it is temporary (draft-09 section 5.2), whether set
   * through the gate or on the shared reductions directly (the gateway's admin), and is restored
   * with it (Graceful Boundaries section 1: the document must not drift from what is enforced).
   */
  @Test
  void theDiscoveryDocumentFollowsCapacityReductions() {
    CapacityReductions shared = new CapacityReductions();
    QuotaPolicy api = QuotaPolicy.builder("api").quota(10).window(Duration.ofMinutes(1)).partitioning("api-key").build();
    Gate<String> g = Gate.<String>builder().limiter(limiter)
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Fair use.").build()).build())
        .state(new Escalations(), shared).route(RouteRules.builder("/api").policy(api).chargeHeader("X-Units", 50).build())
        .discovery("Api", "An API.").build();
    String before = g.discovery().orElseThrow().toJson();
    assertThat(before).contains("\"maxRequests\":10").doesNotContain("Temporarily reduced").contains("X-Units");
    g.reduceCapacity("api", 0.5);
    assertThat(g.discovery().orElseThrow().toJson()).contains("\"maxRequests\":5").contains("Temporarily reduced to 5.");
    shared.set(api, 0.2);
    assertThat(g.discovery().orElseThrow().toJson()).contains("\"maxRequests\":2").contains("Temporarily reduced to 2.");
    shared.set(api, 1);
    assertThat(g.discovery().orElseThrow().toJson()).isEqualTo(before);
  }

  private Gate<String> gateOf(RouteRules route) {
    return Gate.<String>builder().limiter(limiter)
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Fair use.").build()).build())
        .route(route).build();
  }
}
