package dev.headroom.enforcement.settings;

import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.AdaptiveConcurrency;
import dev.headroom.enforcement.AdaptiveConcurrency.Setting;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.http.path.PathTemplate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * {@link SettingsReader#route}: one {@link RouteSettings} into a {@link RouteRules}, each field
 * checked alone against what {@code RouteRules.Builder} accepts (so a refusal belongs to its field
 * by construction), then the route built whole; a route with a problem is left out.
 */
final class RouteConversion {

  /** The largest cost a route, a request header or a response header may state ({@code RouteRules}). */
  static final long MAX_COST = 1_000_000;

  /** An HTTP field name (RFC 9110 section 5.1: a token). */
  private static final String FIELD_NAME = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";

  private static final String COUNTING = "all, failures (responses 400 and up) or successes (below 400)";

  private final SettingsReader r;

  RouteConversion(SettingsReader reader) {
    this.r = reader;
  }

  Optional<RouteRules> route(String at, RouteSettings s, Map<String, QuotaPolicy> policies, Set<String> declared) {
    int before = r.problems().size();
    String template = s.getPath();
    if (template == null) {
      r.problem(r.path(at, "path"), null, "a path template such as /api/items/{id}");
      template = "/";
    } else {
      String t = template;
      r.checkExplained(r.path(at, "path"), template, "a path template such as /api/items/{id}",
          () -> PathTemplate.parse(t));
    }
    RouteRules.Builder b = RouteRules.builder(template);
    List<String> methods = s.getMethods() == null ? List.of() : s.getMethods();
    for (int i = 0; i < methods.size(); i++) {
      String m = methods.get(i);
      r.check(r.path(at, "methods") + "[" + i + "]", m, "a method token such as GET", () -> b.methods(m));
    }
    Set<String> known = declared.isEmpty() ? policies.keySet() : declared;
    List<String> names = s.getPolicies() == null ? List.of() : s.getPolicies();
    List<String> shadowNames = s.getShadowPolicies() == null ? List.of() : s.getShadowPolicies();
    if (names.isEmpty() && shadowNames.isEmpty() && s.getAdaptive() == null) {
      r.problem(r.path(at, "policies"), names, "names of one or more policies of " + r.path("policies") + " "
          + known);
    }
    Set<String> own = new LinkedHashSet<>();
    boolean read = names(r.path(at, "policies"), names, policies, known, own, b::policy);
    Set<String> all = new LinkedHashSet<>(own);
    read &= names(r.path(at, "shadowPolicies"), shadowNames, policies, known, all,
        p -> b.shadowPolicy(p, s.isShadowFields()));
    counting(at, s, b, own, policies, known);
    when(at, s, b, all, policies, known);
    cost(at, s, b);
    if (s.getAdaptive() != null) {
      adaptive(r.path(at, "adaptive"), s.getAdaptive()).ifPresent(b::adaptive);
    }
    if (s.getDialects() != null && !s.getDialects().isEmpty()) {
      b.dialects(r.dialects(r.path(at, "dialects"), s.getDialects()));
    }
    if (s.getPk() != null) {
      b.exposure(r.exposure(r.path(at, "pk"), s.getPk(), r.path(at, "pkHmacKey"), s.getPkHmacKey()));
    }
    if (s.getOmitOnRedirect() != null) {
      b.omitOnRedirect(s.getOmitOnRedirect());
    }
    b.key(s.getKey()).note(s.getNote()).listed(s.isListed()).fields(r.fields(at, s));
    if (r.problems().size() > before || !read) {
      return Optional.empty(); // a policy it names has problems of its own, reported already
    }
    // Every field is valid alone: what is left is how they go together.
    return r.checkExplained(at, s.getPath() + " " + methods, "a route whose settings go together", b::build);
  }

  /**
   * Each name a policy, each once; one declared with problems of its own is not named again.
   *
   * @return false when a name is such a policy
   */
  private boolean names(String at, List<String> names, Map<String, QuotaPolicy> policies, Set<String> known,
      Set<String> seen, Consumer<QuotaPolicy> add) {
    boolean read = true;
    for (int i = 0; i < names.size(); i++) {
      String name = names.get(i) == null ? null : names.get(i).strip();
      QuotaPolicy p = name == null ? null : policies.get(name);
      if (p == null) {
        if (name == null || !known.contains(name)) {
          r.problem(at + "[" + i + "]", name, "the name of a policy of " + r.path("policies") + " " + known);
        }
        read = false;
      } else if (!seen.add(name)) {
        r.problem(at + "[" + i + "]", name, "each policy once per route");
      } else {
        add.accept(p);
      }
    }
    return read;
  }

  private void counting(String at, RouteSettings s, RouteRules.Builder b, Set<String> own,
      Map<String, QuotaPolicy> policies, Set<String> known) {
    counting(r.path(at, "counting"), s.getCounting()).ifPresent(b::counting);
    if (s.getCount() == null) {
      return;
    }
    s.getCount().forEach((policy, token) -> {
      String p = r.path(at, "count") + "." + policy;
      Optional<RouteRules.Counting> c = counting(p, token);
      if (ofRoute(p, policy, own, policies, known)) {
        c.ifPresent(v -> b.counting(policy, v));
      }
    });
  }

  /**
   * Whether {@code policy} is one of {@code route}'s; when not, a problem, unless it was declared
   * with problems of its own (reported already).
   */
  private boolean ofRoute(String at, String policy, Set<String> route, Map<String, QuotaPolicy> policies,
      Set<String> known) {
    if (route.contains(policy)) {
      return true;
    }
    if (policies.containsKey(policy) || !known.contains(policy)) {
      r.problem(at, policy, "a policy of the route " + route);
    }
    return false;
  }

  private Optional<RouteRules.Counting> counting(String at, String token) {
    switch (token == null ? "" : token.strip().toLowerCase(Locale.ROOT)) {
      case "all":
        return Optional.of(RouteRules.Counting.ALL);
      case "failures":
        return Optional.of(RouteRules.Counting.FAILURES);
      case "successes":
        return Optional.of(RouteRules.Counting.SUCCESSES);
      default:
        r.problem(at, token, COUNTING);
        return Optional.empty();
    }
  }

  private void when(String at, RouteSettings s, RouteRules.Builder b, Set<String> all,
      Map<String, QuotaPolicy> policies, Set<String> known) {
    if (s.getWhen() == null) {
      return;
    }
    s.getWhen().forEach((policy, methods) -> {
      String p = r.path(at, "when") + "." + policy;
      int before = r.problems().size();
      boolean ofRoute = ofRoute(p, policy, all, policies, known);
      Collection<String> ms = methods == null ? List.of() : methods;
      if (ms.isEmpty()) {
        r.problem(p, ms, "one or more methods such as [POST, PUT]");
      }
      List<String> valid = new ArrayList<>();
      int i = 0;
      for (String m : ms) {
        String one = m;
        r.check(p + "[" + i++ + "]", m, "a method token such as POST",
            () -> RouteRules.builder("/").methods(one)).ifPresent(ok -> valid.add(one));
      }
      if (r.problems().size() == before && ofRoute) {
        b.when(policy, valid);
      }
    });
  }

  private void cost(String at, RouteSettings s, RouteRules.Builder b) {
    Long cost = s.getCost() == null ? 1L : s.getCost();
    if (cost < 0 || cost > MAX_COST) {
      r.problem(r.path(at, "cost"), cost, "a whole number of units from 0 to " + MAX_COST);
    } else {
      b.cost(cost);
    }
    String costHeader = s.getCostHeader();
    String chargeHeader = s.getChargeHeader();
    Long max = s.getMaxCost();
    if (costHeader == null && chargeHeader == null) {
      if (max != null) {
        r.problem(r.path(at, "maxCost"), max, "no max-cost without cost-header or charge-header");
      }
      return;
    }
    if (max == null || max < 1 || max > MAX_COST) {
      r.problem(r.path(at, "maxCost"), max, "the largest cost a header may state, from 1 to " + MAX_COST
          + ", required with cost-header or charge-header");
      return;
    }
    if (costHeader != null) {
      if (header(r.path(at, "costHeader"), costHeader)) {
        b.costHeader(costHeader, max);
      }
      if (cost > max) {
        r.problem(r.path(at, "cost"), cost, "at most max-cost (" + max + ")");
      }
    }
    if (chargeHeader != null && header(r.path(at, "chargeHeader"), chargeHeader)) {
      b.chargeHeader(chargeHeader, max);
    }
  }

  /**
   * {@code adaptive}: each value checked alone (against the widest limits, so that only its own
   * range can refuse it), then together (minLimit, maxLimit and initialLimit against each other).
   */
  Optional<AdaptiveConcurrency> adaptive(String at, AdaptiveSettings a) {
    int before = r.problems().size();
    AdaptiveConcurrency.Builder all = AdaptiveConcurrency.builder();
    adaptive(at, Setting.NAME, a.getName(), all, x -> x.name(a.getName()));
    adaptive(at, Setting.MIN_LIMIT, a.getMinLimit(), all, x -> x.minLimit(a.getMinLimit()));
    adaptive(at, Setting.MAX_LIMIT, a.getMaxLimit(), all, x -> x.maxLimit(a.getMaxLimit()));
    adaptive(at, Setting.INITIAL_LIMIT, a.getInitialLimit(), all, x -> x.initialLimit(a.getInitialLimit()));
    adaptive(at, Setting.SMOOTHING, a.getSmoothing(), all, x -> x.smoothing(a.getSmoothing()));
    adaptive(at, Setting.TOLERANCE, a.getTolerance(), all, x -> x.tolerance(a.getTolerance()));
    adaptive(at, Setting.WINDOW, a.getWindow(), all, x -> x.window(a.getWindow()));
    adaptive(at, Setting.WINDOW_SAMPLES, a.getWindowSamples(), all, x -> x.windowSamples(a.getWindowSamples()));
    adaptive(at, Setting.LONG_WINDOW, a.getLongWindow(), all, x -> x.longWindow(a.getLongWindow()));
    adaptive(at, Setting.BACKOFF, a.getBackoff(), all, x -> x.backoff(a.getBackoff()));
    if (a.getScaleQuotas() != null) {
      all.scaleQuotas(a.getScaleQuotas());
    }
    shares(r.path(at, Setting.SHARES.key()), a.getShares(), all);
    if (r.problems().size() > before) {
      return Optional.empty();
    }
    return r.checkExplained(at, "minLimit " + a.getMinLimit() + ", maxLimit " + a.getMaxLimit() + ", initialLimit "
        + a.getInitialLimit(), "limits that go together", all::build);
  }

  /**
   * {@code adaptive.shares}: each plan's fraction alone, then the fractions together, then the
   * plans named against {@code plans.catalog} when the binding read it first.
   */
  private void shares(String at, Map<String, Double> shares, AdaptiveConcurrency.Builder all) {
    if (shares == null || shares.isEmpty()) {
      return;
    }
    boolean each = true;
    for (Map.Entry<String, Double> e : shares.entrySet()) {
      each &= r.check(at + "." + e.getKey(), e.getValue(), "a fraction of the limit above 0 and at most 1, such as 0.2, "
          + "for a plan name of letters, digits, - and _ starting with a letter",
          () -> AdaptiveConcurrency.builder().shares(Map.of(e.getKey(), e.getValue())).build()).isPresent();
    }
    if (!each || r.check(at, shares, "fractions that together come to at most 1",
        () -> AdaptiveConcurrency.builder().shares(shares).build()).isEmpty()) {
      return;
    }
    Optional<Set<String>> plans = r.declaredPlans();
    if (plans.isPresent()) {
      if (plans.get().isEmpty()) {
        r.problem(at, shares, "plans under " + r.path(r.path("plans"), "catalog") + ", since a request's plan "
            + "picks its share");
        return;
      }
      for (String plan : shares.keySet()) {
        if (!plans.get().contains(plan)) {
          r.problem(at + "." + plan, plan, "one of the plans " + plans.get());
          return;
        }
      }
    }
    all.shares(shares);
  }

  /** One adaptive value, when set: checked alone, then given to {@code all}. */
  private void adaptive(String at, Setting s, Object value, AdaptiveConcurrency.Builder all,
      Consumer<AdaptiveConcurrency.Builder> set) {
    if (value == null) {
      return;
    }
    r.check(r.path(at, s.key()), value, s.expected(), () -> {
      AdaptiveConcurrency.Builder alone = AdaptiveConcurrency.builder().maxLimit(Integer.MAX_VALUE);
      set.accept(alone);
      return alone.build();
    }).ifPresent(ok -> set.accept(all));
  }

  private boolean header(String at, String name) {
    if (!name.matches(FIELD_NAME)) {
      r.problem(at, name, "a header name such as X-Cost");
      return false;
    }
    return true;
  }
}
