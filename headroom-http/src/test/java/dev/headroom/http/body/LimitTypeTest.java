package dev.headroom.http.body;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.Partitioning.Component;
import dev.headroom.Partitioning.Part;
import dev.headroom.Partitioning;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A policy's Graceful Boundaries limit type (section 1, "Limit types") is read from its typed
 * partitioning: the refusal path classifies without parsing text.
 */
class LimitTypeTest {

  private static QuotaPolicy rate(Partitioning partitioning) {
    return QuotaPolicy.builder("p").quota(5).window(Duration.ofMinutes(1)).partitioning(partitioning).build();
  }

  private static Partitioning of(Part... alternative) {
    return Partitioning.of(List.of(List.of(alternative)));
  }

  @Test
  void theFirstAlternativesMostSpecificCallerComponentDecidesTheRateType() {
    assertThat(LimitType.classify(rate(of(Part.of(Component.CLIENT_IP), Part.of(Component.ROUTE)))))
        .isEqualTo(LimitType.IP_RATE);
    assertThat(LimitType.classify(rate(of(Part.header("X-Tenant"))))).isEqualTo(LimitType.KEY_RATE);
    assertThat(LimitType.classify(rate(of(Part.of(Component.API_KEY), Part.of(Component.USER)))))
        .isEqualTo(LimitType.USER_RATE);
    assertThat(LimitType.classify(rate(of(Part.of(Component.METHOD))))).isEqualTo(LimitType.GLOBAL_RATE);
    assertThat(LimitType.classify(rate(null))).isEqualTo(LimitType.GLOBAL_RATE);
    Partitioning keyElseIp = Partitioning.of(List.of(List.of(Part.of(Component.API_KEY)), List.of(Part.of(Component.CLIENT_IP))));
    assertThat(LimitType.classify(rate(keyElseIp))).isEqualTo(LimitType.KEY_RATE);
  }

  @Test
  void unitAndLongFixedWindowsComeBeforeThePartitioning() {
    Partitioning ip = Partitioning.CLIENT_IP;
    assertThat(LimitType.classify(rate(ip).toBuilder().unit(QuotaUnit.CONCURRENT_REQUESTS).algorithm(null).build()))
        .isEqualTo(LimitType.CONCURRENCY);
    assertThat(LimitType.classify(rate(ip).toBuilder().unit(QuotaUnit.CONTENT_BYTES).build())).isEqualTo(LimitType.COST_LIMIT);
    assertThat(LimitType.classify(rate(ip).toBuilder().algorithm(Algorithm.FIXED_WINDOW).window(Duration.ofDays(1)).build()))
        .isEqualTo(LimitType.QUOTA);
  }

  @Test
  void aRefusalOfATypedPolicyNamesItsLimitType() {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    QuotaPolicy perTenant = QuotaPolicy.builder("tenant").quota(1).window(Duration.ofMinutes(1))
        .algorithm(Algorithm.FIXED_WINDOW).partitioning(of(Part.header("X-Tenant"))).build();
    PartitionKey tenant = PartitionKey.of("key:0123");
    limiter.acquire(perTenant, tenant);
    Decision d = limiter.acquire(perTenant, tenant);
    Refusal r = LimitRefusals.builder().ticker(ticker)
        .defaults(PolicyTexts.builder("Limits keep this free service available for everyone.").build()).build().refusal(d);
    assertThat(r.limitType()).contains("key-rate");
    assertThat(r.detail().orElseThrow()).contains("per API key");
  }
}
