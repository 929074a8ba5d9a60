package dev.headroom.vend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.QuotaPolicy;
import dev.headroom.vend.format.Scope;
import dev.headroom.vend.format.VendDuration;
import dev.headroom.vend.format.VendJson;
import java.util.Objects;
import java.util.Optional;

/**
 * One configured limit: a {@link QuotaPolicy} for a {@link Scope}, either for every function or
 * for one function only. It is what {@code vend.capabilities} lists in {@code rate_limits}
 * (seed 003, "Discovery"). Immutable.
 */
public final class ScopeLimit {

  private final Scope scope;
  private final String function;
  private final QuotaPolicy policy;

  ScopeLimit(Scope scope, String function, QuotaPolicy policy) {
    this.scope = Objects.requireNonNull(scope, "scope");
    this.function = function;
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  public Scope scope() {
    return scope;
  }

  /** The one function this limit is for; empty when it applies to every function. */
  public Optional<String> function() {
    return Optional.ofNullable(function);
  }

  public QuotaPolicy policy() {
    return policy;
  }

  /** The {@code rate_limits} entry: {@code {scope, function?, limit, window}}. */
  public ObjectNode toJson() {
    ObjectNode o = VendJson.object();
    o.put("scope", scope.token());
    if (function != null) {
      o.put("function", function);
    }
    o.put("limit", policy.quota());
    o.set("window", VendDuration.of(policy.window()).toJson());
    return o;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ScopeLimit)) {
      return false;
    }
    ScopeLimit s = (ScopeLimit) o;
    return scope == s.scope && Objects.equals(function, s.function) && policy.equals(s.policy);
  }

  @Override
  public int hashCode() {
    return Objects.hash(scope, function, policy);
  }

  @Override
  public String toString() {
    return scope.token() + (function == null ? "" : "(" + function + ")") + "=" + policy;
  }
}
