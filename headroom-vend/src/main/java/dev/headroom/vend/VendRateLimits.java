package dev.headroom.vend;

import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.vend.format.Scope;
import dev.headroom.vend.format.VendRequestReader;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Which {@link QuotaPolicy} limits each {@link Scope}, for every function or for one function,
 * and what {@code vend.capabilities} says about them.
 *
 * <pre>{@code
 * VendRateLimits limits = VendRateLimits.builder()
 *     .limit(Scope.SERVICE, QuotaPolicy.builder("vend-service").quota(1000)
 *         .window(Duration.ofMinutes(1)).algorithm(Algorithm.FIXED_WINDOW).build())
 *     .limit(Scope.FUNCTION, "orders.create", QuotaPolicy.builder("vend-orders-create").quota(100)
 *         .window(Duration.ofMinutes(1)).algorithm(Algorithm.FIXED_WINDOW).build())
 *     .service("orders-api")
 *     .documentation(URI.create("https://docs.example.com/rate-limits"))
 *     .build();
 * }</pre>
 *
 * <p>For a call to function {@code f}, each scope applies at most one policy: the one configured
 * for {@code f} in that scope if any, otherwise the scope's policy for every function, otherwise
 * none. A policy counts requests ({@link QuotaUnit#REQUESTS}): the extension reports requests.
 *
 * <p>Immutable and thread-safe.
 */
public final class VendRateLimits {

  private final Map<Scope, QuotaPolicy> defaults;
  private final Map<String, Map<Scope, QuotaPolicy>> byFunction;
  private final List<ScopeLimit> all;
  private final String service;
  private final URI documentation;

  private VendRateLimits(Builder b) {
    this.defaults = Collections.unmodifiableMap(new EnumMap<>(b.defaults));
    Map<String, Map<Scope, QuotaPolicy>> copy = new LinkedHashMap<>();
    b.byFunction.forEach((f, m) -> copy.put(f, Collections.unmodifiableMap(new EnumMap<>(m))));
    this.byFunction = Collections.unmodifiableMap(copy);
    List<ScopeLimit> list = new ArrayList<>();
    for (Scope s : Scope.values()) {
      QuotaPolicy p = defaults.get(s);
      if (p != null) {
        list.add(new ScopeLimit(s, null, p));
      }
      byFunction.forEach((f, m) -> {
        QuotaPolicy fp = m.get(s);
        if (fp != null) {
          list.add(new ScopeLimit(s, f, fp));
        }
      });
    }
    this.all = List.copyOf(list);
    this.service = b.service;
    this.documentation = b.documentation;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The limits that apply to a call of {@code function}, at most one per scope, in scope order. */
  public List<ScopeLimit> applicableTo(String function) {
    Map<Scope, QuotaPolicy> specific = byFunction.getOrDefault(function, Map.of());
    List<ScopeLimit> out = new ArrayList<>(4);
    for (Scope s : Scope.values()) {
      QuotaPolicy p = specific.get(s);
      if (p != null) {
        out.add(new ScopeLimit(s, function, p));
      } else if ((p = defaults.get(s)) != null) {
        out.add(new ScopeLimit(s, null, p));
      }
    }
    return out;
  }

  /** Every configured limit, in scope order, the every-function limit of a scope first. */
  public List<ScopeLimit> all() {
    return all;
  }

  /** The service name {@code vend.capabilities} reports, when configured. */
  public Optional<String> service() {
    return Optional.ofNullable(service);
  }

  /** Where the rate limits are documented, for {@code vend.capabilities}, when configured. */
  public Optional<URI> documentation() {
    return Optional.ofNullable(documentation);
  }

  @Override
  public String toString() {
    return "VendRateLimits" + all;
  }

  /** Builds {@link VendRateLimits}. */
  public static final class Builder {
    private final Map<Scope, QuotaPolicy> defaults = new EnumMap<>(Scope.class);
    private final Map<String, Map<Scope, QuotaPolicy>> byFunction = new LinkedHashMap<>();
    private String service;
    private URI documentation;

    private Builder() {}

    /**
     * The policy of a scope for every function (unless a function has its own).
     *
     * @throws IllegalArgumentException if the scope already has one, or the policy does not count
     *     requests
     */
    public Builder limit(Scope scope, QuotaPolicy policy) {
      check(scope, null, policy);
      if (defaults.putIfAbsent(scope, policy) != null) {
        throw new IllegalArgumentException("limit: scope " + scope.token()
            + " already has a policy for every function ('" + defaults.get(scope).name()
            + "'), got a second one ('" + policy.name() + "')");
      }
      return this;
    }

    /**
     * The policy of a scope for one function, replacing the scope's every-function policy for it.
     *
     * @throws IllegalArgumentException if the function name is not in dot form, the pair already has
     *     a policy, or the policy does not count requests
     */
    public Builder limit(Scope scope, String function, QuotaPolicy policy) {
      if (!VendRequestReader.validFunction(function)) {
        throw new IllegalArgumentException("limit: function: expected a function name in <service>.<action> "
            + "dot form such as \"orders.create\", got " + (function == null ? "null" : "\"" + function + "\""));
      }
      check(scope, function, policy);
      Map<Scope, QuotaPolicy> m = byFunction.computeIfAbsent(function, f -> new EnumMap<>(Scope.class));
      if (m.putIfAbsent(scope, policy) != null) {
        throw new IllegalArgumentException("limit: scope " + scope.token() + " of function " + function
            + " already has a policy ('" + m.get(scope).name() + "'), got a second one ('" + policy.name() + "')");
      }
      return this;
    }

    /** The {@code service} name {@code vend.capabilities} reports; optional. */
    public Builder service(String service) {
      if (service == null || service.isBlank() || service.length() > 256) {
        throw new IllegalArgumentException("service: expected a name of 1 to 256 characters, got "
            + (service == null ? "null" : "\"" + service + "\""));
      }
      this.service = service;
      return this;
    }

    /** The {@code documentation} link {@code vend.capabilities} reports; optional, absolute. */
    public Builder documentation(URI documentation) {
      if (documentation == null || !documentation.isAbsolute()) {
        throw new IllegalArgumentException("documentation: expected an absolute URI, got " + documentation);
      }
      this.documentation = documentation;
      return this;
    }

    public VendRateLimits build() {
      return new VendRateLimits(this);
    }

    private static void check(Scope scope, String function, QuotaPolicy policy) {
      if (scope == null) {
        throw new IllegalArgumentException("limit: scope: expected global, service, function or user, got null");
      }
      if (policy == null) {
        throw new IllegalArgumentException("limit: policy of scope " + scope.token() + ": expected a QuotaPolicy, got null");
      }
      if (policy.unit() != QuotaUnit.REQUESTS) {
        throw new IllegalArgumentException("limit: policy '" + policy.name() + "' of scope " + scope.token()
            + (function == null ? "" : " for " + function) + ": unit: expected requests (the extension "
            + "reports requests), got " + policy.unit().token());
      }
    }
  }
}
