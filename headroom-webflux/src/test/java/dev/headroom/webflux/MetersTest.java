package dev.headroom.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.HeadroomMeters;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.web.server.ServerWebExchange;

/**
 * The WebFlux filter's gate given a MeterRegistry and an ObservationRegistry records the same
 * meters as every front end (headroom-enforcement HeadroomMeters), on a real Reactor Netty server:
 * 3 allowed and 2 refused requests, each one observation.
 */
class MetersTest {

  @Test
  void decisionsAreCountedByPolicyOutcomeAndProblemAndObserved() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    QuotaPolicy api = QuotaPolicy.builder("api").quota(3).window(Duration.ofMinutes(1)).algorithm(Algorithm.FIXED_WINDOW).build();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    TestObservationRegistry observations = TestObservationRegistry.create();
    Gate<ServerWebExchange> gate = Gate.<ServerWebExchange>builder()
        .limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Fair use for every caller.").build()).build())
        .route(RouteRules.builder("/api/items/{id}").policy(api).build())
        .meterRegistry(meters).observationRegistry(observations).ticker(ticker)
        .build();
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    try (SpecServer server = SpecServer.start(NonBlockingTest.handler(),
        HeadroomWebFilter.builder(gate).users(ReactiveUserResolver.none()).build())) {
      for (int i = 0; i < 5; i++) {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(server.base() + "/api/items/" + i))
            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(i < 3 ? 200 : 429);
      }
    }
    assertThat(count(meters, "allowed", "none")).isEqualTo(3);
    assertThat(count(meters, "refused", "quota-exceeded")).isEqualTo(2);
    assertThat(meters.get(HeadroomMeters.STORE_LATENCY).timer().count()).isEqualTo(5);
    TestObservationRegistryAssert.assertThat(observations)
        .hasNumberOfObservationsWithNameEqualTo(HeadroomMeters.OBSERVATION, 5)
        .hasHandledContextsThatSatisfy(contexts -> {
          assertThat(contexts.stream().filter(c -> has(c, HeadroomMeters.OUTCOME, "allowed"))).hasSize(3);
          assertThat(contexts.stream().filter(c -> has(c, HeadroomMeters.OUTCOME, "refused")
              && has(c, HeadroomMeters.PROBLEM, "quota-exceeded")
              && c.getHighCardinalityKeyValue(HeadroomMeters.RETRY_AFTER) != null)).hasSize(2);
          assertThat(contexts).allMatch(c -> has(c, HeadroomMeters.ROUTE, "/api/items/{id}")
              && has(c, HeadroomMeters.POLICY, "api"));
        });
  }

  private static double count(SimpleMeterRegistry meters, String outcome, String problem) {
    return meters.get(HeadroomMeters.DECISIONS).tag(HeadroomMeters.POLICY, "api").tag(HeadroomMeters.OUTCOME, outcome)
        .tag(HeadroomMeters.PROBLEM, problem).counter().count();
  }

  private static boolean has(Observation.Context c, String key, String value) {
    KeyValue kv = c.getLowCardinalityKeyValue(key);
    return kv != null && kv.getValue().equals(value);
  }
}
