package dev.headroom.spec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * All or nothing (ARCHITECTURE.md, "One request through any front end", step 5; {@link dev.headroom.Store}):
 * every policy of a request is decided at once, and a request refused by one policy consumes
 * nothing from the others, concurrency leases included. The outcomes of the policies that would
 * have allowed report their state before the request.
 */
public abstract class AllOrNothingSpec extends StoreSpecification {

  private final QuotaPolicy burst = policy("burst", 2, seconds(10), Algorithm.TOKEN_BUCKET);
  private final QuotaPolicy daily = policy("daily", 1000, seconds(86_400), Algorithm.FIXED_WINDOW);
  private final QuotaPolicy minute = policy("minute", 5, seconds(60), Algorithm.SLIDING_WINDOW);
  private final QuotaPolicy inFlight = QuotaPolicy.builder("in-flight").quota(1).window(seconds(60))
      .unit(QuotaUnit.CONCURRENT_REQUESTS).build();

  private Decision request(PartitionKey k, QuotaPolicy... policies) {
    Acquisition[] list = new Acquisition[policies.length];
    for (int i = 0; i < policies.length; i++) {
      list[i] = Acquisition.of(policies[i], k);
    }
    return limiter.acquire(List.of(list));
  }

  @Test
  @DisplayName("a request refused by the burst policy consumes nothing of the daily one")
  void refusedRequestConsumesNothingElsewhere() {
    PartitionKey k = key("client");
    assertThat(request(k, burst, daily).allowed()).isTrue();
    assertThat(request(k, burst, daily).allowed()).isTrue();
    for (int i = 0; i < 10; i++) {
      Decision d = request(k, burst, daily);
      assertThat(d.allowed()).isFalse();
      assertThat(d.violated()).extracting(PolicyOutcome::policy).containsExactly(burst);
      PolicyOutcome dailyOutcome = d.outcomes().get(1);
      assertThat(dailyOutcome.allowed()).as("daily alone would allow").isTrue();
      assertThat(dailyOutcome.remaining()).as("daily reports its state before the request").isEqualTo(998);
      assertThat(dailyOutcome.lease()).isEmpty();
    }
    assertThat(peek(daily, k).remaining()).isEqualTo(998);
  }

  @Test
  @DisplayName("the order of the policies does not matter: refused first or last, nothing is consumed")
  void orderDoesNotMatter() {
    PartitionKey k = key("client");
    admit(burst, k, 2);
    assertThat(request(k, daily, minute, burst).allowed()).isFalse();
    assertThat(request(k, burst, minute, daily).allowed()).isFalse();
    assertThat(request(k, minute, burst, daily).allowed()).isFalse();
    assertThat(peek(daily, k).remaining()).isEqualTo(1000);
    assertThat(peek(minute, k).remaining()).isEqualTo(5);
  }

  @Test
  @DisplayName("a refused request takes no concurrency lease, so the next request finds it free")
  void refusedRequestTakesNoLease() {
    PartitionKey k = key("client");
    admit(burst, k, 2);
    Decision refused = request(k, inFlight, burst);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.leases()).isEmpty();
    assertThat(refused.outcomes().get(0).allowed()).isTrue();
    assertThat(refused.outcomes().get(0).lease()).isEmpty();
    assertThat(refused.outcomes().get(0).remaining()).isEqualTo(1);
    Decision alone = request(k, inFlight);
    assertThat(alone.allowed()).as("the lease was not taken by the refused request").isTrue();
    assertThat(alone.leases()).hasSize(1);
  }

  @Test
  @DisplayName("a request refused by the concurrency policy consumes nothing of the counting policies")
  void refusedByConcurrencyConsumesNothing() {
    PartitionKey k = key("client");
    Decision holding = request(k, inFlight, minute, daily);
    assertThat(holding.allowed()).isTrue();
    assertThat(holding.leases()).hasSize(1);
    for (int i = 0; i < 3; i++) {
      Decision d = request(k, minute, daily, inFlight);
      assertThat(d.allowed()).isFalse();
      assertThat(d.violated()).extracting(PolicyOutcome::policy).containsExactly(inFlight);
    }
    assertThat(peek(minute, k).remaining()).isEqualTo(4);
    assertThat(peek(daily, k).remaining()).isEqualTo(999);
    limiter.release(holding);
    Decision next = request(k, inFlight, minute, daily);
    assertThat(next.allowed()).isTrue();
    assertThat(next.outcomes()).extracting(PolicyOutcome::remaining).containsExactly(0L, 3L, 998L);
    limiter.release(next);
  }

  @Test
  @DisplayName("an allowed request consumes its cost from every policy and holds every lease")
  void allowedRequestConsumesEverywhere() {
    PartitionKey k = key("client");
    QuotaPolicy bytes = QuotaPolicy.builder("bytes").quota(10_000).window(seconds(60))
        .unit(QuotaUnit.CONTENT_BYTES).algorithm(Algorithm.FIXED_WINDOW).build();
    Decision d = limiter.acquire(List.of(Acquisition.of(minute, k), Acquisition.of(bytes, k, 4_000),
        Acquisition.of(inFlight, k)));
    assertThat(d.allowed()).isTrue();
    assertThat(d.outcomes()).extracting(PolicyOutcome::remaining).containsExactly(4L, 6_000L, 0L);
    assertThat(d.outcomes()).extracting(PolicyOutcome::cost).containsExactly(1L, 4_000L, 1L);
    assertThat(d.leases()).hasSize(1);
    assertThat(d.violated()).isEmpty();
    Decision tooMuch = limiter.acquire(List.of(Acquisition.of(minute, k), Acquisition.of(bytes, k, 6_001)));
    assertThat(tooMuch.allowed()).isFalse();
    assertThat(tooMuch.violated()).extracting(PolicyOutcome::policy).containsExactly(bytes);
    assertThat(peek(minute, k).remaining()).isEqualTo(4);
  }

  @Test
  @DisplayName("partitions of one request may differ: a refusal in one partition consumes nothing in the other")
  void differentPartitions() {
    PartitionKey client = key("client");
    PartitionKey apiKey = key("api-key");
    admit(burst, client, 2);
    Decision d = limiter.acquire(List.of(Acquisition.of(burst, client), Acquisition.of(daily, apiKey)));
    assertThat(d.allowed()).isFalse();
    assertThat(d.outcomes().get(1).key()).isEqualTo(apiKey);
    assertThat(peek(daily, apiKey).remaining()).isEqualTo(1000);
  }
}
