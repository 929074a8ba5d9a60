package dev.headroom.enforcement;

import static dev.headroom.enforcement.TestRequests.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.Lease;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.Store;
import dev.headroom.StoreException;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the gate records when given a MeterRegistry and an ObservationRegistry (HeadroomMeters):
 * leases held, store failures by the fallback applied, escalation blocks, an observation per
 * decision on both paths; and that a failing meter or observation handler never fails a decision.
 * Each front end's MetersTest reads the same meters over HTTP.
 */
class GateMetersTest {
  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final LimitRefusals refusals = LimitRefusals.builder().ticker(ticker)
      .defaults(PolicyTexts.builder("Fair use.").build()).build();
  private final QuotaPolicy slots = QuotaPolicy.builder("slots").quota(2).window(Duration.ofMinutes(1))
      .unit(QuotaUnit.CONCURRENT_REQUESTS).build();
  private final QuotaPolicy perKey = QuotaPolicy.builder("per-key").quota(1).window(Duration.ofMinutes(1))
      .algorithm(Algorithm.FIXED_WINDOW).partitioning("api-key").build();

  /** A store whose backend is down. */
  static final class DownStore implements Store {
    @Override
    public Decision acquire(List<Acquisition> acquisitions) {
      throw new StoreException("backend unreachable");
    }

    @Override
    public void charge(Acquisition acquisition) {}

    @Override
    public void refund(Acquisition acquisition) {}

    @Override
    public void release(Lease lease) {}
  }

  private GateBuilder<String> gate(Store store) {
    return Gate.<String>builder().limiter(QuotaLimiter.of(store)).refusals(refusals).ticker(ticker)
        .route(RouteRules.builder("/slow").policy(slots).build())
        .route(RouteRules.builder("/items/{id}").policy(perKey).build());
  }

  @Test
  void leasesHeldAreAGaugeThatFallsWhenResponsesComplete() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    Gate<String> gate = gate(InMemoryStore.builder().ticker(ticker).build()).meterRegistry(meters).build();
    Verdict first = gate.decide(request("GET", "/slow", "a"), "");
    Verdict second = gate.decideAsync(request("GET", "/slow", "a"), "").toCompletableFuture().join();
    assertThat(leases(meters)).isEqualTo(2);
    assertThat(gate.decide(request("GET", "/slow", "a"), "").answer().status()).isEqualTo(429);
    first.admission().complete(200, 0);
    assertThat(leases(meters)).isEqualTo(1);
    second.admission().completeAsync(200, 0).toCompletableFuture().join();
    assertThat(leases(meters)).isZero();
    // a gate rebuilt on the same registry (a reload) reports into the same gauge
    Gate<String> rebuilt = gate(InMemoryStore.builder().ticker(ticker).build()).meterRegistry(meters).build();
    Verdict third = rebuilt.decide(request("GET", "/slow", "a"), "");
    assertThat(leases(meters)).isEqualTo(1);
    third.admission().complete(200, 0);
    assertThat(leases(meters)).isZero();
    assertThat(decisions(meters, "slots", "allowed", "none")).isEqualTo(3);
    assertThat(decisions(meters, "slots", "refused", "quota-exceeded")).isEqualTo(1);
  }

  private static double leases(SimpleMeterRegistry meters) {
    return meters.get(HeadroomMeters.LEASES).tag(HeadroomMeters.POLICY, "slots").gauge().value();
  }

  private static double decisions(SimpleMeterRegistry meters, String policy, String outcome, String problem) {
    return meters.get(HeadroomMeters.DECISIONS).tag(HeadroomMeters.POLICY, policy).tag(HeadroomMeters.OUTCOME, outcome)
        .tag(HeadroomMeters.PROBLEM, problem).counter().count();
  }

  @Test
  void storeFailuresAreCountedByTheFallbackApplied() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    TestObservationRegistry observations = TestObservationRegistry.create();
    Gate<String> allowing = gate(new DownStore()).meterRegistry(meters).observationRegistry(observations).build();
    Gate<String> refusing = gate(new DownStore()).meterRegistry(meters).storeFailureMode(Gate.StoreFailureMode.REFUSE).build();
    assertThat(allowing.decide(request("GET", "/items/1", "a"), "").kind()).isEqualTo(Verdict.Kind.UNDECIDED);
    assertThat(allowing.decideAsync(request("GET", "/items/1", "a"), "").toCompletableFuture().join().kind())
        .isEqualTo(Verdict.Kind.UNDECIDED);
    assertThat(refusing.decide(request("GET", "/items/1", "a"), "").answer().status()).isEqualTo(503);
    assertThat(meters.get(HeadroomMeters.STORE_FAILURES).tag(HeadroomMeters.FALLBACK, "allow").counter().count()).isEqualTo(2);
    assertThat(meters.get(HeadroomMeters.STORE_FAILURES).tag(HeadroomMeters.FALLBACK, "refuse").counter().count()).isEqualTo(1);
    assertThat(meters.get(HeadroomMeters.STORE_LATENCY).timer().count()).isEqualTo(3);
    TestObservationRegistryAssert.assertThat(observations)
        .hasNumberOfObservationsWithNameEqualTo(HeadroomMeters.OBSERVATION, 2)
        .forAllObservationsWithNameEqualTo(HeadroomMeters.OBSERVATION, o -> o
            .hasLowCardinalityKeyValue(HeadroomMeters.OUTCOME, "undecided")
            .hasLowCardinalityKeyValue(HeadroomMeters.PROBLEM, HeadroomMeters.NONE)
            .hasHighCardinalityKeyValueWithKey(HeadroomMeters.STORE_LATENCY_KEY));
  }

  @Test
  void anEscalationBlockIsCountedAndObservedAsAbnormalUsage() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    TestObservationRegistry observations = TestObservationRegistry.create();
    Gate<String> gate = gate(InMemoryStore.builder().ticker(ticker).build()).meterRegistry(meters)
        .observationRegistry(observations).escalation("per-key", new Escalation(1, Duration.ofMinutes(5))).build();
    assertThat(gate.decide(request("GET", "/items/1", "k"), "").kind()).isEqualTo(Verdict.Kind.ADMIT);
    assertThat(gate.decide(request("GET", "/items/1", "k"), "").answer().status()).isEqualTo(429); // told to wait
    assertThat(gate.decide(request("GET", "/items/1", "k"), "").answer().status()).isEqualTo(429); // starts the block
    assertThat(gate.decide(request("GET", "/items/1", "k"), "").answer().status()).isEqualTo(429); // blocked
    assertThat(decisions(meters, "per-key", "refused", "quota-exceeded")).isEqualTo(2);
    assertThat(decisions(meters, "per-key", "blocked", "abnormal-usage-detected")).isEqualTo(1);
    TestObservationRegistryAssert.assertThat(observations)
        .hasNumberOfObservationsWithNameEqualTo(HeadroomMeters.OBSERVATION, 4)
        .hasAnObservation(o -> o.hasLowCardinalityKeyValue(HeadroomMeters.PROBLEM, "abnormal-usage-detected")
            .hasLowCardinalityKeyValue(HeadroomMeters.POLICY, "per-key")
            .hasHighCardinalityKeyValue(HeadroomMeters.RETRY_AFTER, "300"));
  }

  @Test
  void aFailingMeterOrObservationHandlerNeverFailsADecision() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    meters.config().meterFilter(new MeterFilter() {
      @Override
      public Meter.Id map(Meter.Id id) {
        if (id.getName().equals(HeadroomMeters.DECISIONS) || id.getName().equals(HeadroomMeters.LEASES)) {
          throw new IllegalStateException("the registry is broken");
        }
        return id;
      }
    });
    TestObservationRegistry observations = TestObservationRegistry.create();
    observations.observationConfig().observationHandler(new ObservationHandler<>() {
      @Override
      public void onStart(Observation.Context context) {
        throw new IllegalStateException("the tracer is broken");
      }

      @Override
      public boolean supportsContext(Observation.Context context) {
        return true;
      }
    });
    Gate<String> gate = gate(InMemoryStore.builder().ticker(ticker).build()).meterRegistry(meters)
        .observationRegistry(observations).build();
    assertThat(gate.decide(request("GET", "/items/1", "a"), "").kind()).isEqualTo(Verdict.Kind.ADMIT);
    assertThat(gate.decideAsync(request("GET", "/items/1", "a"), "").toCompletableFuture().join().answer().status())
        .isEqualTo(429);
    Verdict slot = gate.decide(request("GET", "/slow", "a"), "");
    assertThat(slot.kind()).isEqualTo(Verdict.Kind.ADMIT);
    slot.admission().complete(200, 0);
  }
}
