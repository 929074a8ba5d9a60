package dev.headroom.conformance;

import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.Escalation;
import dev.headroom.http.headers.FieldRules;
import dev.headroom.http.headers.HeaderDialect;
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
    return method + " " + template + " " + policies + " " + dialects + " " + endpoint + " " + fields
        + (listed ? "" : " unlisted") + (escalations.isEmpty() ? "" : " " + escalations);
  }
}
