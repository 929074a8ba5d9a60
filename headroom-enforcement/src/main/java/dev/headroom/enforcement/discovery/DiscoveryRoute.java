package dev.headroom.enforcement.discovery;

import dev.headroom.QuotaPolicy;
import dev.headroom.http.path.PathTemplate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One route as the discovery document describes it: method, path template, the policies that
 * apply, and optionally its adaptive concurrency, the endpoint key and a note. A route marked unlisted is left out of the
 * document (Graceful Boundaries SC-4: internal, admin and debug endpoints are never published).
 * Immutable.
 */
public final class DiscoveryRoute {

  private final String method;
  private final String path;
  private final List<QuotaPolicy> policies;
  private final String key;
  private final String note;
  private final boolean listed;
  private final Cost cost;
  private final Adaptive adaptive;

  /**
   * What a request costs, in units of the route's {@code requests} policies: {@code units}, or the
   * value of the request header {@code header} up to {@code max}; {@code chargeHeader} names a
   * response header whose units are charged after the response. Published as the endpoint's
   * {@code cost} member (Graceful Boundaries allows members of its own).
   */
  public record Cost(long units, Optional<String> header, long max, Optional<String> chargeHeader) {}

  /**
   * The route's adaptive concurrency: a {@code concurrent-requests} limit learnt from the
   * upstream's latency and failures, published with the value it has now and the bounds it moves
   * within, and the guaranteed share of each plan when it has shares. It is a limit of the route
   * as a whole (scope {@code global}); RateLimit-Policy carries its value as it moves
   * (draft-ietf-httpapi-ratelimit-headers-09 section 3: dynamic constraints are better read from
   * the fields of each response).
   *
   * @param name the policy name it is advertised under in RateLimit-Policy
   * @param limit the requests that may be in flight at once now
   * @param minLimit the least it falls to
   * @param maxLimit the most it grows to
   * @param shares each plan's guaranteed fraction of it under overload, by plan name; empty for none
   */
  public record Adaptive(String name, int limit, int minLimit, int maxLimit, Map<String, Double> shares) {
    public Adaptive {
      Objects.requireNonNull(name, "name");
      shares = Collections.unmodifiableMap(new LinkedHashMap<>(shares));
    }
  }

  private DiscoveryRoute(Builder b, String path) {
    this.method = b.method;
    this.path = path;
    this.policies = List.copyOf(b.policies);
    this.key = b.key;
    this.note = b.note;
    this.listed = b.listed;
    this.cost = b.cost;
    this.adaptive = b.adaptive;
  }

  /**
   * Starts a route for a method (such as {@code GET}) and a path template (such as
   * {@code /api/items/{id}}) of the one grammar, {@link PathTemplate}: the document publishes its
   * canonical form, which the client reads back as the same template.
   */
  public static Builder builder(String method, String path) {
    return new Builder(method, path);
  }

  public String method() {
    return method;
  }

  /** The path template in the canonical form of the one grammar ({@link PathTemplate#toString()}). */
  public String path() {
    return path;
  }

  public List<QuotaPolicy> policies() {
    return policies;
  }

  /** The endpoint key in the document: the configured one, or {@code METHOD path}. */
  public String key() {
    return key != null ? key : method + " " + path;
  }

  public Optional<String> note() {
    return Optional.ofNullable(note);
  }

  /** What a request costs, when it is not one unit. */
  public Optional<Cost> cost() {
    return Optional.ofNullable(cost);
  }

  /** The route's adaptive concurrency, when it has one. */
  public Optional<Adaptive> adaptive() {
    return Optional.ofNullable(adaptive);
  }

  /** Whether the route is published. */
  public boolean listed() {
    return listed;
  }

  /** Builds a {@link DiscoveryRoute}. */
  public static final class Builder {
    private final String method;
    private final String path;
    private final List<QuotaPolicy> policies = new ArrayList<>();
    private String key;
    private String note;
    private boolean listed = true;
    private Cost cost;
    private Adaptive adaptive;

    private Builder(String method, String path) {
      this.method = method;
      this.path = path;
    }

    /** A policy that applies to the route. */
    public Builder policy(QuotaPolicy policy) {
      policies.add(Objects.requireNonNull(policy, "policy"));
      return this;
    }

    /** The endpoint key, such as {@code scan}. */
    public Builder key(String key) {
      this.key = key;
      return this;
    }

    /** Additional context for the endpoint. */
    public Builder note(String note) {
      this.note = note;
      return this;
    }

    /** What a request costs, when it is not one unit of each {@code requests} policy. */
    public Builder cost(Cost cost) {
      this.cost = cost;
      return this;
    }

    /** The route's adaptive concurrency, listed after its policies. */
    public Builder adaptive(Adaptive adaptive) {
      this.adaptive = Objects.requireNonNull(adaptive, "adaptive");
      return this;
    }

    /** Whether to publish the route; defaults to true. Set false for internal and admin routes (SC-4). */
    public Builder listed(boolean listed) {
      this.listed = listed;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the field, the value and what is expected
     */
    public DiscoveryRoute build() {
      if (method == null || !method.matches("[A-Z][A-Z0-9_-]{0,31}")) {
        throw new IllegalArgumentException("route method: expected an uppercase method token such as GET, got "
            + (method == null ? "null" : "'" + method + "'"));
      }
      PathTemplate template;
      try {
        template = PathTemplate.parse(path);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("route " + method + " path: " + e.getMessage(), e);
      }
      if (key != null && (key.isBlank() || key.length() > 128)) {
        throw new IllegalArgumentException("route " + method + " " + path + " key: expected 1 to 128 characters, got '" + key + "'");
      }
      if (note != null && (note.isBlank() || note.length() > 1000)) {
        throw new IllegalArgumentException("route " + method + " " + path + " note: expected 1 to 1000 characters");
      }
      return new DiscoveryRoute(this, template.toString());
    }
  }
}
