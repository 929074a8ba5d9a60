package dev.headroom.enforcement.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * Plans as policy overrides: each plan's policy has its own name (so its own counters), the
 * upgrade path is the declared order, and every resolver outcome leads to a plan or a refusal,
 * never to no limit.
 */
class PlansTest {
  static final QuotaPolicy API = QuotaPolicy.builder("api").quota(10).window(Duration.ofMinutes(1))
      .partitioning("api-key").build();
  static final QuotaPolicy BURST = QuotaPolicy.builder("burst").quota(5).window(Duration.ofSeconds(1)).build();

  static Plans plans() {
    return Plans.of(List.of(
        new Plan("free", Map.of("api", PolicyOverride.quota(60)), Optional.of("/pricing#free")),
        new Plan("pro", Map.of("api", PolicyOverride.quota(1000)), Optional.of("/pricing#pro")),
        new Plan("acme", Map.of("api", new PolicyOverride(OptionalLong.of(5000), Optional.of(Duration.ofHours(1)),
            Optional.of(Algorithm.SLIDING_WINDOW))), Optional.empty())), "free", List.of(API, BURST));
  }

  @Test
  void aPlansPolicyIsTheBaseWithItsOverridesUnderItsOwnName() {
    Plans plans = plans();
    Plan acme = plans.plan("acme").orElseThrow();
    QuotaPolicy p = plans.policy(acme, API);
    assertThat(p.name()).isEqualTo("api:acme");
    assertThat(p.quota()).isEqualTo(5000);
    assertThat(p.window()).isEqualTo(Duration.ofHours(1));
    assertThat(p.algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW);
    assertThat(p.partitioning()).isEqualTo(API.partitioning());
    // not overridden: the base itself, counters shared
    assertThat(plans.policy(acme, BURST)).isSameAs(BURST);
    assertThat(plans.policy(plans.plan("free").get(), API).name()).isNotEqualTo(plans.policy(plans.plan("pro").get(), API).name());
  }

  @Test
  void theUpgradeUrlIsTheNextPlansPage() {
    Plans plans = plans();
    assertThat(plans.upgradeUrl(plans.plan("free").get())).contains("/pricing#pro");
    assertThat(plans.upgradeUrl(plans.plan("pro").get())).isEmpty(); // acme has no page
    assertThat(plans.upgradeUrl(plans.plan("acme").get())).isEmpty(); // the last plan
  }

  @Test
  void everyResolutionLeadsToAPlanOrARefusal() {
    Plans plans = plans();
    assertThat(plans.select(new PlanResolution.Named("pro")).plan().name()).isEqualTo("pro");
    Plans.Selection unknown = plans.select(new PlanResolution.Named("platinum\u0000"));
    assertThat(unknown.plan().name()).isEqualTo("free");
    assertThat(unknown.warning().orElseThrow()).contains("platinum?").contains("not declared");
    assertThat(plans.select(PlanResolution.anonymous()).plan().name()).isEqualTo("free");
    Plans.Selection down = plans.select(new PlanResolution.Unavailable("timeout after 50 ms"));
    assertThat(down.plan().name()).isEqualTo("free");
    assertThat(down.warning().orElseThrow()).contains("timeout after 50 ms");
    Plans.Selection bad = plans.select(new PlanResolution.Rejected("invalid_token", "expired", "why"));
    assertThat(bad.rejected()).isPresent();
  }

  @Test
  void badPlansAreRefusedNamingPlanFieldAndValue() {
    assertThatThrownBy(() -> Plans.of(List.of(new Plan("free", Map.of("nope", PolicyOverride.quota(1)), Optional.empty())),
        "free", List.of(API))).hasMessage("plan 'free': policy 'nope' is not a policy of the service; expected one of [api]");
    assertThatThrownBy(() -> Plans.of(List.of(new Plan("free", Map.of(), Optional.empty())), "gold", List.of(API)))
        .hasMessage("fallback: plan 'gold' is not declared; expected one of [free]");
    assertThatThrownBy(() -> Plans.of(List.of(new Plan("free", Map.of("api", PolicyOverride.quota(0)), Optional.empty())),
        "free", List.of(API))).hasMessageStartingWith("plan 'free': policy 'api': policy 'api:free': quota: expected an integer from 1");
    assertThatThrownBy(() -> new Plan("has space", Map.of(), Optional.empty())).hasMessageContaining("plan name: expected");
    assertThatThrownBy(() -> Plans.of(List.of(new Plan("a", Map.of(), Optional.empty()), new Plan("a", Map.of(), Optional.empty())),
        "a", List.of(API))).hasMessageContaining("declared twice");
  }
}
