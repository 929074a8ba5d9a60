package dev.headroom.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.http.headers.HeaderDialect;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Building a filter validates the whole configuration, naming what is wrong. */
class HeadroomFilterConfigurationTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final QuotaPolicy burst = QuotaPolicy.builder("burst").quota(10).window(Duration.ofMinutes(1)).build();

  private HeadroomFilter.Builder valid() {
    return HeadroomFilter.builder()
        .limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Limits keep the service fair.").build()).build());
  }

  @Test
  void aValidConfigurationPublishesItsRoutes() {
    HeadroomFilter f = valid().route(Route.builder("/a/{id}").methods("get", "POST").policy(burst).key("a").build())
        .discovery("Svc", "Does things.").build();
    assertThat(f.gate().routes()).hasSize(1);
    assertThat(f.gate().routes().get(0).methods()).containsExactly("GET", "POST");
    assertThat(f.discovery().orElseThrow().toJson()).contains("\"a-get\"").contains("\"a-post\"");
  }

  @Test
  void aRouteOfRulesBuiltWholeKeepsEveryRule() {
    RouteRules rules = RouteRules.builder("/a").methods("GET", "POST").policy(burst)
        .when("burst", List.of("POST")).counting("burst", RouteRules.Counting.FAILURES).build();
    HeadroomFilter f = valid().route(Route.of(rules, null)).build();
    assertThat(f.gate().routes()).containsExactly(rules);
    assertThat(f.gate().routes().get(0).appliesTo("burst", "GET")).isFalse();
  }

  @Test
  void aFilterHandedABuiltGateWritesItsRoutesAndRefusesGateSettingsOfItsOwn() {
    Gate<HttpServletRequest> gate = Gate.<HttpServletRequest>builder()
        .limiter(QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build()))
        .refusals(LimitRefusals.builder().ticker(ticker).defaults(PolicyTexts.builder("Limits keep the service fair.").build()).build())
        .route(RouteRules.builder("/a/{id}").methods("GET").policy(burst).build()).build();
    HeadroomFilter f = HeadroomFilter.builder(gate).errorBodies(true).build();
    assertThat(f.gate()).isSameAs(gate);
    assertThat(f.gate().routes()).extracting(RouteRules::template).containsExactly("/a/{id}");
    assertThatThrownBy(() -> HeadroomFilter.builder(gate).jitter(Duration.ofSeconds(2)).build())
        .hasMessageStartingWith("jitter: set on the gate, which was built already");
    assertThatThrownBy(() -> HeadroomFilter.builder(gate).listener((route, decision) -> {}).build())
        .hasMessageStartingWith("listener: set on the gate");
  }

  @Test
  void limiterAndRefusalsAreRequired() {
    assertThatThrownBy(() -> HeadroomFilter.builder().build()).hasMessageStartingWith("limiter: required");
    assertThatThrownBy(() -> HeadroomFilter.builder().limiter(QuotaLimiter.of(InMemoryStore.builder().build())).build())
        .hasMessageStartingWith("refusals: required");
  }

  @Test
  void onePolicyNameCannotHaveTwoDefinitions() {
    QuotaPolicy other = burst.toBuilder().quota(11).build();
    assertThatThrownBy(() -> valid().route(Route.builder("/a").policy(burst).build())
        .route(Route.builder("/b").policy(other).build()).build())
        .hasMessageStartingWith("route /b: policy 'burst' is defined twice differently");
  }

  @Test
  void anUnreadablePartitioningIsRefusedWhenThePolicyIsBuilt() {
    // the policy holds a typed partitioning, so a bad text never reaches the filter
    assertThatThrownBy(() -> burst.toBuilder().partitioning("cookie").build())
        .hasMessageStartingWith("policy 'burst': partitioning:").hasMessageContaining("'cookie'");
  }

  @Test
  void dialectsThatClashAreRefusedPerRoute() {
    assertThatThrownBy(() -> valid().route(Route.builder("/a").policy(burst)
        .dialects(EnumSet.of(HeaderDialect.IETF, HeaderDialect.DRAFT_07)).build()).build())
        .hasMessageStartingWith("route /a: dialects: ietf and draft-07 both write");
  }

  @Test
  void routesNeedPoliciesAndValidMethods() {
    assertThatThrownBy(() -> Route.builder("/a").build()).hasMessage("route /a: policies: expected at least one policy, got none");
    assertThatThrownBy(() -> Route.builder("/a").methods("GE T")).hasMessageContaining("'GE T'");
    assertThatThrownBy(() -> Route.builder("/a").policy(burst).policy(burst).build()).hasMessageContaining("'burst' is listed twice");
    assertThatThrownBy(() -> valid().discoveryPaths(List.of("limits"))).hasMessageContaining("'limits'");
  }
}
