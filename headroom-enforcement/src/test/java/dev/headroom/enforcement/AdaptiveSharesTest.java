package dev.headroom.enforcement;

import static dev.headroom.enforcement.TestRequests.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.plan.Plan;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Each plan's guaranteed share of a route's learnt limit ({@link AdaptiveConcurrency#shares()}),
 * on a fake ticker, through the gate: a greedy plan that saturates the limit cannot take the share
 * of another plan, which is let through up to its share, while the greedy plan is refused 503
 * {@code temporary-reduced-capacity} (draft-ietf-httpapi-ratelimit-headers-09 section 5.2) until the
 * route is back under its limit; with the other plan idle, the greedy plan borrows all of it. The
 * plan of each request is its {@code X-Api-Key}, as a plan resolver would find it.
 */
class AdaptiveSharesTest {
  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
  private final QuotaPolicy api = QuotaPolicy.builder("api").quota(1000).window(Duration.ofMinutes(1)).build();
  private final Plans plans = Plans.of(List.of(new Plan("free", Map.of(), Optional.empty()),
      new Plan("pro", Map.of(), Optional.empty()), new Plan("team", Map.of(), Optional.empty())), "free", List.of(api));

  private Gate<String> gate(Map<String, Double> shares) {
    AdaptiveConcurrency adaptive = AdaptiveConcurrency.builder().initialLimit(10).maxLimit(10).shares(shares).build();
    return Gate.<String>builder().limiter(limiter).ticker(ticker)
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Fair use.").build()).build())
        .plans(plans, view -> CompletableFuture.completedFuture(new PlanResolution.Named(view.headers("X-Api-Key").get(0))),
            Duration.ofSeconds(1))
        .route(RouteRules.builder("/work").policy(api).adaptive(adaptive).build()).build();
  }

  private static Map<String, Double> shares(Object... planThenShare) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (int i = 0; i < planThenShare.length; i += 2) {
      out.put((String) planThenShare[i], (Double) planThenShare[i + 1]);
    }
    return out;
  }

  /** Requests of {@code plan} until one is refused, or {@code most}: the admitted ones, in flight. */
  private static List<Admission> fill(Gate<String> gate, String plan, int most) {
    List<Admission> admitted = new ArrayList<>();
    for (int i = 0; i < most; i++) {
      Verdict v = gate.decide(request("GET", "/work", plan), "");
      if (v.kind() != Verdict.Kind.ADMIT) {
        break;
      }
      admitted.add(v.admission());
    }
    return admitted;
  }

  private static void assertRefused503(Gate<String> gate, String plan) {
    GateResponse refused = gate.decide(request("GET", "/work", plan), "").answer();
    assertThat(refused.status()).as("%s refused", plan).isEqualTo(503);
    assertThat(new String(refused.body(), StandardCharsets.UTF_8)).contains("temporary-reduced-capacity");
    assertThat(refused.fields()).anySatisfy(f -> assertThat(f.getKey()).isEqualTo("Retry-After"));
  }

  private static String rateLimit(Admission a) {
    Map<String, String> out = new LinkedHashMap<>();
    a.writeFields(200, out::put);
    return out.get("RateLimit");
  }

  @Test
  void aGreedyPlanSaturatingTheLimitCannotTakeTheShareOfAnother() {
    Gate<String> gate = gate(shares("free", 0.2, "pro", 0.8));
    List<Admission> free = fill(gate, "free", 100);
    assertThat(free).as("free borrows pro's idle share: the whole limit").hasSize(10);
    assertRefused503(gate, "free");

    List<Admission> pro = fill(gate, "pro", 100);
    assertThat(pro).as("pro still gets its share, ceil(10 * 0.8), while free holds all 10").hasSize(8);
    assertThat(rateLimit(pro.get(0))).as("r: what one more pro request would find, its share less one")
        .contains("\"adaptive\";r=7");
    assertRefused503(gate, "pro");
    assertRefused503(gate, "free");

    free.forEach(a -> a.complete(200, 0));
    List<Admission> freeAgain = fill(gate, "free", 100);
    assertThat(freeAgain).as("with pro busy, free gets back only its own share, ceil(10 * 0.2)").hasSize(2);
    assertRefused503(gate, "free");
  }

  @Test
  void withTheOtherPlanIdleAPlanBorrowsAllOfIt() {
    Gate<String> gate = gate(shares("free", 0.2, "pro", 0.8));
    List<Admission> pro = fill(gate, "pro", 100);
    assertThat(pro).as("pro borrows free's idle share").hasSize(10);
    assertThat(fill(gate, "free", 100)).as("free still gets its own share").hasSize(2);
    assertRefused503(gate, "pro");
  }

  @Test
  void plansTheSharesLeaveOutShareWhatIsLeft() {
    Gate<String> gate = gate(shares("pro", 0.5));
    List<Admission> pro = fill(gate, "pro", 100);
    assertThat(pro).hasSize(10);
    // free and team together keep the other half, one pool: 5 between them
    assertThat(fill(gate, "free", 3)).hasSize(3);
    assertThat(fill(gate, "team", 100)).hasSize(2);
    assertRefused503(gate, "free");
  }

  @Test
  void sharesMustNamePlansAndComeToAtMostOne() {
    assertThatThrownBy(() -> gate(shares("free", 0.2, "gold", 0.5)))
        .hasMessage("route /work: adaptive: shares.gold: 'gold' is not valid; expected one of the plans [free, pro, team]");
    assertThatThrownBy(() -> AdaptiveConcurrency.builder().shares(shares("free", 0.5, "pro", 0.7)).build())
        .hasMessage("adaptive: shares: {free=0.5, pro=0.7} is not valid; expected fractions that together come to at "
            + "most 1 (these come to 1.2)");
    assertThatThrownBy(() -> AdaptiveConcurrency.builder().shares(shares("free", 0.0)).build())
        .hasMessage("adaptive: shares.free: 0.0 is not valid; expected a fraction of the limit above 0 and at most 1, "
            + "such as 0.2");
    assertThat(AdaptiveConcurrency.builder().shares(shares("a", 0.1, "b", 0.2, "c", 0.7)).build().shares())
        .as("decimal fractions that come to 1").hasSize(3);
    QuotaPolicy one = QuotaPolicy.builder("one").quota(1).window(Duration.ofMinutes(1)).build();
    assertThatThrownBy(() -> Gate.<String>builder().limiter(limiter).ticker(ticker)
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Fair use.").build()).build())
        .route(RouteRules.builder("/x").policy(one).adaptive(AdaptiveConcurrency.builder()
            .shares(shares("free", 0.5)).build()).build()).build())
        .hasMessageContaining("route /x: adaptive: shares: {free=0.5} is not valid; expected plans to be configured");
  }

  @Test
  void aGateBuiltOnReloadKeepsTheLearntLimitWhenTheSettingsAreUnchanged() {
    AdaptiveConcurrency adaptive = AdaptiveConcurrency.builder().initialLimit(10).maxLimit(10).window(Duration.ofMillis(1))
        .windowSamples(1).build();
    Gate<String> before = build(adaptive, null);
    for (int i = 0; i < 5; i++) {
      Admission a = before.decide(request("GET", "/work", "a"), "").admission();
      ticker.advance(Duration.ofMillis(10));
      a.complete(503, 0); // each failed window backs off by 0.9: 10 -> 6
    }
    Admission held = before.decide(request("GET", "/work", "a"), "").admission();
    Gate<String> after = build(adaptive, before);
    assertThat(fill(after, "a", 100)).as("the learnt limit of 6, one of them still in flight from before").hasSize(5);
    held.complete(200, 0);
    assertThat(fill(after, "a", 100)).as("its place given back to the new gate").hasSize(1);

    Gate<String> changed = build(AdaptiveConcurrency.builder().initialLimit(10).maxLimit(11).build(), after);
    assertThat(fill(changed, "a", 100)).as("other settings: a fresh start from the initial limit").hasSize(10);
  }

  private Gate<String> build(AdaptiveConcurrency adaptive, Gate<String> previous) {
    GateBuilder<String> b = Gate.<String>builder().limiter(limiter).ticker(ticker)
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Fair use.").build()).build())
        .route(RouteRules.builder("/work").key("work").adaptive(adaptive).build());
    if (previous != null) {
      b.adaptiveFrom(previous);
    }
    return b.build();
  }
}
