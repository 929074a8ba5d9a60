package dev.headroom.enforcement.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.headroom.enforcement.RouteRules;
import dev.headroom.http.headers.HeaderDialect;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Routes of the settings model into {@link RouteRules} through the one converter: every rule the
 * gateway's YAML states (a policy's method condition, counting per policy, the response charge
 * header, the route's pk and redirect rule; draft-ietf-httpapi-ratelimit-headers-09 sections 5 and
 * 6), and typed problems naming each field.
 */
class RouteSettingsTest {

  private static final String WHY = "Limits keep the service responsive for every caller.";

  private static Map<String, PolicySettings> policies(String... names) {
    Map<String, PolicySettings> out = new LinkedHashMap<>();
    for (String n : names) {
      PolicySettings p = new PolicySettings();
      p.setQuota(10L);
      p.setWindow(Duration.ofMinutes(1));
      out.put(n, p);
    }
    return out;
  }

  @Test
  void everyRuleOfARouteIsConverted() {
    RouteSettings s = new RouteSettings();
    s.setPath("/login");
    s.setMethods(List.of("get", "POST"));
    s.setPolicies(List.of("per-ip", "writes", "per-account"));
    s.setWhen(Map.of("writes", List.of("post")));
    s.setCount(Map.of("per-account", "failures"));
    s.setChargeHeader("X-Tokens");
    s.setMaxCost(500L);
    s.setPk("hash");
    s.setOmitOnRedirect(true);
    s.setDialects(List.of("ietf,x-ratelimit"));
    s.setListed(false);
    s.setJitter(Duration.ofSeconds(3));
    SettingsReader r = SettingsReader.properties("headroom");
    PolicySet set = r.policies(WHY, Optional.empty(), policies("per-ip", "writes", "per-account"));
    List<RouteRules> routes = r.routes("headroom.routes", List.of(s), set.policies());
    r.throwIfProblems();
    RouteRules rules = routes.get(0);
    assertThat(rules.methods()).containsExactly("GET", "POST");
    assertThat(rules.appliesTo("writes", "GET")).isFalse();
    assertThat(rules.appliesTo("writes", "POST")).isTrue();
    assertThat(rules.appliesTo("per-ip", "GET")).isTrue();
    assertThat(rules.counting("per-account")).isEqualTo(RouteRules.Counting.FAILURES);
    assertThat(rules.counting("per-ip")).isEqualTo(RouteRules.Counting.ALL);
    assertThat(rules.chargeHeader()).hasValue("X-Tokens");
    assertThat(rules.maxCost()).isEqualTo(500);
    assertThat(rules.exposure()).isPresent();
    assertThat(rules.omitOnRedirect()).hasValue(true);
    assertThat(rules.dialects()).hasValue(EnumSet.of(HeaderDialect.IETF, HeaderDialect.X_RATELIMIT));
    assertThat(rules.listed()).isFalse();
    assertThat(rules.fields().jitter()).hasValue(Duration.ofSeconds(3));
  }

  @Test
  void everyProblemOfARouteIsReportedInTheBindingsSpelling() {
    RouteSettings s = new RouteSettings();
    s.setPath("/a/{");
    s.setMethods(List.of("GE T"));
    s.setPolicies(List.of("api", "nope"));
    s.setWhen(Map.of("other", List.of("POST")));
    s.setCount(Map.of("api", "sometimes"));
    s.setChargeHeader("X-Tokens");
    s.setPk("plain");
    SettingsReader r = SettingsReader.properties("headroom");
    PolicySet set = r.policies(WHY, Optional.empty(), policies("api"));
    assertThat(r.routes("headroom.routes", List.of(s), set.policies())).isEmpty();
    SettingsException e = catchThrowableOfType(r::throwIfProblems, SettingsException.class);
    assertThat(e.problems()).extracting(SettingsProblem::path).containsExactly(
        "headroom.routes[0].path", "headroom.routes[0].methods[0]", "headroom.routes[0].policies[1]",
        "headroom.routes[0].count.api", "headroom.routes[0].when.other", "headroom.routes[0].max-cost",
        "headroom.routes[0].pk");
    assertThat(e.problems().get(3).expected()).contains("failures");
    assertThat(e.problems().get(6)).hasToString("headroom.routes[0].pk: expected off, hash or hmac, got 'plain'");
  }

  @Test
  void aRouteNamingAPolicyWithProblemsOfItsOwnGetsNoSecondProblem() {
    Map<String, PolicySettings> ps = policies("api");
    ps.get("api").setQuota(0L);
    RouteSettings s = new RouteSettings();
    s.setPath("/a");
    s.setPolicies(List.of("api"));
    s.setCount(Map.of("api", "failures"));
    SettingsReader r = SettingsReader.properties("headroom");
    PolicySet set = r.policies(WHY, Optional.empty(), ps);
    r.routes("headroom.routes", List.of(s), set.policies());
    SettingsException e = catchThrowableOfType(r::throwIfProblems, SettingsException.class);
    assertThat(e.problems()).extracting(SettingsProblem::path).containsExactly("headroom.policies.api.quota");
  }

  @Test
  void headersMustBeHeaderNamesAndAnOriginOnlyAnOrigin_rfc9110_section5_1_gb_sc6() {
    RouteSettings s = new RouteSettings();
    s.setPath("/a");
    s.setPolicies(List.of("api"));
    s.setCostHeader("X Cost");
    s.setChargeHeader("X-Tokens:");
    s.setMaxCost(10L);
    ServiceSettings service = new ServiceSettings();
    service.setOrigin("https://api.example.com/v1");
    SettingsReader r = SettingsReader.properties("headroom");
    assertThat(r.origin(service)).isEmpty();
    PolicySet set = r.policies(WHY, Optional.empty(), policies("api"));
    assertThat(r.routes("headroom.routes", List.of(s), set.policies())).isEmpty();
    SettingsException e = catchThrowableOfType(r::throwIfProblems, SettingsException.class);
    assertThat(e.problems()).extracting(SettingsProblem::path).containsExactly("headroom.service.origin",
        "headroom.routes[0].cost-header", "headroom.routes[0].charge-header");
    service.setOrigin("https://api.example.com:8443");
    assertThat(SettingsReader.properties("headroom").origin(service)).isPresent();
  }
}
