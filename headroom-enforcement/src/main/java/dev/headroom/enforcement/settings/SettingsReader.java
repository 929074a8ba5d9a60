package dev.headroom.enforcement.settings;

import dev.headroom.Algorithm;
import dev.headroom.Partitioning;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.Ticker;
import dev.headroom.enforcement.Escalation;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.AdaptiveConcurrency;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.enforcement.Waiting;
import dev.headroom.enforcement.partition.AllowList;
import dev.headroom.enforcement.partition.PartitionKeyExposures;
import dev.headroom.enforcement.plan.Plan;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.enforcement.plan.PolicyOverride;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.LimitType;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The one converter of the settings model: {@link PolicySettings}, {@link PlansSettings},
 * {@link FieldRuleSettings}, {@link RouteSettings} and the rest into headroom-core's
 * {@link QuotaPolicy}, headroom-http's {@link PolicyTexts} and {@link FieldRules}, and this
 * module's {@link Escalation}, {@link AllowList}, {@link Plans} and {@link RouteRules}, for every binding (the gateway's YAML, Spring Boot's {@code headroom.*},
 * Spring Cloud Gateway's {@code headroom.cloud-gateway.*}).
 *
 * <p>How is an error tied to its setting? Each value is checked alone: a library (the
 * {@code QuotaPolicy} builder, {@code PolicyTexts}, {@code Escalation}, {@code AllowList},
 * {@code Plans}) is handed one field at a time, with every other field a known good value, so a
 * refusal belongs to that field by construction; the library's message only explains it, it is
 * never parsed back into a key. Only what no field holds alone (a token bucket whose quota
 * exceeds its window in nanoseconds, say) is reported at the policy.
 *
 * <p>Every problem is collected, in the order found, as a {@link SettingsProblem} whose path is in
 * the binding's spelling: {@link #properties(String)} writes Spring's kebab-case
 * ({@code headroom.policies.api.lease-timeout}); {@link #of(String, UnaryOperator)} takes the
 * binding's own names for the model's keys. {@link #throwIfProblems} ends a read.
 *
 * <p>Not thread-safe; one instance per read.
 */
public final class SettingsReader {

  /** The {@code why} of texts made only to check one other field alone; never sent. */
  private static final String NEUTRAL_WHY = "Limits keep the service available for everyone.";

  private static final String DIALECTS = HeaderDialect.NAMES;

  /** The text fields of a policy besides why, each with what it must be and how it is set. */
  private static final List<TextField> TEXT_FIELDS = List.of(
      new TextField("limit", PolicySettings::getLimit, PolicyTexts.Builder::limit,
          "a short text such as 100 requests per minute per client address"),
      new TextField("description", PolicySettings::getDescription, PolicyTexts.Builder::description,
          "a text for the discovery document"),
      new TextField("error", PolicySettings::getError, PolicyTexts.Builder::error,
          "a snake_case error token such as rate_limit_exceeded"),
      new TextField("limitType", PolicySettings::getLimitType, (b, v) -> b.limitType(LimitType.of(v)),
          "a limit type token such as cooldown or burst-rate"),
      new TextField("cachedResultUrl", PolicySettings::getCachedResultUrl, PolicyTexts.Builder::cachedResultUrl,
          "a relative path or a URL on the service's origin (Graceful Boundaries SC-6)"),
      new TextField("alternativeEndpoint", PolicySettings::getAlternativeEndpoint,
          PolicyTexts.Builder::alternativeEndpoint,
          "a relative path or a URL on the service's origin (Graceful Boundaries SC-6)"),
      new TextField("upgradeUrl", PolicySettings::getUpgradeUrl, PolicyTexts.Builder::upgradeUrl,
          "a relative path or an http(s) URL"),
      new TextField("humanUrl", PolicySettings::getHumanUrl, PolicyTexts.Builder::humanUrl,
          "a relative path or an http(s) URL"));

  private record TextField(String key, Function<PolicySettings, String> value,
      BiConsumer<PolicyTexts.Builder, String> set, String expected) {}

  private final String prefix;
  private final UnaryOperator<String> keys;
  private final List<SettingsProblem> problems = new ArrayList<>();
  private final Set<String> declaredPolicies = new LinkedHashSet<>();
  /** The plan names under {@code plans.catalog}, valid or not, once {@link #plans} has read them; null before. */
  private Set<String> declaredPlans;
  private Throwable firstCause;

  private SettingsReader(String prefix, UnaryOperator<String> keys) {
    this.prefix = prefix;
    this.keys = keys;
  }

  /**
   * A reader of Spring properties under {@code prefix} (such as {@code headroom}): the model's keys
   * in kebab-case, {@code leaseTimeout} as {@code lease-timeout}.
   */
  public static SettingsReader properties(String prefix) {
    return new SettingsReader(prefix, SettingsReader::kebab);
  }

  /**
   * A reader whose paths start at {@code prefix} (empty for none) and name each key of the model
   * ({@code leaseTimeout}, {@code allow.apiKeys}, {@code escalationThreshold}) as {@code keys} says.
   */
  public static SettingsReader of(String prefix, UnaryOperator<String> keys) {
    return new SettingsReader(prefix, keys);
  }

  /** The binding's path of one of the model's keys under the prefix, such as {@code headroom.why}. */
  public String path(String key) {
    return join(prefix, keys.apply(key));
  }

  /** The binding's path of one of the model's keys under {@code at}, a path of the binding's. */
  public String path(String at, String key) {
    return join(at, keys.apply(key));
  }

  /** Records a problem the binding found itself. */
  public void problem(String path, Object value, String expected) {
    problems.add(SettingsProblem.of(path, value, expected));
  }

  /**
   * Runs {@code step}, which reads one value alone; when it refuses the value
   * ({@link IllegalArgumentException} or {@link NullPointerException}), records a problem at
   * {@code path} and gives empty.
   */
  public <T> Optional<T> check(String path, Object value, String expected, Supplier<T> step) {
    return check(path, value, expected, false, step);
  }

  /** As {@link #check}, with the library's own words added to {@code expected} in parentheses. */
  public <T> Optional<T> checkExplained(String path, Object value, String expected, Supplier<T> step) {
    return check(path, value, expected, true, step);
  }

  private <T> Optional<T> check(String path, Object value, String expected, boolean explain, Supplier<T> step) {
    try {
      return Optional.ofNullable(step.get());
    } catch (IllegalArgumentException | NullPointerException e) {
      if (firstCause == null) {
        firstCause = e;
      }
      problem(path, value, explain ? expected + " (" + withoutField(e.getMessage()) + ")" : expected);
      return Optional.empty();
    }
  }

  /** Every problem found so far, in order. */
  public List<SettingsProblem> problems() {
    return List.copyOf(problems);
  }

  /**
   * @throws SettingsException with every problem found, when there is one
   */
  public void throwIfProblems() {
    throwIfProblems(SettingsException::new);
  }

  /**
   * @param exception the binding's own exception, given every problem and the first library refusal
   * @throws RuntimeException made by {@code exception}, when there is a problem
   */
  public void throwIfProblems(ExceptionFactory exception) {
    if (!problems.isEmpty()) {
      throw exception.make(List.copyOf(problems), firstCause);
    }
  }

  /** Makes a binding's exception from the problems and the first library refusal (or null). */
  @FunctionalInterface
  public interface ExceptionFactory {
    RuntimeException make(List<SettingsProblem> problems, Throwable cause);
  }

  /**
   * {@code service.origin}: the public origin callers reach the service at, such as
   * {@code https://api.example.com} (scheme, host and optional port only, as headroom-http's
   * {@link LimitRefusals} takes it), when set.
   */
  public Optional<URI> origin(ServiceSettings service) {
    String o = service.getOrigin();
    if (o == null) {
      return Optional.empty();
    }
    return check(path("service.origin"), o, "the public origin callers reach the service at, such as "
        + "https://api.example.com (scheme, host and optional port only)", () -> {
          URI u;
          try {
            u = new URI(o);
          } catch (URISyntaxException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
          }
          LimitRefusals.builder().ticker(Ticker.system()).origin(u).defaults(PolicyTexts.builder(NEUTRAL_WHY).build())
              .build();
          return u;
        });
  }

  /**
   * {@code policies}: each policy, its texts (the service's {@code why} for those without one of
   * their own), its escalation and its allow list. A policy with a problem is left out.
   *
   * @param why the service's why; null where each policy must say its own (the gateway's YAML)
   */
  public PolicySet policies(String why, Optional<URI> origin, Map<String, ? extends PolicySettings> policies) {
    PolicyTexts defaults = why == null ? null : checkExplained(path("why"), why, "one sentence saying why limits exist",
        () -> PolicyTexts.builder(why).build()).orElse(null);
    Map<String, QuotaPolicy> read = new LinkedHashMap<>();
    Map<String, PolicyTexts> texts = new LinkedHashMap<>();
    Map<String, Escalation> escalations = new LinkedHashMap<>();
    Map<String, AllowList> allowLists = new LinkedHashMap<>();
    Map<String, Waiting> queues = new LinkedHashMap<>();
    policies.forEach((name, p) -> {
      declaredPolicies.add(name);
      String at = path("policies") + "." + name;
      QuotaPolicy policy = policy(at, name, p);
      if (policy != null) {
        read.put(name, policy);
      }
      texts(at, p, why, defaults != null, origin).ifPresent(t -> texts.put(name, t));
      escalation(at, p).ifPresent(e -> escalations.put(name, e));
      allowList(at, p.getAllow()).ifPresent(a -> allowLists.put(name, a));
      queue(at, p.getQueue()).ifPresent(q -> queues.put(name, q));
    });
    return new PolicySet(read, defaults == null ? PolicyTexts.builder(NEUTRAL_WHY).build() : defaults, texts,
        escalations, allowLists, origin, queues);
  }

  /** What {@code queue.maxWait} must be. */
  private static final String MAX_WAIT = "the longest a refused request waits for its turn, above 0 and at most "
      + Waiting.MAX_WAIT.toHours() + "h, such as 500ms";

  /** What {@code queue.maxQueued} must be. */
  private static final String MAX_QUEUED = "an integer from 1 to " + Waiting.MAX_QUEUED;

  /**
   * A policy's {@code queue} ({@link QueueSettings}), when set: {@code maxWait} required,
   * {@code maxQueued} {@value Waiting#DEFAULT_MAX_QUEUED} unless set, each checked alone against
   * {@link Waiting}'s own ranges (with the other a known good value).
   */
  private Optional<Waiting> queue(String at, QueueSettings q) {
    if (q == null) {
      return Optional.empty();
    }
    Duration maxWait = q.getMaxWait();
    int maxQueued = q.getMaxQueued() == null ? Waiting.DEFAULT_MAX_QUEUED : q.getMaxQueued();
    Optional<Waiting> w = maxWait == null ? Optional.empty()
        : check(path(at, "queue.maxWait"), maxWait, MAX_WAIT, () -> new Waiting(maxWait, 1));
    if (maxWait == null) {
      problem(path(at, "queue.maxWait"), null, MAX_WAIT);
    }
    Optional<Waiting> n = check(path(at, "queue.maxQueued"), maxQueued, MAX_QUEUED,
        () -> new Waiting(Duration.ofSeconds(1), maxQueued));
    return w.isPresent() && n.isPresent() ? Optional.of(new Waiting(maxWait, maxQueued)) : Optional.empty();
  }

  private QuotaPolicy policy(String at, String name, PolicySettings p) {
    int before = problems.size();
    QuotaPolicy.Builder b = QuotaPolicy.builder(name);
    Long quota = p.getQuota();
    if (quota == null || quota < 1 || quota > QuotaPolicy.MAX_QUOTA) {
      problem(path(at, "quota"), quota, "an integer from 1 to " + QuotaPolicy.MAX_QUOTA);
    } else {
      b.quota(quota);
    }
    Duration window = p.getWindow();
    if (window == null) {
      problem(path(at, "window"), null, "a duration of whole seconds such as 60s or 1h");
    } else if (!validWindow(window)) {
      problem(path(at, "window"), window, WINDOW);
    } else {
      b.window(window);
    }
    check(path(at, "unit"), p.getUnit(), "requests, content-bytes or concurrent-requests",
        () -> QuotaUnit.fromToken(p.getUnit())).ifPresent(b::unit);
    if (p.getAlgorithm() != null) {
      check(path(at, "algorithm"), p.getAlgorithm(), "fixed-window, sliding-window, token-bucket or concurrency",
          () -> Algorithm.fromToken(p.getAlgorithm())).ifPresent(b::algorithm);
    }
    checkExplained(path(at, "partitioning"), p.getPartitioning(),
        "components client-ip, api-key, header:Name, user, client-cert, route, method or global joined by + and |",
        () -> Partitioning.parse(p.getPartitioning())).ifPresent(b::partitioning);
    Duration lease = p.getLeaseTimeout();
    if (lease != null) {
      if (lease.isNegative() || lease.isZero() || lease.compareTo(QuotaPolicy.MAX_LEASE_TIMEOUT) > 0) {
        problem(path(at, "leaseTimeout"), lease, "a duration above 0s and at most "
            + QuotaPolicy.MAX_LEASE_TIMEOUT.toHours() + "h");
      } else {
        b.leaseTimeout(lease);
      }
    }
    if (problems.size() > before) {
      return null;
    }
    // Every field is valid alone: what is left is how they go together, or the name.
    return checkExplained(at, name, "a policy whose name, quota, window, unit and algorithm go together",
        b::build).orElse(null);
  }

  /**
   * A policy's own texts, when it sets any: each field checked alone (with a neutral why), the
   * guidance URLs against the origin, then its why with its limit.
   */
  private Optional<PolicyTexts> texts(String at, PolicySettings p, String serviceWhy, boolean serviceWhyValid,
      Optional<URI> origin) {
    if (p.getWhy() == null && serviceWhy == null) {
      problem(path(at, "why"), null, "one sentence saying why the limit exists (Graceful Boundaries section 2)");
      return Optional.empty();
    }
    if (p.getWhy() == null && TEXT_FIELDS.stream().allMatch(f -> f.value().apply(p) == null)) {
      return Optional.empty();
    }
    int before = problems.size();
    String why = p.getWhy() != null ? p.getWhy() : serviceWhy;
    PolicyTexts.Builder all = PolicyTexts.builder(why);
    for (TextField f : TEXT_FIELDS) {
      String v = f.value().apply(p);
      if (v == null) {
        continue;
      }
      checkExplained(path(at, f.key()), v, f.expected(), () -> {
        PolicyTexts.Builder alone = PolicyTexts.builder(NEUTRAL_WHY);
        f.set().accept(alone, v);
        PolicyTexts t = alone.build();
        LimitRefusals.Builder refusals = LimitRefusals.builder().ticker(Ticker.system()).defaults(t);
        origin.ifPresent(refusals::origin);
        return refusals.build();
      }).ifPresent(ok -> f.set().accept(all, v));
    }
    if (p.getWhy() != null) {
      String limit = problems.size() == before ? p.getLimit() : null;
      checkExplained(path(at, "why"), p.getWhy(), "one sentence saying why the limit exists (Graceful Boundaries "
          + "section 2)", () -> PolicyTexts.builder(p.getWhy()).limit(limit).build());
    } else if (!serviceWhyValid) {
      return Optional.empty();
    }
    if (problems.size() > before) {
      return Optional.empty();
    }
    return checkExplained(at, p.getWhy(), "texts that go together", all::build);
  }

  private Optional<Escalation> escalation(String at, PolicySettings p) {
    Integer threshold = p.getEscalationThreshold();
    if (threshold == null) {
      return Optional.empty();
    }
    Duration block = p.getEscalationBlock();
    Optional<Escalation> t = check(path(at, "escalationThreshold"), threshold, "a whole number from 1 to 1000000",
        () -> new Escalation(threshold, Duration.ofMinutes(15)));
    Optional<Escalation> b = check(path(at, "escalationBlock"), block, "a whole number of seconds, at least 1s",
        () -> new Escalation(1, block));
    return t.isPresent() && b.isPresent() ? Optional.of(new Escalation(threshold, block)) : Optional.empty();
  }

  /** An allow list, each entry checked alone; an API key hash is never repeated, only its length. */
  private Optional<AllowList> allowList(String at, AllowSettings a) {
    if (a.getCidrs().isEmpty() && a.getApiKeys().isEmpty()) {
      return Optional.empty();
    }
    int before = problems.size();
    String field = path(at, "allow");
    List<String> cidrs = a.getCidrs();
    for (int i = 0; i < cidrs.size(); i++) {
      List<String> one = Collections.singletonList(cidrs.get(i));
      checkExplained(path(at, "allow.cidrs") + "[" + i + "]", cidrs.get(i),
          "a CIDR block or an address such as 10.0.0.0/8 or 2001:db8::/32",
          () -> AllowList.of(field, one, List.of(), AllowList.DEFAULT_HEADER));
    }
    List<String> keyHashes = a.getApiKeys();
    for (int i = 0; i < keyHashes.size(); i++) {
      String k = keyHashes.get(i);
      check(path(at, "allow.apiKeys") + "[" + i + "]", "(" + (k == null ? 0 : k.length()) + " characters, not shown)",
          "the SHA-256 hex digest of a key (64 hex digits, printf %s \"$KEY\" | sha256sum), never the key itself",
          () -> AllowList.of(field, List.of(), Collections.singletonList(k), AllowList.DEFAULT_HEADER));
    }
    check(path(at, "allow.header"), a.getHeader(), "a header name such as " + AllowList.DEFAULT_HEADER,
        () -> AllowList.of(field, List.of(), List.of(), a.getHeader()));
    if (problems.size() > before) {
      return Optional.empty();
    }
    return Optional.of(AllowList.of(field, cidrs, keyHashes, a.getHeader()));
  }

  /**
   * {@code plans}: the plans of the policies read by {@link #policies}, or empty when the catalog
   * is. Overrides of a policy that was declared but had a problem are not checked again.
   */
  public Optional<Plans> plans(PlansSettings settings, Map<String, QuotaPolicy> policies) {
    declaredPlans = new LinkedHashSet<>(settings.getCatalog().keySet());
    if (settings.getCatalog().isEmpty()) {
      return Optional.empty();
    }
    int before = problems.size();
    String at = path("plans");
    Set<String> names = settings.getCatalog().keySet();
    String fallback = settings.getFallback();
    if (fallback == null || !names.contains(fallback)) {
      problem(path(at, "fallback"), fallback, "one of " + names);
    }
    Duration deadline = settings.getDeadline();
    if (deadline == null || deadline.isNegative() || deadline.isZero()) {
      problem(path(at, "deadline"), deadline, "a duration such as 200ms");
    }
    List<Plan> plans = new ArrayList<>();
    settings.getCatalog().forEach((name, plan) -> {
      String pat = path(at, "catalog") + "." + name;
      if (check(pat, name, "a plan name of 1 to " + Plan.MAX_NAME_LENGTH + " letters, digits, - and _ starting with a "
          + "letter", () -> new Plan(name, Map.of(), Optional.empty())).isEmpty()) {
        return;
      }
      Map<String, PolicyOverride> overrides = new LinkedHashMap<>();
      plan.getPolicies().forEach((policy, o) -> {
        String oat = path(pat, "policies") + "." + policy;
        QuotaPolicy base = policies.get(policy);
        if (base == null) {
          if (!declaredPolicies.contains(policy)) {
            problem(oat, policy, "one of the policies " + (declaredPolicies.isEmpty() ? policies.keySet()
                : declaredPolicies));
          }
          return;
        }
        override(oat, name, base, o).ifPresent(v -> overrides.put(policy, v));
      });
      plans.add(new Plan(name, overrides, Optional.ofNullable(plan.getUrl())));
    });
    if (problems.size() > before) {
      return Optional.empty();
    }
    return checkExplained(at, names, "plans that go together", () -> Plans.of(plans, fallback, policies.values()));
  }

  /** One plan's override of one policy: each field alone, then the policy it leaves, in a plan of its own. */
  private Optional<PolicyOverride> override(String at, String plan, QuotaPolicy base, PlansSettings.Override o) {
    int before = problems.size();
    Long quota = o.getQuota();
    if (quota != null && (quota < 1 || quota > QuotaPolicy.MAX_QUOTA)) {
      problem(path(at, "quota"), quota, "an integer from 1 to " + QuotaPolicy.MAX_QUOTA);
    }
    Duration window = o.getWindow();
    if (window != null && !validWindow(window)) {
      problem(path(at, "window"), window, WINDOW);
    }
    Optional<Algorithm> algorithm = Optional.empty();
    if (o.getAlgorithm() != null) {
      algorithm = check(path(at, "algorithm"), o.getAlgorithm(), "fixed-window, sliding-window, token-bucket or "
          + "concurrency", () -> Algorithm.fromToken(o.getAlgorithm()));
    }
    if (problems.size() > before) {
      return Optional.empty();
    }
    PolicyOverride override = new PolicyOverride(quota == null ? OptionalLong.empty() : OptionalLong.of(quota),
        Optional.ofNullable(window), algorithm);
    // Every field is valid alone: what is left is the policy they leave together (a token bucket's
    // quota beyond its window in nanoseconds, say).
    return checkExplained(at, "quota " + quota + ", window " + window + ", algorithm " + o.getAlgorithm(),
        "an override that leaves a valid policy", () -> {
          Plans.of(List.of(new Plan(plan, Map.of(base.name(), override), Optional.empty())), plan, List.of(base));
          return override;
        });
  }

  /**
   * RateLimit header dialects at {@code at} (a path of the binding's): tokens, each possibly a
   * comma-separated list, that can be sent together.
   */
  public Set<HeaderDialect> dialects(String at, List<String> tokens) {
    Set<HeaderDialect> read = EnumSet.noneOf(HeaderDialect.class);
    int before = problems.size();
    for (int i = 0; tokens != null && i < tokens.size(); i++) {
      String token = tokens.get(i);
      for (String one : token == null ? new String[] {null} : token.split(",")) {
        String path = at + "[" + i + "]";
        check(path, one == null ? null : one.strip(), "one of " + DIALECTS, () -> HeaderDialect.fromToken(one.strip()))
            .ifPresent(read::add);
      }
    }
    if (problems.size() > before) {
      return read;
    }
    if (read.isEmpty()) {
      problem(at, tokens, "at least one of " + DIALECTS);
      return read;
    }
    checkExplained(at, tokens, "dialects that can be sent together",
        () -> RateLimitHeaders.builder().dialects(read).build());
    return read;
  }

  /**
   * The field rules at {@code at} (a path of the binding's); an unset rule is not applied. Each
   * value is checked against what {@link RateLimitHeaders} accepts.
   */
  public FieldRules fields(String at, FieldRuleSettings rules) {
    FieldRules f = FieldRules.none();
    Duration jitter = rules.getJitter();
    if (jitter != null) {
      if (jitter.isNegative() || !wholeSeconds(jitter) || jitter.compareTo(RateLimitHeaders.MAX_JITTER) > 0) {
        problem(path(at, "jitter"), jitter,
            "a whole number of seconds from 0s to " + RateLimitHeaders.MAX_JITTER.toHours() + "h, such as 5s");
      } else {
        f = f.jitter(jitter);
      }
    }
    Double nearExhaustion = rules.getOnlyNearExhaustion();
    if (nearExhaustion != null) {
      if (!(nearExhaustion > 0 && nearExhaustion <= 1)) {
        problem(path(at, "onlyNearExhaustion"), nearExhaustion, "a share above 0 and at most 1, such as 0.8");
      } else {
        f = f.onlyNearExhaustion(nearExhaustion);
      }
    }
    Double cap = rules.getCapRemainingToResetRatio();
    if (cap != null) {
      Duration min = rules.getCapMinWindow() == null ? Duration.ZERO : rules.getCapMinWindow();
      FieldRules base = f;
      f = check(path(at, "capRemainingToResetRatio"), cap, "a number of at least 1 (1 = each policy's nominal "
          + "throughput q/w), with cap-min-window zero or more", () -> base.capRemainingToResetRatio(cap, min))
          .orElse(base);
    }
    return f;
  }

  /**
   * {@code routes}: each route at {@code at[i]} (a path of the binding's, such as
   * {@code headroom.routes}) into {@link RouteRules}, in matching order, on the policies read by
   * {@link #policies}; a route with a problem is left out. A route naming a policy that was
   * declared but had problems of its own gets no second problem.
   */
  public List<RouteRules> routes(String at, List<? extends RouteSettings> routes, Map<String, QuotaPolicy> policies) {
    List<RouteRules> out = new ArrayList<>();
    for (int i = 0; routes != null && i < routes.size(); i++) {
      route(at + "[" + i + "]", routes.get(i), policies).ifPresent(out::add);
    }
    return out;
  }

  /**
   * A route's {@code adaptive} settings at {@code at} alone (a path of the binding's, such as
   * {@code routes[0].adaptive}), for a binding that cannot read the route whole; {@link #route}
   * reads them with the rest.
   */
  public Optional<AdaptiveConcurrency> adaptive(String at, AdaptiveSettings adaptive) {
    return new RouteConversion(this).adaptive(at, adaptive);
  }

  /**
   * The plan names declared under {@code plans.catalog} (valid or not), when {@link #plans} was read
   * before the routes: what a route's {@code adaptive.shares} may name. Empty when the plans are read
   * later (the binding then checks the shares against them itself).
   */
  Optional<Set<String>> declaredPlans() {
    return Optional.ofNullable(declaredPlans);
  }

  /** One route at {@code at} (a path of the binding's) into {@link RouteRules}; see {@link #routes}. */
  public Optional<RouteRules> route(String at, RouteSettings route, Map<String, QuotaPolicy> policies) {
    return new RouteConversion(this).route(at, route, policies, declaredPolicies);
  }

  /**
   * What is sent as {@code pk} in the ietf dialect: {@code off}, {@code hash} (a predictable hash
   * of the partition) or {@code hmac} (a keyed HMAC with the base64 key at {@code keyAt}, never
   * repeated in a problem); off after a problem.
   */
  public PartitionKeyExposure exposure(String at, String mode, String keyAt, String hmacKey) {
    switch (mode == null ? "" : mode.strip().toLowerCase(Locale.ROOT)) {
      case "off":
        return PartitionKeyExposures.off();
      case "hash":
        return PartitionKeyExposures.predictableHash();
      case "hmac":
        return check(keyAt, hmacKey == null ? null : "(" + hmacKey.length() + " characters, not shown)",
            "a base64 key of at least " + PartitionKeyExposures.MIN_HMAC_KEY_LENGTH + " bytes",
            () -> PartitionKeyExposures.hmacSha256Base64(hmacKey)).orElse(PartitionKeyExposures.off());
      default:
        problem(at, mode, "off, hash or hmac");
        return PartitionKeyExposures.off();
    }
  }

  /** What a request meets when the store cannot decide: {@code allow} or {@code refuse}. */
  public Gate.StoreFailureMode onFailure(String at, String value) {
    switch (value == null ? "" : value.toLowerCase(Locale.ROOT)) {
      case "allow":
        return Gate.StoreFailureMode.ALLOW;
      case "refuse":
        return Gate.StoreFailureMode.REFUSE;
      default:
        problem(at, value, "allow or refuse");
        return Gate.StoreFailureMode.ALLOW;
    }
  }

  /**
   * A library's message without the field name it starts with ({@code partitioning: expected ...}):
   * the path already names the field. Only the presentation changes; nothing is read from it.
   */
  private static String withoutField(String message) {
    if (message == null) {
      return "no reason given";
    }
    int colon = message.indexOf(": ");
    return colon > 0 && message.substring(0, colon).matches("[A-Za-z][A-Za-z.]*") ? message.substring(colon + 2) : message;
  }

  /** What a window must be. */
  private static final String WINDOW = "a whole number of seconds from 1s to " + QuotaPolicy.MAX_WINDOW.toDays()
      + " days, such as 60s or 1h";

  private static boolean validWindow(Duration window) {
    return wholeSeconds(window) && !window.isNegative() && !window.isZero() && window.compareTo(QuotaPolicy.MAX_WINDOW) <= 0;
  }

  private static boolean wholeSeconds(Duration d) {
    return d.getNano() == 0;
  }

  private static String join(String at, String key) {
    return at.isEmpty() ? key : at + "." + key;
  }

  /** {@code leaseTimeout} as {@code lease-timeout}, {@code allow.apiKeys} as {@code allow.api-keys}. */
  static String kebab(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
  }
}
