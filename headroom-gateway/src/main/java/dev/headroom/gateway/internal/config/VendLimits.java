package dev.headroom.gateway.internal.config;

import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Vend;
import dev.headroom.vend.VendRateLimits;
import dev.headroom.vend.format.Scope;
import java.util.Map;

/**
 * A {@code type: vend} route's limits as headroom-vend enforces them, from the route's settings and
 * the policies they name: {@link VendReader} checks them with this at load time, and the gateway
 * builds the route's limiter from the same limits, so the two cannot disagree.
 */
public final class VendLimits {
  private VendLimits() {
  }

  /**
   * The limits of {@code v}, each scope (and function) bound to its policy's quota.
   *
   * @throws IllegalArgumentException naming what headroom-vend refuses
   */
  public static VendRateLimits of(Vend v, Map<String, Policy> policies) {
    VendRateLimits.Builder b = VendRateLimits.builder();
    v.limits().forEach((scope, policy) -> b.limit(Scope.fromToken(scope), policies.get(policy).quota()));
    v.functions().forEach((function, m) ->
        m.forEach((scope, policy) -> b.limit(Scope.fromToken(scope), function, policies.get(policy).quota())));
    v.service().ifPresent(b::service);
    v.documentation().ifPresent(b::documentation);
    return b.build();
  }
}
