package dev.headroom.servlet;

import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.path.PathTemplate;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A route of {@link HeadroomFilter#builder()}: headroom-enforcement's {@link RouteRules} (the rules
 * every front end shares, {@link #rules()}) and a {@link Builder#condition(Predicate) condition} on
 * the servlet request, nothing more. {@link #of} takes rules built whole, with every rule they
 * have; {@code Route.builder("/api/items/{id}").methods("GET").policy(perClient).build()} states the
 * common ones. A filter handed a built gate ({@link HeadroomFilter#builder(Gate)})
 * needs no Route: the gate's routes take a condition of their own.
 *
 * <p>Path templates are those of the one grammar every front end and the client share,
 * {@link PathTemplate}; they are matched against the path inside the application as the container
 * decoded and normalised it (servlet path plus path info, {@link PathTemplate#matchesDecoded}).
 *
 * <p>Immutable.
 */
public final class Route {

  private final RouteRules rules;
  private final Predicate<HttpServletRequest> condition;

  private Route(RouteRules rules, Predicate<HttpServletRequest> condition) {
    this.rules = rules;
    this.condition = condition;
  }

  /**
   * A route of these rules, with every rule {@link RouteRules} has (a policy's method condition,
   * counting per policy, the response charge header, the route's {@code pk}, its redirect rule),
   * decided only for requests that also meet {@code condition} (null: every matching request).
   */
  public static Route of(RouteRules rules, Predicate<HttpServletRequest> condition) {
    return new Route(Objects.requireNonNull(rules, "rules"), condition);
  }

  /** Starts a route on a path template such as {@code /api/items/{id}}. */
  public static Builder builder(String template) {
    return new Builder(RouteRules.builder(template));
  }

  /** The rules every front end shares: methods, template, policies, cost, fields, discovery. */
  public RouteRules rules() {
    return rules;
  }

  /** The methods, upper case; empty means every method. */
  public Set<String> methods() {
    return rules.methods();
  }

  /** The path template as given. */
  public String template() {
    return rules.template();
  }

  /** The policies decided together for every matching request. */
  public List<QuotaPolicy> policies() {
    return rules.policies();
  }

  /** Policies decided in shadow: counted, reported to listeners, logged, never refusing. */
  public List<QuotaPolicy> shadowPolicies() {
    return rules.shadowPolicies();
  }

  /** Whether the RateLimit fields of the shadow policy of this name are sent ({@link RouteRules#sendsShadowFields}). */
  public boolean sendsShadowFields(String policy) {
    return rules.sendsShadowFields(policy);
  }

  /** What a request costs in units of the route's {@code requests} policies, without a cost header. */
  public long cost() {
    return rules.cost();
  }

  /** The request header stating a request's cost, if any. */
  public Optional<String> costHeader() {
    return rules.costHeader();
  }

  /** The largest cost {@link #costHeader()} may state. */
  public long maxCost() {
    return rules.maxCost();
  }

  /** Which responses count ({@link RouteRules#counting()}). */
  public RouteRules.Counting counting() {
    return rules.counting();
  }

  /** The header dialects of this route; empty means the filter's default. */
  public Optional<Set<HeaderDialect>> dialects() {
    return rules.dialects();
  }

  /** The endpoint key in the discovery document, if set. */
  public Optional<String> key() {
    return rules.key();
  }

  /** The note in the discovery document, if set. */
  public Optional<String> note() {
    return rules.note();
  }

  /** Whether the discovery document lists the route. */
  public boolean listed() {
    return rules.listed();
  }

  /** The route's own field rules; each one not set here is the filter's. */
  public FieldRules fields() {
    return rules.fields();
  }

  /** Whether a request's method and decoded path match ({@link RouteRules#matches}). */
  public boolean matches(String method, String path) {
    return rules.matches(method, path);
  }

  /** Whether a matching request also meets the route's condition; true when it has none. */
  public boolean accepts(HttpServletRequest request) {
    return condition == null || condition.test(request);
  }

  /** The condition, or null. */
  Predicate<HttpServletRequest> condition() {
    return condition;
  }

  @Override
  public String toString() {
    return rules.toString();
  }

  /** Builds a {@link Route}: {@link RouteRules.Builder}'s settings plus a condition. Not thread-safe. */
  public static final class Builder {
    private final RouteRules.Builder rules;
    private Predicate<HttpServletRequest> condition;

    private Builder(RouteRules.Builder rules) {
      this.rules = rules;
    }

    /** {@link RouteRules.Builder#methods(String...)}. */
    public Builder methods(String... methods) {
      rules.methods(methods);
      return this;
    }

    /** {@link RouteRules.Builder#methods(Collection)}. */
    public Builder methods(Collection<String> methods) {
      rules.methods(methods);
      return this;
    }

    /** {@link RouteRules.Builder#policy}. */
    public Builder policy(QuotaPolicy policy) {
      rules.policy(policy);
      return this;
    }

    /** {@link RouteRules.Builder#policies}. */
    public Builder policies(Collection<QuotaPolicy> policies) {
      rules.policies(policies);
      return this;
    }

    /** {@link RouteRules.Builder#shadowPolicy}: reported to the gate's listener ({@code GateListener.shadowDecided}). */
    public Builder shadowPolicy(QuotaPolicy policy) {
      rules.shadowPolicy(policy);
      return this;
    }

    /** {@link RouteRules.Builder#shadowPolicy(QuotaPolicy, boolean)}: with {@code sendFields}, its fields are sent. */
    public Builder shadowPolicy(QuotaPolicy policy, boolean sendFields) {
      rules.shadowPolicy(policy, sendFields);
      return this;
    }

    /** {@link RouteRules.Builder#cost}. */
    public Builder cost(long units) {
      rules.cost(units);
      return this;
    }

    /** {@link RouteRules.Builder#costHeader}. */
    public Builder costHeader(String header, long max) {
      rules.costHeader(header, max);
      return this;
    }

    /** {@link RouteRules.Builder#counting}. */
    public Builder counting(RouteRules.Counting counting) {
      rules.counting(counting);
      return this;
    }

    /** {@link RouteRules.Builder#dialects}. */
    public Builder dialects(Collection<HeaderDialect> dialects) {
      rules.dialects(dialects);
      return this;
    }

    /** {@link RouteRules.Builder#key}. */
    public Builder key(String key) {
      rules.key(key);
      return this;
    }

    /** {@link RouteRules.Builder#note}. */
    public Builder note(String note) {
      rules.note(note);
      return this;
    }

    /** {@link RouteRules.Builder#listed}. */
    public Builder listed(boolean listed) {
      rules.listed(listed);
      return this;
    }

    /** {@link RouteRules.Builder#fields}; each one not set here is the filter's. */
    public Builder fields(FieldRules fields) {
      rules.fields(fields);
      return this;
    }

    /**
     * A further test of requests whose method and path match, such as "the framework's handler for
     * this request is the annotated one" (Spring Boot's {@code @RateLimited}). A request that fails
     * it is matched against the next routes, as if this route did not exist. Called on the request
     * thread before the store is asked; it must be fast, thread-safe and must not throw.
     */
    public Builder condition(Predicate<HttpServletRequest> condition) {
      this.condition = Objects.requireNonNull(condition, "condition");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the route, the field and what is expected
     */
    public Route build() {
      return new Route(rules.build(), condition);
    }
  }
}
