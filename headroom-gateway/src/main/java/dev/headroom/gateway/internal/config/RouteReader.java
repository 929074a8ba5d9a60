package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.AdaptiveConcurrency;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.enforcement.settings.AdaptiveSettings;
import dev.headroom.enforcement.settings.RouteSettings;
import dev.headroom.enforcement.settings.SettingsReader;
import dev.headroom.gateway.config.PartitionKeyMode;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Route;
import dev.headroom.gateway.config.RouteCost;
import dev.headroom.gateway.config.Upstream;
import dev.headroom.gateway.config.Vend;
import dev.headroom.http.DiscoveryPaths;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.http.path.PathTemplate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Reads {@code routes}, in the order they are matched: method(s), path template, upstream, policies
 * and header dialects, each reference resolved against the upstreams and policies already read. A
 * vend route's settings are read by {@link VendReader}, a route's {@code pk} by {@link PartitionKeyReader}.
 * The YAML's own reads are types and forms; an http route with policies is then read whole by the
 * settings model's converter ({@link SettingsReader#route}, as Spring Boot's {@code headroom.routes}
 * are), whose {@link RouteRules} give the route its field rules.
 */
final class RouteReader extends SectionReader {
  /** Methods a route may name. */
  static final Set<String> METHODS =
      Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");

  /** Paths the gateway serves itself (Graceful Boundaries section 1). */
  static final Set<String> RESERVED_PATHS = Set.of(DiscoveryPaths.WELL_KNOWN, DiscoveryPaths.API);

  private final VendReader vends;
  private final PartitionKeyReader pkReader;

  RouteReader(List<String> problems, VendReader vends, PartitionKeyReader pk) {
    super(problems);
    this.vends = vends;
    this.pkReader = pk;
  }

  /**
   * @param policies the valid policies
   * @param declaredPolicies every name under {@code policies}, valid or not: a route naming a
   *     policy whose own problems were already reported gets no second, misleading one
   */
  List<Route> routes(JsonNode n, Map<String, Upstream> upstreams, Map<String, Policy> policies,
      Set<String> declaredPolicies) {
    List<Route> out = new ArrayList<>();
    if (n.isMissingNode() || !n.isArray() || n.isEmpty()) {
      problem("routes", n, "a list of one or more routes, each with method, path and upstream");
      return out;
    }
    Set<String> seen = new LinkedHashSet<>();
    Set<String> routeNames = new LinkedHashSet<>();
    for (int i = 0; i < n.size(); i++) {
      String path = "routes[" + i + "]";
      int before = problems.size();
      JsonNode r = n.get(i);
      if (!object(path, r)) {
        continue;
      }
      keys(path, r, "name", "type", "method", "methods", "path", "upstream", "policies", "dialect", "normaliseErrors", "omitOnRedirect",
          "pk", "vend", "listed", "jitter", "onlyNearExhaustion", "capRemainingToResetRatio", "cost", "upgrade",
          "adaptive");
      String type = optionalText(path + ".type", r.path("type")).orElse("http");
      if (!type.equals("http") && !type.equals("vend")) {
        problem(path + ".type", r.path("type"), "http (forwarded as it is) or vend (the vend rate-limit extension)");
      }
      boolean isVend = type.equals("vend");
      Set<String> methods = new LinkedHashSet<>();
      if (!r.path("method").isMissingNode() && !r.path("methods").isMissingNode()) {
        problem(path + ".methods", r.path("methods"), "either method or methods, not both");
      }
      if (!r.path("method").isMissingNode()) {
        method(path + ".method", r.path("method"), methods);
      } else if (r.path("methods").isArray() && !r.path("methods").isEmpty()) {
        for (int j = 0; j < r.path("methods").size(); j++) {
          method(path + ".methods[" + j + "]", r.path("methods").get(j), methods);
        }
      } else if (isVend) {
        methods.add("POST"); // vend calls are POSTed (vend-notes.md, HTTP transport)
      } else {
        problem(path + ".method", r.path("method"), "a method such as GET, or methods: a list of them");
      }
      if (isVend && !methods.equals(Set.of("POST"))) {
        problem(path + ".method", r.path("method").isMissingNode() ? r.path("methods") : r.path("method"),
            "POST only on a vend route (vend calls are POSTed)");
      }
      Optional<Vend> vend = Optional.empty();
      if (isVend) {
        if (!r.path("policies").isMissingNode()) {
          problem(path + ".policies", r.path("policies"), "no policies on a vend route: its limits are per scope, "
              + "under vend.limits");
        }
        vend = vends.vend(path + ".vend", r.path("vend"), policies);
        if (!r.path("adaptive").isMissingNode()) {
          problem(path + ".adaptive", r.path("adaptive"), "no adaptive on a vend route: its limits are per scope, "
              + "under vend.limits");
        }
      } else if (!r.path("vend").isMissingNode()) {
        problem(path + ".vend", r.path("vend"), "no vend settings unless type is vend");
      }
      String template = requiredText(path + ".path", r.path("path"), "a path template such as /items/{id}");
      if (template != null) {
        PathTemplate parsed = null;
        try {
          parsed = PathTemplate.parse(template);
        } catch (IllegalArgumentException e) {
          problem(path + ".path", r.path("path"), "a path template of the one grammar (" + e.getMessage() + ")");
        }
        if (parsed != null && RESERVED_PATHS.contains(parsed.toString())) {
          problem(path + ".path", r.path("path"), "a path other than " + RESERVED_PATHS
              + " (the gateway serves the discovery document there)");
        }
      }
      String upstream = requiredText(path + ".upstream", r.path("upstream"), "the name of an upstream");
      if (upstream != null && !upstreams.containsKey(upstream)) {
        problem(path + ".upstream", r.path("upstream"), "one of the upstreams: " + upstreams.keySet());
      }
      List<String> names = new ArrayList<>();
      JsonNode ps = r.path("policies");
      if (!ps.isMissingNode()) {
        if (!ps.isArray()) {
          problem(path + ".policies", ps, "a list of policy names");
        } else {
          for (int j = 0; j < ps.size(); j++) {
            JsonNode p = ps.get(j);
            String pp = path + ".policies[" + j + "]";
            if (!p.isTextual()) {
              problem(pp, p, "a policy name");
            } else if (!policies.containsKey(p.asText())) {
              if (!declaredPolicies.contains(p.asText())) {
                problem(pp, p, "one of the policies: " + declaredPolicies);
              }
            } else if (names.contains(p.asText())) {
              problem(pp, p, "each policy once per route");
            } else {
              names.add(p.asText());
            }
          }
        }
      }
      List<String> dialects = dialects(path + ".dialect", r.path("dialect"));
      boolean normalise = bool(path + ".normaliseErrors", r.path("normaliseErrors"), false);
      boolean omitOnRedirect = bool(path + ".omitOnRedirect", r.path("omitOnRedirect"), false);
      if (template != null) {
        for (String m : methods) {
          if (!seen.add(m + " " + template)) {
            problem(path, r, "a route whose method and path (" + m + " " + template
                + ") no earlier route already has");
          }
        }
      }
      String name = optionalText(path + ".name", r.path("name"))
          .orElse(String.join(",", methods) + " " + template);
      if (!routeNames.add(name)) {
        problem(path + ".name", r.path("name"), "a route name no earlier route has");
      }
      Optional<PartitionKeyMode> pk = r.path("pk").isMissingNode() ? Optional.empty() : pkReader.pkMode(path + ".pk", r.path("pk"));
      boolean listed = bool(path + ".listed", r.path("listed"), true);
      RouteCost cost = new RulesReader(problems).cost(path + ".cost", r.path("cost"));
      Set<String> upgrade = upgrade(path + ".upgrade", r.path("upgrade"), methods, isVend);
      RouteSettings settings = fieldOptions(path, r);
      settings.setAdaptive(isVend ? null : adaptive(path + ".adaptive", r.path("adaptive")));
      FieldRules fields = FieldRules.none();
      Optional<AdaptiveConcurrency> adaptive = Optional.empty();
      if (problems.size() == before && (!names.isEmpty() || settings.getAdaptive() != null)) {
        settings.setPath(template);
        settings.setMethods(List.copyOf(methods));
        settings.setPolicies(names);
        settings.setDialects(dialects);
        settings.setListed(listed);
        settings.setOmitOnRedirect(omitOnRedirect);
        settings.setCost(cost.units());
        cost.header().ifPresent(settings::setCostHeader);
        cost.chargeHeader().ifPresent(settings::setChargeHeader);
        if (cost.header().isPresent() || cost.chargeHeader().isPresent()) {
          settings.setMaxCost(cost.max());
        }
        Optional<RouteRules> rules = model(path, settings, policies, before);
        fields = rules.map(RouteRules::fields).orElse(fields);
        adaptive = rules.flatMap(RouteRules::adaptive);
      } else {
        // a route the model cannot read whole (no policies, or problems of its own): its field rules alone
        SettingsReader model = SettingsReader.of("", RouteReader::yamlKey);
        fields = model.fields(path, settings);
        if (settings.getAdaptive() != null) {
          model.adaptive(path + ".adaptive", settings.getAdaptive());
        }
        addModelProblems(model.problems(), before);
      }
      out.add(new Route(name, methods, template, upstream, names, dialects, normalise, omitOnRedirect, pk, vend, listed,
          fields, cost, upgrade, adaptive));
    }
    return out;
  }

  /**
   * The protocols a request on the route may upgrade its connection to ({@code upgrade}, RFC 9110
   * section 7.8): a list of protocol names such as {@code websocket}, each a token, kept in lower
   * case (the names are case-insensitive). Not on a vend route, and only on a route that takes GET
   * (a WebSocket handshake is a GET, RFC 6455 section 4.1). {@code h2c} is refused: RFC 9113
   * section 3.1 deprecates it, and the gateway ignores a request's offer of it.
   */
  private Set<String> upgrade(String path, JsonNode n, Set<String> methods, boolean isVend) {
    if (n.isMissingNode()) {
      return Set.of();
    }
    if (isVend) {
      problem(path, n, "no upgrade on a vend route: a vend call is one request and one response");
      return Set.of();
    }
    if (!n.isArray() || n.isEmpty()) {
      problem(path, n, "a list of protocols such as [websocket]");
      return Set.of();
    }
    Set<String> out = new LinkedHashSet<>();
    for (int i = 0; i < n.size(); i++) {
      JsonNode p = n.get(i);
      String pp = path + "[" + i + "]";
      String name = p.isTextual() ? p.asText().toLowerCase(Locale.ROOT) : "";
      if (!UPGRADE_TOKEN.matcher(name).matches()) {
        problem(pp, p, "a protocol name (a token, such as websocket)");
      } else if (name.equals("h2c")) {
        problem(pp, p, "a protocol other than h2c (deprecated by RFC 9113 section 3.1; offers of it are ignored)");
      } else if (!out.add(name)) {
        problem(pp, p, "each protocol once");
      }
    }
    if (!out.isEmpty() && !methods.contains("GET")) {
      problem(path, n, "upgrade only on a route that takes GET (a WebSocket handshake is a GET, RFC 6455 section 4.1)");
    }
    return out;
  }

  /** A protocol name of Upgrade (RFC 9110 section 7.8): a token, with an optional "/" version token. */
  private static final Pattern UPGRADE_TOKEN =
      Pattern.compile("[!#$%&'*+.^_`|~0-9a-z-]+(/[!#$%&'*+.^_`|~0-9a-z-]+)?");

  /**
   * The settings model's reading of one route (headroom-enforcement's {@link SettingsReader}, the
   * converter Spring Boot's {@code headroom.routes} and Spring Cloud Gateway's routes go through):
   * the {@link RouteRules} every front end decides with, checked whole; each of its problems added
   * in this reader's form, named by its YAML path.
   */
  private Optional<RouteRules> model(String path, RouteSettings settings, Map<String, Policy> policies, int before) {
    Map<String, QuotaPolicy> quotas = new LinkedHashMap<>();
    policies.forEach((n, p) -> quotas.put(n, p.quota()));
    SettingsReader model = SettingsReader.of("", RouteReader::yamlKey);
    Optional<RouteRules> rules = model.route(path, settings, quotas);
    addModelProblems(model.problems(), before);
    return rules;
  }

  /** The YAML key of one of the settings model's route keys. */
  private static String yamlKey(String key) {
    return switch (key) {
      case "dialects" -> "dialect";
      case "cost" -> "cost.units";
      case "costHeader" -> "cost.header";
      case "chargeHeader" -> "cost.chargeHeader";
      case "maxCost" -> "cost.max";
      case "capRemainingToResetRatio" -> "capRemainingToResetRatio.factor";
      case "capMinWindow" -> "capRemainingToResetRatio.minWindow";
      default -> key;
    };
  }

  /**
   * The route's optional field rules as the settings model holds them, read for their YAML form
   * only (what the values mean is the model's, {@link #model}): {@code jitter} (a duration of whole
   * seconds, draft-09 section 8.5), {@code onlyNearExhaustion} (a share in (0, 1], section 6.2) and
   * {@code capRemainingToResetRatio: {factor, minWindow}} (sections 6 and 8.5; without
   * {@code minWindow} the cap applies to every window).
   */
  private RouteSettings fieldOptions(String path, JsonNode r) {
    RouteSettings f = new RouteSettings();
    if (!r.path("jitter").isMissingNode()) {
      f.setJitter(duration(path + ".jitter", r.path("jitter"), null));
    }
    JsonNode near = r.path("onlyNearExhaustion");
    if (!near.isMissingNode()) {
      if (!near.isNumber()) {
        problem(path + ".onlyNearExhaustion", near, "a share above 0 and at most 1, such as 0.8");
      } else {
        f.setOnlyNearExhaustion(near.asDouble());
      }
    }
    JsonNode cap = r.path("capRemainingToResetRatio");
    if (!cap.isMissingNode() && object(path + ".capRemainingToResetRatio", cap)) {
      keys(path + ".capRemainingToResetRatio", cap, "factor", "minWindow");
      JsonNode factor = cap.path("factor");
      f.setCapMinWindow(duration(path + ".capRemainingToResetRatio.minWindow", cap.path("minWindow"), Duration.ZERO));
      if (!factor.isNumber() || Double.isInfinite(factor.asDouble())) {
        problem(path + ".capRemainingToResetRatio.factor", factor,
            "a number of at least 1 (1 = the policy's nominal throughput q/w)");
      } else {
        f.setCapRemainingToResetRatio(factor.asDouble());
      }
    }
    return f;
  }

  /**
   * {@code adaptive: {minLimit, maxLimit, initialLimit, smoothing, tolerance, window, windowSamples,
   * longWindow, backoff, scaleQuotas, name, shares}} read for its YAML form (an object of numbers, a
   * duration, a boolean, a name and {@code shares}, an object of numbers by plan name; the plans it
   * names are checked against {@code plans.catalog} once that is read, {@code ConfigReader}); what the values mean, and whether they go together, is the settings
   * model's ({@link #model}). Null when absent or not an object.
   */
  private AdaptiveSettings adaptive(String path, JsonNode n) {
    if (n.isMissingNode() || !object(path, n)) {
      return null;
    }
    keys(path, n, "name", "minLimit", "maxLimit", "initialLimit", "smoothing", "tolerance", "window",
        "windowSamples", "longWindow", "backoff", "scaleQuotas", "shares");
    AdaptiveSettings a = new AdaptiveSettings();
    optionalText(path + ".name", n.path("name")).ifPresent(a::setName);
    a.setMinLimit(count(path + ".minLimit", n.path("minLimit")));
    a.setMaxLimit(count(path + ".maxLimit", n.path("maxLimit")));
    a.setInitialLimit(count(path + ".initialLimit", n.path("initialLimit")));
    a.setWindowSamples(count(path + ".windowSamples", n.path("windowSamples")));
    a.setLongWindow(count(path + ".longWindow", n.path("longWindow")));
    a.setSmoothing(number(path + ".smoothing", n.path("smoothing")));
    a.setTolerance(number(path + ".tolerance", n.path("tolerance")));
    a.setBackoff(number(path + ".backoff", n.path("backoff")));
    a.setWindow(duration(path + ".window", n.path("window"), null));
    if (!n.path("scaleQuotas").isMissingNode()) {
      a.setScaleQuotas(bool(path + ".scaleQuotas", n.path("scaleQuotas"), true));
    }
    JsonNode shares = n.path("shares");
    if (!shares.isMissingNode() && object(path + ".shares", shares)) {
      shares.fields().forEachRemaining(e -> {
        Double share = number(path + ".shares." + e.getKey(), e.getValue());
        if (share != null) {
          a.getShares().put(e.getKey(), share);
        }
      });
    }
    return a;
  }

  /** A whole number that fits an int, or null when absent (a problem when it is something else). */
  private Integer count(String path, JsonNode n) {
    if (n.isMissingNode()) {
      return null;
    }
    if (!n.isIntegralNumber() || !n.canConvertToInt()) {
      problem(path, n, "a whole number");
      return null;
    }
    return n.intValue();
  }

  /** A finite number, or null when absent (a problem when it is something else). */
  private Double number(String path, JsonNode n) {
    if (n.isMissingNode()) {
      return null;
    }
    if (!n.isNumber() || !Double.isFinite(n.asDouble())) {
      problem(path, n, "a number");
      return null;
    }
    return n.asDouble();
  }

  /** One dialect name or a list of them; together they must not write one field in two forms. */
  private List<String> dialects(String path, JsonNode n) {
    List<String> names = new ArrayList<>();
    if (n.isMissingNode()) {
      return List.of(HeaderDialect.IETF.token());
    }
    List<JsonNode> items = new ArrayList<>();
    if (n.isArray() && !n.isEmpty()) {
      n.forEach(items::add);
    } else {
      items.add(n);
    }
    List<HeaderDialect> parsed = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      JsonNode d = items.get(i);
      String p = n.isArray() ? path + "[" + i + "]" : path;
      if (!d.isTextual()) {
        problem(p, d, "a dialect name: " + dialectNames());
        continue;
      }
      try {
        HeaderDialect h = HeaderDialect.fromToken(d.asText());
        parsed.add(h);
        names.add(h.token());
      } catch (IllegalArgumentException e) {
        problems.add(p + ": " + e.getMessage());
      }
    }
    if (parsed.size() > 1) {
      try {
        RateLimitHeaders.builder().dialects(parsed).build();
      } catch (IllegalArgumentException e) {
        problems.add(path + ": " + e.getMessage());
      }
    }
    return names;
  }

  private static String dialectNames() {
    return Arrays.stream(HeaderDialect.values()).map(HeaderDialect::token).toList().toString();
  }

  private void method(String path, JsonNode n, Set<String> into) {
    if (!n.isTextual() || !METHODS.contains(n.asText())) {
      problem(path, n, "one of " + new TreeSet<>(METHODS));
    } else if (!into.add(n.asText())) {
      problem(path, n, "each method once");
    }
  }
}
