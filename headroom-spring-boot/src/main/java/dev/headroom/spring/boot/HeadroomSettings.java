package dev.headroom.spring.boot;

import dev.headroom.Algorithm;
import dev.headroom.Partitioning;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.Ticker;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.QuotaLimiter;
import dev.headroom.http.embed.Gate;
import dev.headroom.http.embed.GateBuilder;
import dev.headroom.http.embed.RouteRules;
import dev.headroom.http.plan.PlanResolver;
import dev.headroom.http.plan.Plans;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.env.Environment;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.partition.AllowList;
import dev.headroom.http.partition.ClientAddressResolver;
import dev.headroom.http.partition.PartitionKeyExposures;
import dev.headroom.http.headers.FieldOptions;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.servlet.HeadroomFilter;
import dev.headroom.servlet.HeadroomFilter.StoreFailureMode;
import dev.headroom.servlet.Route;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Turns {@link HeadroomProperties} into Headroom's own validated values. Every failure becomes a
 * {@link HeadroomConfigurationException} naming the property path, the value and what is expected.
 */
final class HeadroomSettings {

  private HeadroomSettings() {}

  static Map<String, QuotaPolicy> policies(HeadroomProperties props) {
    Map<String, QuotaPolicy> result = new LinkedHashMap<>();
    for (Map.Entry<String, HeadroomProperties.Policy> e : props.getPolicies().entrySet()) {
      String name = e.getKey();
      String at = "headroom.policies." + name;
      HeadroomProperties.Policy p = e.getValue();
      if (p.getQuota() == null) {
        throw new HeadroomConfigurationException(at + ".quota", null, "an integer from 1 to " + QuotaPolicy.MAX_QUOTA);
      }
      if (p.getQuota() < 1 || p.getQuota() > QuotaPolicy.MAX_QUOTA) {
        throw new HeadroomConfigurationException(at + ".quota", p.getQuota(), "an integer from 1 to " + QuotaPolicy.MAX_QUOTA);
      }
      if (p.getWindow() == null) {
        throw new HeadroomConfigurationException(at + ".window", null, "a duration of whole seconds such as 60s or 1h");
      }
      QuotaUnit unit;
      try {
        unit = QuotaUnit.fromToken(p.getUnit());
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException(at + ".unit", p.getUnit(), "requests, content-bytes or concurrent-requests", ex);
      }
      QuotaPolicy.Builder b = QuotaPolicy.builder(name).quota(p.getQuota()).window(p.getWindow()).unit(unit);
      if (p.getAlgorithm() != null) {
        try {
          b.algorithm(Algorithm.fromToken(p.getAlgorithm()));
        } catch (IllegalArgumentException ex) {
          throw new HeadroomConfigurationException(at + ".algorithm", p.getAlgorithm(),
              "fixed-window, sliding-window, token-bucket or concurrency", ex);
        }
      }
      try {
        b.partitioning(Partitioning.parse(p.getPartitioning()));
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException(at + ".partitioning", p.getPartitioning(),
            "components client-ip, api-key, header:Name, user, route, method or global joined by + and | ("
                + ex.getMessage() + ")", ex);
      }
      if (p.getLeaseTimeout() != null) {
        b.leaseTimeout(p.getLeaseTimeout());
      }
      try {
        result.put(name, b.build());
      } catch (IllegalArgumentException ex) {
        // QuotaPolicy names the field after "policy 'x': "; point at the property.
        String msg = ex.getMessage();
        String field = msg.contains("': ") ? msg.substring(msg.indexOf("': ") + 3) : msg;
        String prop = field.contains(":") ? field.substring(0, field.indexOf(':')) : "";
        String property = at + (prop.matches("[a-zA-Z]+") ? "." + kebab(prop) : "");
        Object value = prop.equals("window") ? p.getWindow() : prop.equals("leaseTimeout") ? p.getLeaseTimeout()
            : prop.equals("name") ? name : prop.equals("algorithm") ? p.getAlgorithm() : prop.equals("quota") ? p.getQuota() : null;
        throw new HeadroomConfigurationException(property, value, field.substring(field.indexOf(':') + 1).strip()
            .replaceFirst("^expected ", ""), ex);
      }
    }
    return result;
  }

  private static String kebab(String camel) {
    return camel.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
  }

  static Set<HeaderDialect> dialects(String property, List<String> tokens) {
    if (tokens == null || tokens.isEmpty()) {
      throw new HeadroomConfigurationException(property, tokens, "at least one of " + HeaderDialect.NAMES);
    }
    Set<HeaderDialect> set = EnumSet.noneOf(HeaderDialect.class);
    for (int i = 0; i < tokens.size(); i++) {
      try {
        set.add(HeaderDialect.fromToken(tokens.get(i)));
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException(property + "[" + i + "]", tokens.get(i),
            "one of " + HeaderDialect.NAMES, ex);
      }
    }
    try {
      dev.headroom.http.headers.RateLimitHeaders.builder().dialects(set).build();
    } catch (IllegalArgumentException ex) {
      throw new HeadroomConfigurationException(property, tokens, "dialects that can be sent together (" + ex.getMessage() + ")", ex);
    }
    return set;
  }

  static LimitRefusals refusals(HeadroomProperties props, Ticker ticker) {
    return refusals(props, ticker, java.util.Optional.empty());
  }

  /** As {@link #refusals(HeadroomProperties, Ticker)}, with the plans whose refusals point at the next plan. */
  static LimitRefusals refusals(HeadroomProperties props, Ticker ticker, java.util.Optional<dev.headroom.http.plan.Plans> plans) {
    LimitRefusals.Builder b = LimitRefusals.builder().ticker(ticker);
    plans.ifPresent(b::plans);
    URI origin = origin(props);
    if (origin != null) {
      b.origin(origin);
    }
    PolicyTexts defaults;
    try {
      defaults = PolicyTexts.builder(props.getWhy()).build();
    } catch (IllegalArgumentException ex) {
      throw new HeadroomConfigurationException("headroom.why", props.getWhy(),
          "one sentence saying why limits exist (" + ex.getMessage() + ")", ex);
    }
    b.defaults(defaults);
    for (Map.Entry<String, HeadroomProperties.Policy> e : props.getPolicies().entrySet()) {
      HeadroomProperties.Policy p = e.getValue();
      String at = "headroom.policies." + e.getKey();
      if (p.getWhy() == null && p.getLimit() == null && p.getDescription() == null && p.getError() == null
          && p.getCachedResultUrl() == null && p.getAlternativeEndpoint() == null && p.getUpgradeUrl() == null
          && p.getHumanUrl() == null) {
        continue;
      }
      try {
        PolicyTexts.Builder t = PolicyTexts.builder(p.getWhy() != null ? p.getWhy() : props.getWhy());
        if (p.getLimit() != null) {
          t.limit(p.getLimit());
        }
        if (p.getDescription() != null) {
          t.description(p.getDescription());
        }
        if (p.getError() != null) {
          t.error(p.getError());
        }
        if (p.getCachedResultUrl() != null) {
          t.cachedResultUrl(p.getCachedResultUrl());
        }
        if (p.getAlternativeEndpoint() != null) {
          t.alternativeEndpoint(p.getAlternativeEndpoint());
        }
        if (p.getUpgradeUrl() != null) {
          t.upgradeUrl(p.getUpgradeUrl());
        }
        if (p.getHumanUrl() != null) {
          t.humanUrl(p.getHumanUrl());
        }
        b.texts(e.getKey(), t.build());
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException(at, textField(ex.getMessage()), "texts Graceful Boundaries accepts ("
            + ex.getMessage() + ")", ex);
      }
    }
    try {
      return b.build();
    } catch (IllegalArgumentException ex) {
      throw new HeadroomConfigurationException("headroom.policies", ex.getMessage(),
          "guidance URLs that are relative or on headroom.service.origin", ex);
    }
  }

  private static String textField(String message) {
    int colon = message.indexOf(':');
    return colon > 0 ? message.substring(0, colon) : message;
  }

  static URI origin(HeadroomProperties props) {
    String o = props.getService().getOrigin();
    if (o == null) {
      return null;
    }
    try {
      URI u = new URI(o);
      if (u.getScheme() == null || u.getHost() == null) {
        throw new URISyntaxException(o, "no scheme or host");
      }
      return u;
    } catch (URISyntaxException ex) {
      throw new HeadroomConfigurationException("headroom.service.origin", o, "an origin such as https://api.example.com", ex);
    }
  }

  static List<Route> routes(HeadroomProperties props, Map<String, QuotaPolicy> policies) {
    List<Route> routes = new ArrayList<>();
    List<HeadroomProperties.Route> list = props.getRoutes();
    for (int i = 0; i < list.size(); i++) {
      HeadroomProperties.Route r = list.get(i);
      String at = "headroom.routes[" + i + "]";
      if (r.getPath() == null) {
        throw new HeadroomConfigurationException(at + ".path", null, "a path template such as /api/items/{id}");
      }
      if (r.getPolicies().isEmpty()) {
        throw new HeadroomConfigurationException(at + ".policies", r.getPolicies(),
            "names of one or more policies of headroom.policies " + policies.keySet());
      }
      Route.Builder b = Route.builder(r.getPath());
      for (int j = 0; j < r.getPolicies().size(); j++) {
        String name = r.getPolicies().get(j);
        QuotaPolicy p = policies.get(name);
        if (p == null) {
          throw new HeadroomConfigurationException(at + ".policies[" + j + "]", name,
              "the name of a policy of headroom.policies " + policies.keySet());
        }
        b.policy(p);
      }
      for (int j = 0; j < r.getShadowPolicies().size(); j++) {
        String name = r.getShadowPolicies().get(j);
        QuotaPolicy p = policies.get(name);
        if (p == null) {
          throw new HeadroomConfigurationException(at + ".shadow-policies[" + j + "]", name,
              "the name of a policy of headroom.policies " + policies.keySet());
        }
        b.shadowPolicy(p, r.isShadowFields());
      }
      b.cost(r.getCost());
      switch (r.getCounting() == null ? "" : r.getCounting()) {
        case "all" -> b.counting(RouteRules.Counting.ALL);
        case "failures" -> b.counting(RouteRules.Counting.FAILURES);
        case "successes" -> b.counting(RouteRules.Counting.SUCCESSES);
        default -> throw new HeadroomConfigurationException(at + ".counting", r.getCounting(), "all, failures or successes");
      }
      if (r.getCostHeader() != null) {
        b.costHeader(r.getCostHeader(), r.getMaxCost());
      }
      if (!r.getDialects().isEmpty()) {
        b.dialects(dialects(at + ".dialects", r.getDialects()));
      }
      if (r.getKey() != null) {
        b.key(r.getKey());
      }
      if (r.getNote() != null) {
        b.note(r.getNote());
      }
      b.listed(r.isListed());
      b.fields(fields(at, r));
      try {
        b.methods(r.getMethods());
        routes.add(b.build());
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException(at, r.getPath() + " " + r.getMethods(), "a valid route (" + ex.getMessage() + ")", ex);
      }
    }
    return routes;
  }

  static PartitionKeyExposure exposure(HeadroomProperties props) {
    String v = props.getPartitionKeyExposure();
    switch (v == null ? "" : v.toLowerCase(Locale.ROOT)) {
      case "off":
        return PartitionKeyExposures.off();
      case "hash":
        return PartitionKeyExposures.predictableHash();
      case "hmac":
        try {
          return PartitionKeyExposures.hmacSha256Base64(props.getPartitionKeyHmacKey());
        } catch (RuntimeException ex) {
          throw new HeadroomConfigurationException("headroom.partition-key-hmac-key",
              props.getPartitionKeyHmacKey() == null ? null : "(" + props.getPartitionKeyHmacKey().length() + " characters, not shown)",
              "a base64 key of at least " + PartitionKeyExposures.MIN_HMAC_KEY_LENGTH + " bytes", ex);
        }
      default:
        throw new HeadroomConfigurationException("headroom.partition-key-exposure", v, "off, hash or hmac");
    }
  }

  static ClientAddressResolver clientAddresses(HeadroomProperties props) {
    ClientAddressResolver.Builder b = ClientAddressResolver.builder();
    List<String> proxies = props.getClientIp().getTrustedProxies();
    for (int i = 0; i < proxies.size(); i++) {
      try {
        b.trustedProxy(proxies.get(i));
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException("headroom.client-ip.trusted-proxies[" + i + "]", proxies.get(i),
            "a CIDR range such as 10.0.0.0/8 or 2001:db8::/32", ex);
      }
    }
    return b.build();
  }

  /**
   * Configures a front end's gate from {@code headroom.*}: limiter, texts, clock, dialects,
   * exposure, client addresses, store-failure mode, header rules, escalations, plans and discovery;
   * the servlet filter and the WebFlux filter alike. Routes are the caller's.
   *
   * @throws HeadroomConfigurationException naming the property that is not valid
   */
  static void gate(GateBuilder<?> b, HeadroomProperties props, HeadroomAutoConfiguration.HeadroomPolicies policies,
      QuotaLimiter limiter, LimitRefusals refusals, Ticker ticker, Environment environment,
      HeadroomPlanProperties planProps, ObjectProvider<PlanResolver> planResolvers) {
    b.limiter(limiter)
        .refusals(refusals)
        .ticker(ticker)
        .dialects(dialects("headroom.dialects", props.getDialects()))
        .exposure(exposure(props))
        .clientAddresses(clientAddresses(props))
        .storeFailureMode(onFailure(props) == StoreFailureMode.ALLOW ? Gate.StoreFailureMode.ALLOW
            : Gate.StoreFailureMode.REFUSE);
    headers(props, b);
    escalations(props, b);
    allowLists(props, b);
    Optional<Plans> plans = HeadroomPlanSettings.plans(planProps, policies.byName());
    if (plans.isPresent()) {
      PlanResolver resolver = planResolvers.getIfUnique();
      if (resolver == null) {
        throw new HeadroomConfigurationException("headroom.plans.catalog", planProps.getCatalog().keySet(),
            "one PlanResolver bean that finds a request's plan (headroom-plans: ApiKeyFileResolver, JwtResolver, "
                + "SqlResolver)");
      }
      b.plans(plans.get(), resolver, planProps.getDeadline());
    }
    if (props.getDiscovery().isEnabled()) {
      String name = props.getService().getName() != null ? props.getService().getName()
          : environment.getProperty("spring.application.name", "application");
      b.discovery(name, props.getService().getDescription());
      try {
        b.discoveryPaths(props.getDiscovery().getPaths());
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException("headroom.discovery.paths", props.getDiscovery().getPaths(),
            "paths starting with /", ex);
      }
      if (props.getDiscovery().getChangelog() != null) {
        String changelog = props.getDiscovery().getChangelog();
        b.discoveryCustomizer(d -> d.changelog(changelog));
      }
    }
  }

  /** Applies {@code headroom.headers.*} to the gate, each value checked against what RateLimitHeaders accepts. */
  static void headers(HeadroomProperties props, GateBuilder<?> b) {
    HeadroomProperties.Headers h = props.getHeaders();
    b.omitOnRedirect(h.isOmitOnRedirect());
    if (h.getJitter() == null) {
      throw new HeadroomConfigurationException("headroom.headers.jitter", null,
          "a whole number of seconds from 0s to " + RateLimitHeaders.MAX_JITTER.toHours() + "h, such as 5s");
    }
    b.fields(fields("headroom.headers", h));
  }

  /**
   * The field rules (headroom-http {@link FieldOptions}) of {@code headroom.headers} or of one
   * route ({@code at}); a null value is not set. Each value is checked against what
   * RateLimitHeaders accepts, and refused naming the property.
   */
  static FieldOptions fields(String at, HeadroomProperties.FieldRules rules) {
    Duration jitter = rules.getJitter();
    Double nearExhaustion = rules.getOnlyNearExhaustion();
    Double cap = rules.getCapRemainingToResetRatio();
    Duration capMinWindow = rules.getCapMinWindow();
    FieldOptions f = FieldOptions.none();
    if (jitter != null) {
      if (jitter.isNegative() || jitter.getNano() != 0 || jitter.compareTo(RateLimitHeaders.MAX_JITTER) > 0) {
        throw new HeadroomConfigurationException(at + ".jitter", jitter,
            "a whole number of seconds from 0s to " + RateLimitHeaders.MAX_JITTER.toHours() + "h, such as 5s");
      }
      f = f.jitter(jitter);
    }
    if (nearExhaustion != null) {
      if (!(nearExhaustion > 0 && nearExhaustion <= 1)) {
        throw new HeadroomConfigurationException(at + ".only-near-exhaustion", nearExhaustion,
            "a share above 0 and at most 1, such as 0.8");
      }
      f = f.onlyNearExhaustion(nearExhaustion);
    }
    if (cap != null) {
      try {
        f = f.capRemainingToResetRatio(cap, capMinWindow == null ? Duration.ZERO : capMinWindow);
      } catch (IllegalArgumentException ex) {
        throw new HeadroomConfigurationException(at + ".cap-remaining-to-reset-ratio", cap,
            "a number of at least 1 (1 = each policy's nominal throughput q/w), with cap-min-window zero or more", ex);
      }
    }
    return f;
  }

  /** Applies {@code headroom.policies.*.escalation-threshold} and {@code escalation-block} to the filter. */
  static void escalations(HeadroomProperties props, GateBuilder<?> b) {
    props.getPolicies().forEach((name, p) -> {
      if (p.getEscalationThreshold() == null) {
        return;
      }
      try {
        b.escalation(name, new dev.headroom.http.enforcement.Escalation(p.getEscalationThreshold(), p.getEscalationBlock()));
      } catch (IllegalArgumentException | NullPointerException ex) {
        throw new HeadroomConfigurationException("headroom.policies." + name + ".escalation-threshold",
            p.getEscalationThreshold() + " with escalation-block " + p.getEscalationBlock(),
            "a threshold from 1 to 1000000 and a block of whole seconds, at least 1s", ex);
      }
    });
  }

  /** Tells every listener: one that throws cannot keep the others from hearing (listener contracts). */
  static <L> void tellEach(List<L> listeners, java.util.function.Consumer<L> call) {
    for (L l : listeners) {
      try {
        call.accept(l);
      } catch (RuntimeException ignored) {
        // A listener cannot fail the request or silence the others.
      }
    }
  }

  /** Applies {@code headroom.policies.*.allow} (CIDR blocks, API key hashes, header) to the gate. */
  static void allowLists(HeadroomProperties props, GateBuilder<?> b) {
    props.getPolicies().forEach((name, p) -> {
      HeadroomAllowProperties a = p.getAllow();
      if (a.getCidrs().isEmpty() && a.getApiKeys().isEmpty()) {
        return;
      }
      String field = "headroom.policies." + name + ".allow";
      try {
        b.allow(name, AllowList.of(field, a.getCidrs(), a.getApiKeys(), a.getHeader()));
      } catch (IllegalArgumentException ex) {
        // AllowList's message names the field (cidrs, apiKeys or header) and what is expected; a
        // rejected api-keys entry may be a raw key by mistake, so only its size is repeated
        String m = ex.getMessage();
        String property = m.substring(0, m.indexOf(": ")).replace(".apiKeys", ".api-keys");
        Object value = property.endsWith(".cidrs") ? a.getCidrs()
            : property.endsWith(".header") ? a.getHeader() : a.getApiKeys().size() + " entries";
        throw new HeadroomConfigurationException(property, value, m.substring(m.indexOf(": ") + 2), ex);
      }
    });
  }

  static StoreFailureMode onFailure(HeadroomProperties props) {
    String v = props.getStore().getOnFailure();
    switch (v == null ? "" : v.toLowerCase(Locale.ROOT)) {
      case "allow":
        return StoreFailureMode.ALLOW;
      case "refuse":
        return StoreFailureMode.REFUSE;
      default:
        throw new HeadroomConfigurationException("headroom.store.on-failure", v, "allow or refuse");
    }
  }
}
