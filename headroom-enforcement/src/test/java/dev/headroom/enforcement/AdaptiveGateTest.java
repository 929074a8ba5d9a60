package dev.headroom.enforcement;

import static dev.headroom.enforcement.TestRequests.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A route's adaptive concurrency through the gate (AdaptiveConcurrency): the learnt limit is a
 * {@code concurrent-requests} policy advertised in RateLimit-Policy, a request beyond it is refused
 * 503 {@code temporary-reduced-capacity} (draft-ietf-httpapi-ratelimit-headers-09 section 5.2)
 * without asking the store, failures lower it, healthy completions raise it again, and the route's
 * quota policies follow it.
 */
class AdaptiveGateTest {
  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
  private final QuotaPolicy api = QuotaPolicy.builder("api").quota(1000).window(Duration.ofMinutes(1)).build();

  private Gate<String> gate(AdaptiveConcurrency adaptive, QuotaPolicy... policies) {
    RouteRules.Builder r = RouteRules.builder("/work").adaptive(adaptive);
    for (QuotaPolicy p : policies) {
      r.policy(p);
    }
    return Gate.<String>builder().limiter(limiter).ticker(ticker)
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Fair use.").build()).build())
        .route(r.build()).build();
  }

  private static Map<String, String> fields(Admission a, int status) {
    Map<String, String> out = new LinkedHashMap<>();
    a.writeFields(status, out::put);
    return out;
  }

  private static String field(GateResponse r, String name) {
    return r.fields().stream().filter(f -> f.getKey().equals(name)).findFirst().orElseThrow().getValue();
  }

  @Test
  void beyondTheLearntLimitARequestIsRefused503WithTheLimitAdvertised() {
    Gate<String> gate = gate(AdaptiveConcurrency.builder().initialLimit(2).maxLimit(10).build());
    Admission first = gate.decide(request("GET", "/work", "a"), "").admission();
    assertThat(fields(first, 200).get("RateLimit-Policy")).contains("\"adaptive\";q=2;qu=\"concurrent-requests\"");
    Admission second = gate.decideAsync(request("GET", "/work", "a"), "").toCompletableFuture().join().admission();
    assertThat(fields(second, 200).get("RateLimit")).contains("\"adaptive\";r=0");

    GateResponse refused = gate.decide(request("GET", "/work", "b"), "").answer();
    assertThat(refused.status()).isEqualTo(503);
    assertThat(new String(refused.body(), StandardCharsets.UTF_8)).contains("temporary-reduced-capacity");
    assertThat(Long.parseLong(field(refused, "Retry-After"))).isGreaterThanOrEqualTo(1);
    assertThat(field(refused, "RateLimit-Policy")).contains("\"adaptive\";q=2");

    first.complete(200, 0);
    assertThat(gate.decide(request("GET", "/work", "b"), "").kind()).isEqualTo(Verdict.Kind.ADMIT);
  }

  @Test
  void aRequestAnotherPolicyRefusesGivesItsPlaceBack() {
    QuotaPolicy one = QuotaPolicy.builder("one").quota(1).window(Duration.ofMinutes(1)).build();
    Gate<String> gate = gate(AdaptiveConcurrency.builder().initialLimit(1).maxLimit(1).build(), one);
    Admission admitted = gate.decide(request("GET", "/work", "a"), "").admission();
    admitted.complete(200, 0);
    GateResponse refused = gate.decide(request("GET", "/work", "a"), "").answer();
    assertThat(refused.status()).isEqualTo(429);
    // the refused request held no place: the limit of 1 is free, and only the quota refuses
    assertThat(gate.decide(request("GET", "/work", "a"), "").answer().status()).isEqualTo(429);
  }

  @Test
  void theLimitFallsOnFailuresAndRecoversWithHealthyResponsesAndTheQuotasFollowIt() {
    // tolerance 1.5: each response is a window here, and a round's latencies run from 10 to 20 ms
    Gate<String> gate = gate(AdaptiveConcurrency.builder().initialLimit(10).maxLimit(10).window(Duration.ofMillis(1))
        .windowSamples(1).tolerance(1.5).build(), api);
    for (int i = 0; i < 5; i++) {
      Admission a = gate.decide(request("GET", "/work", "a"), "").admission();
      ticker.advance(Duration.ofMillis(10));
      a.complete(503, 0); // the upstream is failing: each window backs off by 0.9
    }
    Admission probe = gate.decide(request("GET", "/work", "a"), "").admission();
    Map<String, String> degraded = fields(probe, 200);
    assertThat(degraded.get("RateLimit-Policy")).contains("\"adaptive\";q=6;").contains("\"api\";q=600;");
    assertThat(gate.reducedCapacity()).containsEntry("api", 0.6);
    ticker.advance(Duration.ofMillis(10));
    probe.complete(200, 0);

    List<Integer> learnt = new ArrayList<>();
    for (int round = 0; round < 10 && !gate.reducedCapacity().isEmpty(); round++) {
      List<Admission> busy = new ArrayList<>();
      Verdict v;
      while ((v = gate.decide(request("GET", "/work", "a"), "")).kind() == Verdict.Kind.ADMIT) {
        busy.add(v.admission());
      }
      learnt.add(busy.size());
      ticker.advance(Duration.ofMillis(10));
      for (Admission a : busy) {
        ticker.advance(Duration.ofMillis(2)); // a steady latency of 10 to 20 ms
        a.complete(200, 0);
      }
    }
    assertThat(gate.reducedCapacity()).as("the limit learnt each round: %s", learnt).isEmpty();
    Admission healed = gate.decide(request("GET", "/work", "a"), "").admission();
    assertThat(fields(healed, 200).get("RateLimit-Policy")).contains("\"adaptive\";q=10;").contains("\"api\";q=1000;");
  }

  @Test
  void theAdaptivePolicyNeedsANameOfItsOwn() {
    QuotaPolicy named = QuotaPolicy.builder("adaptive").quota(1).window(Duration.ofMinutes(1)).build();
    assertThatThrownBy(() -> RouteRules.builder("/x").policy(named).adaptive(AdaptiveConcurrency.builder().build())
        .build()).hasMessage("route /x: adaptive: name: 'adaptive' is a policy of the route too; expected a name of its own");
  }
}
