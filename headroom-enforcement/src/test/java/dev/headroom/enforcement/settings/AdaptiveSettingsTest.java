package dev.headroom.enforcement.settings;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.enforcement.AdaptiveConcurrency;
import dev.headroom.enforcement.RouteRules;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A route's {@code adaptive} settings into {@link AdaptiveConcurrency} through the one converter
 * every binding shares: Spring Boot's {@code headroom.routes[i].adaptive.*} in kebab-case, the
 * gateway's {@code routes[i].adaptive}; a route may have adaptive concurrency alone; each bad value
 * is a problem naming its key, the value and what was expected.
 */
class AdaptiveSettingsTest {

  private static RouteSettings route(AdaptiveSettings a, String... policies) {
    RouteSettings s = new RouteSettings();
    s.setPath("/work");
    s.setPolicies(List.of(policies));
    s.setAdaptive(a);
    return s;
  }

  private static Map<String, PolicySettings> api() {
    PolicySettings p = new PolicySettings();
    p.setQuota(10L);
    p.setWindow(Duration.ofMinutes(1));
    return Map.of("api", p);
  }

  @Test
  void everyValueIsConvertedAndARouteMayHaveAdaptiveConcurrencyAlone() {
    AdaptiveSettings a = new AdaptiveSettings();
    a.setName("upstream");
    a.setMinLimit(2);
    a.setMaxLimit(50);
    a.setInitialLimit(10);
    a.setSmoothing(0.5);
    a.setTolerance(2.0);
    a.setWindow(Duration.ofMillis(200));
    a.setWindowSamples(5);
    a.setLongWindow(100);
    a.setBackoff(0.8);
    a.setScaleQuotas(false);
    SettingsReader r = SettingsReader.properties("headroom");
    var set = r.policies("Limits keep the service responsive.", Optional.empty(), api());
    List<RouteRules> routes = r.routes("headroom.routes", List.of(route(a), route(new AdaptiveSettings(), "api")),
        set.policies());
    r.throwIfProblems();
    assertThat(routes.get(0).policies()).isEmpty();
    assertThat(routes.get(0).adaptive()).contains(AdaptiveConcurrency.builder().name("upstream").minLimit(2)
        .maxLimit(50).initialLimit(10).smoothing(0.5).tolerance(2.0).window(Duration.ofMillis(200)).windowSamples(5)
        .longWindow(100).backoff(0.8).scaleQuotas(false).build());
    assertThat(routes.get(1).adaptive()).contains(AdaptiveConcurrency.builder().build());
  }

  @Test
  void badValuesAreProblemsNamingTheirKeys() {
    AdaptiveSettings a = new AdaptiveSettings();
    a.setMinLimit(0);
    a.setSmoothing(1.5);
    a.setWindow(Duration.ofMinutes(5));
    SettingsReader r = SettingsReader.properties("headroom");
    r.routes("headroom.routes", List.of(route(a)), Map.of());
    assertThat(r.problems()).extracting(Object::toString).containsExactly(
        "headroom.routes[0].adaptive.min-limit: expected a whole number of requests of at least 1, got '0'",
        "headroom.routes[0].adaptive.smoothing: expected a number above 0 and at most 1, such as 0.2, got '1.5'",
        "headroom.routes[0].adaptive.window: expected a duration from 1ms to 1m, such as 1s, got 'PT5M'");
  }

  @Test
  void limitsThatDoNotGoTogetherAreOneProblem() {
    AdaptiveSettings a = new AdaptiveSettings();
    a.setMinLimit(10);
    a.setMaxLimit(5);
    SettingsReader r = SettingsReader.of("", key -> key);
    r.routes("routes", List.of(route(a)), Map.of());
    assertThat(r.problems()).extracting(Object::toString).containsExactly("routes[0].adaptive: expected limits that go "
        + "together (maxLimit: 5 is not valid; expected a whole number of requests of at least minLimit (10)), got "
        + "'minLimit 10, maxLimit 5, initialLimit null'");
  }

  private static PlansSettings plans(String... names) {
    PlansSettings p = new PlansSettings();
    for (String n : names) {
      p.getCatalog().put(n, new PlansSettings.Plan());
    }
    p.setFallback(names.length == 0 ? null : names[0]);
    return p;
  }

  private static AdaptiveSettings shares(Map<String, Double> shares) {
    AdaptiveSettings a = new AdaptiveSettings();
    a.getShares().putAll(new TreeMap<>(shares));
    return a;
  }

  @Test
  void sharesAreConvertedByPlanNameAfterThePlans() {
    SettingsReader r = SettingsReader.properties("headroom");
    var set = r.policies("Limits keep the service responsive.", Optional.empty(), api());
    r.plans(plans("free", "pro"), set.policies());
    List<RouteRules> routes = r.routes("headroom.routes", List.of(route(shares(Map.of("free", 0.2, "pro", 0.8)))),
        set.policies());
    r.throwIfProblems();
    assertThat(routes.get(0).adaptive().orElseThrow().shares()).containsExactly(Map.entry("free", 0.2),
        Map.entry("pro", 0.8));
  }

  @Test
  void badSharesAreProblemsNamingTheirKeys() {
    SettingsReader r = SettingsReader.properties("headroom");
    var set = r.policies("Limits keep the service responsive.", Optional.empty(), api());
    r.plans(plans("free", "pro"), set.policies());
    r.routes("headroom.routes", List.of(route(shares(Map.of("free", 1.5))), route(shares(Map.of("free", 0.5, "pro", 0.7))),
        route(shares(Map.of("gold", 0.5)))), set.policies());
    assertThat(r.problems()).extracting(Object::toString).containsExactly(
        "headroom.routes[0].adaptive.shares.free: expected a fraction of the limit above 0 and at most 1, such as 0.2, "
            + "for a plan name of letters, digits, - and _ starting with a letter, got '1.5'",
        "headroom.routes[1].adaptive.shares: expected fractions that together come to at most 1, got '{free=0.5, pro=0.7}'",
        "headroom.routes[2].adaptive.shares.gold: expected one of the plans [free, pro], got 'gold'");

    SettingsReader none = SettingsReader.properties("headroom");
    none.plans(plans(), Map.of());
    none.routes("headroom.routes", List.of(route(shares(Map.of("free", 0.5)))), Map.of());
    assertThat(none.problems()).extracting(Object::toString).containsExactly("headroom.routes[0].adaptive.shares: "
        + "expected plans under headroom.plans.catalog, since a request's plan picks its share, got '{free=0.5}'");
  }
}
