package dev.headroom.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.HeadroomMeters;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The servlet filter given a MeterRegistry and an ObservationRegistry records the gate's meters and
 * one observation per decision (headroom-enforcement HeadroomMeters), on Tomcat over real sockets:
 * 3 allowed and 2 refused requests, and a shadow policy that would refuse all but the first.
 */
class MetersTest {

  @Test
  void decisionsAreCountedByPolicyOutcomeAndProblemAndObserved() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    QuotaPolicy api = QuotaPolicy.builder("api").quota(3).window(Duration.ofMinutes(1)).algorithm(Algorithm.FIXED_WINDOW).build();
    QuotaPolicy trial = QuotaPolicy.builder("trial").quota(1).window(Duration.ofMinutes(1)).algorithm(Algorithm.FIXED_WINDOW).build();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    TestObservationRegistry observations = TestObservationRegistry.create();
    HeadroomFilter filter = HeadroomFilter.builder().limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Limits keep the service fair.").build()).build())
        .route(Route.builder("/api/{id}").policy(api).shadowPolicy(trial).build())
        .meterRegistry(meters).observationRegistry(observations)
        .ticker(ticker).build();
    try (TomcatWithFilter tomcat = new TomcatWithFilter(filter)) {
      for (int i = 0; i < 5; i++) {
        assertThat(tomcat.get("/api/" + i, null, null).statusCode()).isEqualTo(i < 3 ? 200 : 429);
      }
    }
    assertThat(count(meters, "api", "allowed", "none")).isEqualTo(3);
    assertThat(count(meters, "api", "refused", "quota-exceeded")).isEqualTo(2);
    assertThat(count(meters, "trial", "shadow-allowed", "none")).isEqualTo(1);
    assertThat(count(meters, "trial", "shadow-refused", "quota-exceeded")).isEqualTo(4);
    assertThat(meters.get(HeadroomMeters.STORE_LATENCY).timer().count()).isEqualTo(5);
    assertThat(meters.get(HeadroomMeters.STORE_FAILURES).tag(HeadroomMeters.FALLBACK, "allow").counter().count()).isZero();

    TestObservationRegistryAssert.assertThat(observations)
        .hasNumberOfObservationsWithNameEqualTo(HeadroomMeters.OBSERVATION, 5)
        .hasHandledContextsThatSatisfy(contexts -> {
          assertThat(contexts.stream().filter(c -> has(c, HeadroomMeters.OUTCOME, "allowed"))).hasSize(3);
          assertThat(contexts.stream().filter(c -> has(c, HeadroomMeters.OUTCOME, "refused")
              && has(c, HeadroomMeters.PROBLEM, "quota-exceeded") && has(c, HeadroomMeters.POLICY, "api")
              && c.getHighCardinalityKeyValue(HeadroomMeters.RETRY_AFTER) != null)).hasSize(2);
          assertThat(contexts).allMatch(c -> has(c, HeadroomMeters.ROUTE, "/api/{id}"));
        });
  }

  private static double count(SimpleMeterRegistry meters, String policy, String outcome, String problem) {
    return meters.get(HeadroomMeters.DECISIONS).tag(HeadroomMeters.POLICY, policy).tag(HeadroomMeters.OUTCOME, outcome)
        .tag(HeadroomMeters.PROBLEM, problem).counter().count();
  }

  private static boolean has(Observation.Context c, String key, String value) {
    KeyValue kv = c.getLowCardinalityKeyValue(key);
    return kv != null && kv.getValue().equals(value);
  }
}
