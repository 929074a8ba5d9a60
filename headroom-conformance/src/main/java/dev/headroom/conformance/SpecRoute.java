package dev.headroom.conformance;

import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.Escalation;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.http.headers.HeaderDialect;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One route of the {@link SpecFixture}: a method and path template, the policies that apply, the
 * dialects its responses use, and what the application does there. Immutable.
 */
public final class SpecRoute {
  private final String method;
  private final String template;
  private final List<QuotaPolicy> policies;
  private final Set<HeaderDialect> dialects;
  private final SpecEndpoint endpoint;
  private final FieldRules fields;
  private final boolean listed;
  private final Map<String, Escalation> escalations;
  private final List<String> methods;
  private final Map<String, List<String>> when;
  private final Map<String, RouteRules.Counting> counting;
  private final String chargeHeader;

  SpecRoute(String method, String template, List<QuotaPolicy> policies, Set<HeaderDialect> dialects, SpecEndpoint endpoint) {
    this(method, template, policies, dialects, endpoint, FieldRules.none(), true, Map.of());
  }

  SpecRoute(String method, String template, List<QuotaPolicy> policies, Set<HeaderDialect> dialects, SpecEndpoint endpoint,
      FieldRules fields, boolean listed, Map<String, Escalation> escalations) {
    this.method = method;
    this.template = template;
    this.policies = List.copyOf(policies);
    this.dialects = Set.copyOf(dialects);
    this.endpoint = endpoint;
    this.fields = fields;
    this.listed = listed;
    this.escalations = Map.copyOf(escalations);
    this.methods = List.of(method);
    this.when = Map.of();
    this.counting = Map.of();
    this.chargeHeader = null;
  }

  private SpecRoute(SpecRoute r, List<String> methods, Map<String, List<String>> when,
      Map<String, RouteRules.Counting> counting, String chargeHeader) {
    this.method = methods.get(0);
    this.template = r.template;
    this.policies = r.policies;
    this.dialects = r.dialects;
    this.endpoint = r.endpoint;
    this.fields = r.fields;
    this.listed = r.listed;
    this.escalations = r.escalations;
    this.methods = List.copyOf(methods);
    this.when = Map.copyOf(when);
    this.counting = Map.copyOf(counting);
    this.chargeHeader = chargeHeader;
  }

  /** This route on these methods, the first being {@link #method()}. */
  SpecRoute onMethods(String... methods) {
    return new SpecRoute(this, List.of(methods), when, counting, chargeHeader);
  }

  /** This route with the policy of this name deciding only requests of these methods. */
  SpecRoute when(String policy, String... methods) {
    Map<String, List<String>> w = new LinkedHashMap<>(when);
    w.put(policy, List.of(methods));
    return new SpecRoute(this, this.methods, w, counting, chargeHeader);
  }

  /** This route with the policy of this name counting only some responses. */
  SpecRoute counting(String policy, RouteRules.Counting c) {
    Map<String, RouteRules.Counting> m = new LinkedHashMap<>(counting);
    m.put(policy, c);
    return new SpecRoute(this, methods, when, m, chargeHeader);
  }

  /** This route charging what its responses state in {@code header} ({@link SpecFixture#MAX_CHARGE} at most). */
  SpecRoute chargeHeader(String header) {
    return new SpecRoute(this, methods, when, counting, header);
  }

  /**
   * The route as headroom-enforcement's {@link RouteRules}, for the front ends configured in code
   * (the servlet and WebFlux filters): methods, template, policies, dialects, field rules, listing,
   * method conditions, counting and charge header. Escalations are the gate's, by policy name.
   */
  public RouteRules rules() {
    RouteRules.Builder b = RouteRules.builder(template).methods(methods).policies(policies).dialects(dialects)
        .fields(fields).listed(listed);
    when.forEach(b::when);
    counting.forEach(b::counting);
    if (chargeHeader != null) {
      b.chargeHeader(chargeHeader, SpecFixture.MAX_CHARGE);
    }
    return b.build();
  }

  /**
   * Every method of the route, {@link #method()} first; most routes have one. The application
   * serves the route's endpoint for each.
   */
  public List<String> methods() {
    return methods;
  }

  /**
   * The methods the policy of this name decides, when the route has such a condition (the gateway's
   * {@code policies.NAME.when.methods}; headroom-enforcement {@code RouteRules.Builder.when}); by
   * policy name, empty for most routes. Requests of other methods are neither counted nor refused by it.
   */
  public Map<String, List<String>> when() {
    return when;
  }

  /**
   * Which responses count for the policy of this name, when not every one does (the gateway's
   * {@code policies.NAME.count}; {@code RouteRules.Builder.counting(String, Counting)}); by policy
   * name, empty for most routes.
   */
  public Map<String, RouteRules.Counting> counting() {
    return counting;
  }

  /**
   * The response header whose units are charged to the route's requests policies once the response
   * is known, at most {@link SpecFixture#MAX_CHARGE} (the gateway's {@code cost.chargeHeader};
   * {@code RouteRules.Builder.chargeHeader}), if the route has one.
   */
  public Optional<String> chargeHeader() {
    return Optional.ofNullable(chargeHeader);
  }

  /** The route's own field rules (jitter, near exhaustion, ratio cap); {@link FieldRules#none()} for most. */
  public FieldRules fields() {
    return fields;
  }

  /** Whether the discovery document lists the route (Graceful Boundaries SC-4); false keeps it out. */
  public boolean listed() {
    return listed;
  }

  /** The escalation of the route's policy of this name, if it escalates (draft-09 section 5.3). */
  public Optional<Escalation> escalation(String policy) {
    return Optional.ofNullable(escalations.get(policy));
  }

  /** The method, such as {@code GET}. */
  public String method() {
    return method;
  }

  /** The path template, with {@code {name}} for one path segment, such as {@code /spec/items/{id}}. */
  public String template() {
    return template;
  }

  /** The policies decided for every request of the route, all at once; empty for unlimited routes. */
  public List<QuotaPolicy> policies() {
    return policies;
  }

  /** The header dialects the route's responses carry. */
  public Set<HeaderDialect> dialects() {
    return dialects;
  }

  /** What the application does. */
  public SpecEndpoint endpoint() {
    return endpoint;
  }

  @Override
  public String toString() {
    return String.join(",", methods) + " " + template + " " + policies + " " + dialects + " " + endpoint + " " + fields
        + (listed ? "" : " unlisted") + (escalations.isEmpty() ? "" : " " + escalations)
        + (when.isEmpty() ? "" : " when " + when) + (counting.isEmpty() ? "" : " counting " + counting)
        + (chargeHeader == null ? "" : " charged by " + chargeHeader);
  }
}
