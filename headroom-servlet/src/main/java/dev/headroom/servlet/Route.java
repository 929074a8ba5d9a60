package dev.headroom.servlet;

import dev.headroom.QuotaPolicy;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.path.PathTemplate;
import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The policies that apply to requests of some methods on one path template (DESIGN.md, request
 * step 1): {@code Route.builder("/api/items/{id}").methods("GET").policy(perClient).build()}.
 *
 * <p>Path templates are those of the one grammar every front end and the client share,
 * {@link PathTemplate}: literal segments, {@code {name}} for one segment, {@code {name:regex}} for
 * one segment the regex matches, {@code *} for one segment and a final {@code **} for any rest,
 * including nothing. They are matched against the path inside the application as the container
 * decoded and normalised it (servlet path plus path info, {@link PathTemplate#matchesDecoded}). Empty
 * segments are ignored, so that {@code /a/} cannot escape the limits of {@code /a}, nor
 * {@code /a//b} those of {@code /a/b} on a container that merges slashes.
 *
 * <p>Immutable.
 */
public final class Route {

  private final Set<String> methods;
  private final String template;
  private final PathTemplate path;
  private final List<QuotaPolicy> policies;
  private final Set<HeaderDialect> dialects;
  private final String key;
  private final String note;
  private final boolean listed;
  private final Predicate<HttpServletRequest> condition;

  private Route(Builder b, PathTemplate path) {
    this.methods = Collections.unmodifiableSet(new LinkedHashSet<>(b.methods));
    this.template = b.template;
    this.path = path;
    this.policies = List.copyOf(b.policies);
    this.dialects = b.dialects == null ? null : Collections.unmodifiableSet(EnumSet.copyOf(b.dialects));
    this.key = b.key;
    this.note = b.note;
    this.listed = b.listed;
    this.condition = b.condition;
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

  /** The header dialects of this route; empty means the filter's default. */
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
   * Whether a request matches: its method is one of {@link #methods()} (HEAD counting as GET, since
   * a HEAD request runs the GET handler and only the content is left out, RFC 9110 section 9.3.2)
   * and its path, decoded and normalised as the container mapped it (servlet path plus path info),
   * the template.
   */
  public boolean matches(String method, String path) {
    return (methods.isEmpty() || methods.contains(method) || (method.equals("HEAD") && methods.contains("GET")))
        && this.path.matchesDecoded(path);
  }

  /**
   * Whether a request whose method and path {@link #matches(String, String) match} also meets the
   * route's {@link Builder#condition(Predicate) condition}; true when it has none.
   */
  public boolean accepts(HttpServletRequest request) {
    return condition == null || condition.test(request);
  }

  @Override
  public String toString() {
    return (methods.isEmpty() ? "*" : String.join(",", methods)) + " " + template + " " + policies;
  }

  /** Builds a {@link Route}. Not thread-safe. */
  public static final class Builder {
    private final String template;
    private final Set<String> methods = new LinkedHashSet<>();
    private final List<QuotaPolicy> policies = new ArrayList<>();
    private Set<HeaderDialect> dialects;
    private String key;
    private String note;
    private boolean listed = true;
    private Predicate<HttpServletRequest> condition;

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

    /** Policies of the route. */
    public Builder policies(Collection<QuotaPolicy> policies) {
      policies.forEach(this::policy);
      return this;
    }

    /** The header dialects of this route, overriding the filter's default. */
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
      PathTemplate path = PathTemplate.parse(template);
      if (policies.isEmpty()) {
        throw new IllegalArgumentException("route " + template + ": policies: expected at least one policy, got none");
      }
      Set<String> names = new LinkedHashSet<>();
      for (QuotaPolicy p : policies) {
        if (!names.add(p.name())) {
          throw new IllegalArgumentException("route " + template + ": policies: '" + p.name()
              + "' is listed twice; expected each policy once");
        }
      }
      return new Route(this, path);
    }
  }
}
