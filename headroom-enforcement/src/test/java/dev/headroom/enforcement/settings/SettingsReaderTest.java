package dev.headroom.enforcement.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.Waiting;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.http.headers.HeaderDialect;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The one converter of the settings model: typed field errors, every problem at once, in each binding's spelling. */
class SettingsReaderTest {

  private static final String WHY = "Limits keep the service responsive for every caller.";

  private static PolicySettings policy(long quota, Duration window) {
    PolicySettings p = new PolicySettings();
    p.setQuota(quota);
    p.setWindow(window);
    return p;
  }

  @Test
  void validSettingsBecomePoliciesTextsEscalationsAndAllowLists() {
    PolicySettings api = policy(100, Duration.ofMinutes(1));
    api.setPartitioning("client-ip");
    api.setAlgorithm("sliding-window");
    api.setLimit("100 requests per minute per client address");
    api.setAlternativeEndpoint("/api/cached");
    api.setEscalationThreshold(5);
    api.getAllow().setCidrs(List.of("10.0.0.0/8"));
    SettingsReader r = SettingsReader.properties("headroom");
    PolicySet set = r.policies(WHY, Optional.empty(), Map.of("api", api));
    r.throwIfProblems();
    QuotaPolicy q = set.policies().get("api");
    assertThat(q.quota()).isEqualTo(100);
    assertThat(q.algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW);
    assertThat(set.texts().get("api").limit()).hasValue("100 requests per minute per client address");
    assertThat(set.texts().get("api").why()).isEqualTo(WHY);
    assertThat(set.escalations().get("api").threshold()).isEqualTo(5);
    assertThat(set.escalations().get("api").block()).isEqualTo(Duration.ofMinutes(15));
    assertThat(set.allowLists().get("api").cidrs()).hasSize(1);
  }

  @Test
  void everyProblemIsReportedWithItsPathValueAndWhatWasExpected() {
    Map<String, PolicySettings> policies = new LinkedHashMap<>();
    PolicySettings a = policy(0, Duration.ofMillis(1500));
    a.setUnit("bytes");
    a.setLeaseTimeout(Duration.ofDays(2));
    policies.put("a", a);
    PolicySettings b = policy(5, Duration.ofMinutes(1));
    b.setWhy("We use Redis with a sliding window.");
    b.setEscalationThreshold(0);
    b.getAllow().setApiKeys(List.of("secret-key"));
    policies.put("b", b);
    SettingsReader r = SettingsReader.properties("headroom");
    r.policies(WHY, Optional.empty(), policies);
    SettingsException e = catchThrowableOfType(r::throwIfProblems, SettingsException.class);
    assertThat(e.problems()).extracting(SettingsProblem::path).containsExactly(
        "headroom.policies.a.quota", "headroom.policies.a.window", "headroom.policies.a.unit",
        "headroom.policies.a.lease-timeout", "headroom.policies.b.why", "headroom.policies.b.escalation-threshold",
        "headroom.policies.b.allow.api-keys[0]");
    assertThat(e.problems().get(0)).hasToString(
        "headroom.policies.a.quota: expected an integer from 1 to " + QuotaPolicy.MAX_QUOTA + ", got '0'");
    assertThat(e.problems().get(4).expected()).contains("SC-2");
    assertThat(e.problems().get(6).value()).isEqualTo("(10 characters, not shown)");
    assertThat(e.getMessage()).startsWith("7 problems\n  - headroom.policies.a.quota: ");
    assertThat(e.path()).isEqualTo("headroom.policies.a.quota");
  }

  /** A policy's queue: maxQueued 1000 unless set; each value checked alone, maxWait required. */
  @Test
  void aQueueIsReadWithItsDefaultAndEachBadValueNamed() {
    PolicySettings ok = policy(5, Duration.ofSeconds(1));
    ok.setQueue(new QueueSettings());
    ok.getQueue().setMaxWait(Duration.ofMillis(500));
    PolicySettings bad = policy(5, Duration.ofSeconds(1));
    bad.setQueue(new QueueSettings());
    bad.getQueue().setMaxQueued(0);
    Map<String, PolicySettings> policies = new LinkedHashMap<>();
    policies.put("ok", ok);
    policies.put("bad", bad);
    SettingsReader r = SettingsReader.properties("headroom");
    PolicySet set = r.policies(WHY, Optional.empty(), policies);
    assertThat(set.queues()).containsOnlyKeys("ok");
    assertThat(set.queues().get("ok")).isEqualTo(new Waiting(Duration.ofMillis(500), Waiting.DEFAULT_MAX_QUEUED));
    assertThat(r.problems()).extracting(SettingsProblem::toString).containsExactly(
        "headroom.policies.bad.queue.max-wait: expected the longest a refused request waits for its turn, above 0 and "
            + "at most 1h, such as 500ms, got nothing",
        "headroom.policies.bad.queue.max-queued: expected an integer from 1 to 1000000, got '0'");
  }

  @Test
  void aBindingSpellsTheModelsKeysItsOwnWay() {
    PolicySettings p = policy(5, Duration.ofMinutes(1));
    p.setCachedResultUrl("https://elsewhere.example/cache");
    p.setEscalationThreshold(5);
    p.setEscalationBlock(Duration.ofMillis(10));
    SettingsReader r = SettingsReader.of("", key -> switch (key) {
      case "cachedResultUrl" -> "guidance.cachedResultUrl";
      case "escalationBlock" -> "escalation.block";
      default -> key;
    });
    r.policies(WHY, Optional.empty(), Map.of("p", p));
    assertThat(r.problems()).extracting(SettingsProblem::path)
        .containsExactly("policies.p.guidance.cachedResultUrl", "policies.p.escalation.block");
    assertThat(r.problems().get(0).expected()).contains("SC-6");
  }

  @Test
  void whatNoFieldHoldsAloneIsReportedAtThePolicy() {
    PolicySettings p = policy(5, Duration.ofMinutes(1));
    p.setAlgorithm("concurrency");
    SettingsReader r = SettingsReader.properties("headroom.cloud-gateway");
    r.policies(WHY, Optional.empty(), Map.of("p", p));
    assertThat(r.problems()).singleElement().satisfies(problem -> {
      assertThat(problem.path()).isEqualTo("headroom.cloud-gateway.policies.p");
      assertThat(problem.expected()).contains("concurrent-requests");
    });
  }

  @Test
  void plansOverridePoliciesAndNameTheirProblems() {
    SettingsReader r = SettingsReader.properties("headroom");
    PolicySet set = r.policies(WHY, Optional.empty(), Map.of("api", policy(10, Duration.ofMinutes(1))));
    PlansSettings plans = new PlansSettings();
    PlansSettings.Plan free = new PlansSettings.Plan();
    PlansSettings.Plan pro = new PlansSettings.Plan();
    PlansSettings.Override more = new PlansSettings.Override();
    more.setQuota(1000L);
    pro.getPolicies().put("api", more);
    plans.getCatalog().put("free", free);
    plans.getCatalog().put("pro", pro);
    plans.setFallback("free");
    Optional<Plans> read = r.plans(plans, set.policies());
    r.throwIfProblems();
    assertThat(read.orElseThrow().policy(read.get().plan("pro").orElseThrow(), set.policies().get("api")).quota())
        .isEqualTo(1000);

    PlansSettings.Override none = new PlansSettings.Override();
    none.setQuota(0L);
    pro.getPolicies().put("api", none);
    pro.getPolicies().put("nowhere", more);
    plans.setFallback("gold");
    SettingsReader bad = SettingsReader.properties("headroom");
    bad.policies(WHY, Optional.empty(), Map.of("api", policy(10, Duration.ofMinutes(1))));
    assertThat(bad.plans(plans, set.policies())).isEmpty();
    assertThat(bad.problems()).extracting(SettingsProblem::path).containsExactly("headroom.plans.fallback",
        "headroom.plans.catalog.pro.policies.api.quota", "headroom.plans.catalog.pro.policies.nowhere");
  }

  @Test
  void dialectsAndFieldRulesAreCheckedEachAtItsPath() {
    SettingsReader r = SettingsReader.properties("headroom");
    assertThat(r.dialects("headroom.dialects", List.of("ietf", "draft-99"))).hasSize(1);
    r.dialects("headroom.headers.dialects", List.of("ietf,draft-07"));
    FieldRuleSettings rules = new FieldRuleSettings();
    rules.setJitter(Duration.ofHours(2));
    rules.setOnlyNearExhaustion(0.8);
    assertThat(r.fields("headroom.headers", rules).onlyNearExhaustion()).hasValue(0.8);
    assertThat(r.problems()).extracting(SettingsProblem::path).containsExactly("headroom.dialects[1]",
        "headroom.headers.dialects", "headroom.headers.jitter");
    assertThat(r.problems().get(0)).hasToString("headroom.dialects[1]: expected one of " + HeaderDialect.NAMES
        + ", got 'draft-99'");
    assertThat(Set.of(r.onFailure("headroom.store.on-failure", "maybe"))).isNotEmpty();
    assertThat(r.problems()).last().hasToString("headroom.store.on-failure: expected allow or refuse, got 'maybe'");
  }
}
