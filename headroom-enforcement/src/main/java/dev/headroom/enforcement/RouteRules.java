package dev.headroom.enforcement;

import dev.headroom.QuotaPolicy;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.path.PathTemplate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The policies that apply to requests of some methods on one path template
 * (ARCHITECTURE.md, request step 3), for every embedded front end (servlet, WebFlux, Spring Cloud
 * Gateway):
 * {@code RouteRules.builder("/api/items/{id}").methods("GET").policy(perClient).build()}. A front
 * end may add a condition of its own request type when it hands the route to the {@link Gate}.
 *
 * <p>Path templates are those of the one grammar every front end and the client share,
 * {@link PathTemplate}: literal segments, {@code {name}} for one segment, {@code {name:regex}} for
 * one segment the regex matches, {@code *} for one segment and a final {@code **} for any rest,
 * including nothing. They are matched against the path inside the application as the server
 * decoded and normalised it ({@link PathTemplate#matchesDecoded}). Empty
 * segments are ignored, so that {@code /a/} cannot escape the limits of {@code /a}, nor
 * {@code /a//b} those of {@code /a/b} on a container that merges slashes.
 *
 * <p>Immutable.
 */
public final class RouteRules {

  private final Set<String> methods;
  private final String template;
  private final PathTemplate path;
  private final List<QuotaPolicy> policies;
  private final Set<HeaderDialect> dialects;
  private final String key;
  private final String note;
  private final boolean listed;
  private final FieldRules fields;
  private final List<QuotaPolicy> shadows;
  private final Set<String> shadowFields;
  private final long cost;
  private final String costHeader;
  private final long maxCost;
  private final Counting counting;
  private final Map<String, Counting> policyCounting;
  private final Map<String, Set<String>> when;
  private final String chargeHeader;
  private final PartitionKeyExposure exposure;
  private final Boolean omitOnRedirect;
  private final AdaptiveConcurrency adaptive;

  /** Which responses a route's requests count in its {@code requests} policies. */
  public enum Counting {
    /** Every request (the default). */
    ALL,
    /** Only requests whose response is 400 or above (login attempts). */
    FAILURES,
    /** Only requests whose response is below 400. */
    SUCCESSES;

    /** Whether a response with this status counts. */
    public boolean counts(int status) {
      return this == ALL || (this == FAILURES) == (status >= 400);
    }
  }

  private RouteRules(Builder b, PathTemplate path) {
    this.methods = Collections.unmodifiableSet(new LinkedHashSet<>(b.methods));
    this.template = b.template;
    this.path = path;
    this.policies = List.copyOf(b.policies);
    this.dialects = b.dialects == null ? null : Collections.unmodifiableSet(EnumSet.copyOf(b.dialects));
    this.key = b.key;
    this.note = b.note;
    this.listed = b.listed;
    this.fields = b.fields;
    this.shadows = List.copyOf(b.shadows);
    this.shadowFields = Set.copyOf(b.shadowFields);
    this.cost = b.cost;
    this.costHeader = b.costHeader;
    this.maxCost = b.maxCost;
    this.counting = b.counting;
    this.policyCounting = Map.copyOf(b.policyCounting);
    Map<String, Set<String>> w = new LinkedHashMap<>();
    b.when.forEach((k, v) -> w.put(k, Set.copyOf(v)));
    this.when = Map.copyOf(w);
    this.chargeHeader = b.chargeHeader;
    this.exposure = b.exposure;
    this.omitOnRedirect = b.omitOnRedirect;
    this.adaptive = b.adaptive;
  }

  /** Starts a route on a path template such as {@code /api/items/{id}}. */
  public static Builder builder(String template) {
    return new Builder(template);
  }

  /** The methods, upper case; empty means every method. */
  public Set<String> methods() {
    return methods;
  }

  /** The path template as given. */
  public String template() {
    return template;
  }

  /** The policies decided together for every matching request. */
  public List<QuotaPolicy> policies() {
    return policies;
  }

  /** Policies decided in shadow: counted, reported to listeners, logged, never refusing. */
  public List<QuotaPolicy> shadowPolicies() {
    return shadows;
  }

  /** Whether the RateLimit fields of the shadow policy of this name are sent ({@link Builder#shadowPolicy(QuotaPolicy, boolean)}). */
  public boolean sendsShadowFields(String policy) {
    return shadowFields.contains(policy);
  }

  /** What a request costs in units of the route's {@code requests} policies, without a cost header. */
  public long cost() {
    return cost;
  }

  /** The request header stating a request's cost (0 to {@link #maxCost()}), if any. */
  public Optional<String> costHeader() {
    return Optional.ofNullable(costHeader);
  }

  /** Which responses count: a request is counted when decided and given back when its response does not count. */
  public Counting counting() {
    return counting;
  }

  /**
   * Which responses count for the policy of this name ({@link Builder#counting(String, Counting)}),
   * or the route's {@link #counting()} when the policy has no rule of its own. A plan's version of
   * a policy ({@code api:pro}) follows the rule of its base ({@code api}).
   */
  public Counting counting(String policy) {
    return policyCounting.getOrDefault(policy, counting);
  }

  /**
   * Whether the policy of this name decides a request of {@code method} ({@link Builder#when}): a
   * policy without a rule decides every request of the route; HEAD counts as GET, as in
   * {@link #matches}.
   */
  public boolean appliesTo(String policy, String method) {
    if (when.isEmpty()) {
      return true;
    }
    Set<String> methods = when.get(policy);
    return methods == null || methods.contains(method) || (method.equals("HEAD") && methods.contains("GET"));
  }

  /**
   * The response header stating units charged on top of the request's cost once the response is
   * known ({@link Builder#chargeHeader}), if any.
   */
  public Optional<String> chargeHeader() {
    return Optional.ofNullable(chargeHeader);
  }

  /** What the route sends as {@code pk}, when it overrides the gate's ({@link Builder#exposure}). */
  public Optional<PartitionKeyExposure> exposure() {
    return Optional.ofNullable(exposure);
  }

  /** Whether the route leaves RateLimit fields off 3xx responses, when it overrides the gate's. */
  public Optional<Boolean> omitOnRedirect() {
    return Optional.ofNullable(omitOnRedirect);
  }

  /** The route's adaptive concurrency, when it has one ({@link Builder#adaptive}); off by default. */
  public Optional<AdaptiveConcurrency> adaptive() {
    return Optional.ofNullable(adaptive);
  }

  /** The largest cost {@link #costHeader()} (or {@link #chargeHeader()}) may state. */
  public long maxCost() {
    return maxCost;
  }

  /** The header dialects of this route; empty means the gate's default. */
  public Optional<Set<HeaderDialect>> dialects() {
    return Optional.ofNullable(dialects);
  }

  /** The endpoint key in the discovery document, if set. */
  public Optional<String> key() {
    return Optional.ofNullable(key);
  }

  /** The note in the discovery document, if set. */
  public Optional<String> note() {
    return Optional.ofNullable(note);
  }

  /** Whether the discovery document lists the route (Graceful Boundaries SC-4: not for internal routes). */
  public boolean listed() {
    return listed;
  }

  /**
   * The route's own field rules (jitter, fields only near exhaustion, the remaining/reset ratio
   * cap); each one not set here is the gate's ({@link GateBuilder#fields}).
   */
  public FieldRules fields() {
    return fields;
  }

  /**
   * Whether a request matches: its method is one of {@link #methods()} (HEAD counting as GET, since
   * a HEAD request runs the GET handler and only the content is left out, RFC 9110 section 9.3.2)
   * and its path, decoded and normalised as the server mapped it, the template.
   */
  public boolean matches(String method, String path) {
    return (methods.isEmpty() || methods.contains(method) || (method.equals("HEAD") && methods.contains("GET")))
        && this.path.matchesDecoded(path);
  }

  @Override
  public String toString() {
    return (methods.isEmpty() ? "*" : String.join(",", methods)) + " " + template + " " + policies;
  }

  /** Builds a {@link RouteRules}. Not thread-safe. */
  public static final class Builder {
    private final String template;
    private final Set<String> methods = new LinkedHashSet<>();
    private final List<QuotaPolicy> policies = new ArrayList<>();
    private final List<QuotaPolicy> shadows = new ArrayList<>();
    private final Set<String> shadowFields = new LinkedHashSet<>();
    private long cost = 1;
    private String costHeader;
    private long maxCost = 1;
    private Counting counting = Counting.ALL;
    private final Map<String, Counting> policyCounting = new LinkedHashMap<>();
    private final Map<String, Set<String>> when = new LinkedHashMap<>();
    private String chargeHeader;
    private PartitionKeyExposure exposure;
    private Boolean omitOnRedirect;
    private AdaptiveConcurrency adaptive;
    private Set<HeaderDialect> dialects;
    private String key;
    private String note;
    private boolean listed = true;
    private FieldRules fields = FieldRules.none();

    private Builder(String template) {
      this.template = template;
    }

    /** The methods the route applies to, such as {@code GET}; none means every method. */
    public Builder methods(String... methods) {
      return methods(List.of(methods));
    }

    /** As {@link #methods(String...)}. */
    public Builder methods(Collection<String> methods) {
      for (String m : methods) {
        if (m == null || !m.matches("[A-Za-z][A-Za-z0-9_-]{0,31}")) {
          throw new IllegalArgumentException("route " + template + ": methods: expected method tokens such as GET, got "
              + (m == null ? "null" : "'" + m + "'"));
        }
        this.methods.add(m.toUpperCase(Locale.ROOT));
      }
      return this;
    }

    /** A policy of the route. */
    public Builder policy(QuotaPolicy policy) {
      policies.add(Objects.requireNonNull(policy, "policy"));
      return this;
    }

    /**
     * A policy in shadow mode: decided on its own (never in the enforced all-or-nothing decision),
     * counted, reported to {@link GateListener#shadowDecided} and logged when it would refuse;
     * it never refuses and sends no fields. For rolling a limit out and seeing whom it would hit.
     */
    public Builder shadowPolicy(QuotaPolicy policy) {
      return shadowPolicy(policy, false);
    }

    /**
     * A policy in shadow mode ({@link #shadowPolicy(QuotaPolicy)}); with {@code sendFields}, its
     * RateLimit fields are sent with the response, as the gateway's {@code shadowFields} sends
     * them: as decided while it would allow, {@code r=0} with {@code t} until it would allow when
     * it would refuse (headroom-http {@code ShadowFields}). The request is served either way.
     */
    public Builder shadowPolicy(QuotaPolicy policy, boolean sendFields) {
      shadows.add(Objects.requireNonNull(policy, "policy"));
      if (sendFields) {
        shadowFields.add(policy.name());
      }
      return this;
    }

    /** What a request costs in units of the route's {@code requests} policies; 1 by default. */
    public Builder cost(long units) {
      this.cost = units;
      return this;
    }

    /**
     * A request header stating the request's cost, a whole number from 0 to {@code max}; absent,
     * the route's {@link #cost(long)}; anything else is refused with 400 naming the header.
     */
    public Builder costHeader(String header, long max) {
      this.costHeader = Objects.requireNonNull(header, "header");
      this.maxCost = max;
      return this;
    }

    /**
     * Count only failed or only successful requests ({@link Counting}): each request is counted
     * when decided, so concurrent attempts are bounded too, and given back when its response turns
     * out not to count.
     */
    public Builder counting(Counting counting) {
      this.counting = Objects.requireNonNull(counting, "counting");
      return this;
    }

    /**
     * Count only failed or only successful requests in the policy of this name (a policy of the
     * route), whatever the route's {@link #counting(Counting)}: a login route's per-account policy
     * may count failures while its per-address policy counts every attempt.
     */
    public Builder counting(String policy, Counting counting) {
      policyCounting.put(Objects.requireNonNull(policy, "policy"), Objects.requireNonNull(counting, "counting"));
      return this;
    }

    /**
     * The policy of this name (a policy or shadow policy of the route) decides only requests of
     * these methods, such as a write quota on {@code POST} and {@code PUT} beside a route-wide one;
     * the gateway's {@code policies.NAME.when.methods}. Requests of other methods are neither
     * counted nor refused by it.
     */
    public Builder when(String policy, Collection<String> methods) {
      Set<String> upper = new LinkedHashSet<>();
      for (String m : methods) {
        if (m == null || !m.matches("[A-Za-z][A-Za-z0-9_-]{0,31}")) {
          throw new IllegalArgumentException("route " + template + ": when: policy '" + policy
              + "': expected method tokens such as GET, got " + (m == null ? "null" : "'" + m + "'"));
        }
        upper.add(m.toUpperCase(Locale.ROOT));
      }
      if (upper.isEmpty()) {
        throw new IllegalArgumentException("route " + template + ": when: policy '" + policy
            + "': expected at least one method, got none");
      }
      when.put(Objects.requireNonNull(policy, "policy"), upper);
      return this;
    }

    /**
     * A response header stating units the request costs on top of its cost, known only once the
     * application has answered (a query's rows, a model's tokens): a whole number from 0 to
     * {@code max}, charged to the route's {@code requests} policies when the response completes, as
     * content bytes are (possibly into debt, which later requests wait out). A value that is not
     * valid charges nothing and is logged. The gateway's {@code cost.chargeHeader}.
     */
    public Builder chargeHeader(String header, long max) {
      this.chargeHeader = Objects.requireNonNull(header, "header");
      this.maxCost = max;
      return this;
    }

    /** What the route sends as {@code pk} in the ietf dialect, instead of the gate's exposure. */
    public Builder exposure(PartitionKeyExposure exposure) {
      this.exposure = Objects.requireNonNull(exposure, "exposure");
      return this;
    }

    /**
     * Whether the route leaves its RateLimit fields off 3xx responses (draft-09 section 6), instead
     * of the gate's rule.
     */
    public Builder omitOnRedirect(boolean omit) {
      this.omitOnRedirect = omit;
      return this;
    }

    /**
     * Adaptive concurrency ({@link AdaptiveConcurrency}): a {@code concurrent-requests} policy whose
     * quota is learnt from the route's latency and failures, refusing beyond it with 503
     * {@code temporary-reduced-capacity}; a route may have it alone, without other policies.
     */
    public Builder adaptive(AdaptiveConcurrency adaptive) {
      this.adaptive = Objects.requireNonNull(adaptive, "adaptive");
      return this;
    }

    /** Policies of the route. */
    public Builder policies(Collection<QuotaPolicy> policies) {
      policies.forEach(this::policy);
      return this;
    }

    /** The header dialects of this route, overriding the gate's default. */
    public Builder dialects(Collection<HeaderDialect> dialects) {
      if (dialects == null || dialects.isEmpty() || dialects.stream().anyMatch(Objects::isNull)) {
        throw new IllegalArgumentException("route " + template + ": dialects: expected at least one of ietf, draft-07, "
            + "draft-06, draft-03, x-ratelimit, got " + dialects);
      }
      this.dialects = EnumSet.copyOf(dialects);
      return this;
    }

    /** The endpoint key in the discovery document, such as {@code items}. */
    public Builder key(String key) {
      this.key = key;
      return this;
    }

    /** Additional context for the discovery document. */
    public Builder note(String note) {
      this.note = note;
      return this;
    }

    /** Whether the discovery document lists the route; true by default. */
    public Builder listed(boolean listed) {
      this.listed = listed;
      return this;
    }

    /**
     * The route's own field rules (headroom-http {@link FieldRules}: jitter, draft-09 section 8.5;
     * fields only near exhaustion, section 6.2; the remaining/reset ratio cap, sections 6 and 8.5);
     * each one not set here is the gate's. None by default.
     */
    public Builder fields(FieldRules fields) {
      this.fields = Objects.requireNonNull(fields, "fields");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the route, the field and what is expected
     */
    public RouteRules build() {
      PathTemplate path = PathTemplate.parse(template);
      if (policies.isEmpty() && shadows.isEmpty() && adaptive == null) {
        throw new IllegalArgumentException("route " + template + ": policies: expected at least one policy, got none");
      }
      if (cost < 0 || cost > 1_000_000 || maxCost < 1 || maxCost > 1_000_000 || (costHeader != null && cost > maxCost)) {
        throw new IllegalArgumentException("route " + template + ": cost: " + cost + " (max " + maxCost
            + "); expected 0 to 1000000, and at most the header's max");
      }
      Set<String> names = new LinkedHashSet<>();
      for (QuotaPolicy p : shadows) {
        names.add(p.name());
      }
      for (QuotaPolicy p : policies) {
        if (!names.add(p.name())) {
          throw new IllegalArgumentException("route " + template + ": policies: '" + p.name()
              + "' is listed twice; expected each policy once");
        }
      }
      if (adaptive != null && names.contains(adaptive.name())) {
        throw new IllegalArgumentException("route " + template + ": adaptive: name: '" + adaptive.name()
            + "' is a policy of the route too; expected a name of its own");
      }
      for (String name : policyCounting.keySet()) {
        if (policies.stream().noneMatch(p -> p.name().equals(name))) {
          throw new IllegalArgumentException("route " + template + ": counting: '" + name
              + "' is not a policy of the route; expected one of " + names);
        }
      }
      for (String name : when.keySet()) {
        if (!names.contains(name)) {
          throw new IllegalArgumentException("route " + template + ": when: '" + name
              + "' is not a policy of the route; expected one of " + names);
        }
      }
      return new RouteRules(this, path);
    }
  }
}
