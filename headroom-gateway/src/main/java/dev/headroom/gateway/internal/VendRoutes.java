package dev.headroom.gateway.internal;

import dev.headroom.QuotaLimiter;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Vend;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.VendRateLimits;
import dev.headroom.vend.format.Scope;
import dev.headroom.vend.format.VendRequestReader;
import java.util.Map;

/**
 * One {@code type: vend} route made ready: headroom-vend's envelope reader (bounded by
 * {@code maxRequestBytes}) and rate limiter (on the gateway's store, bounded by
 * {@code maxResponseBytes} when it decorates responses). Immutable and thread-safe.
 */
record VendRoutes(Vend settings, VendRequestReader reader, VendRateLimiter limiter) {

  /** The route's limits as headroom-vend enforces them; throws naming what it refuses. */
  static VendRateLimits limits(Vend v, Map<String, Policy> policies) {
    VendRateLimits.Builder b = VendRateLimits.builder();
    v.limits().forEach((scope, policy) -> b.limit(Scope.fromToken(scope), policies.get(policy).quota()));
    v.functions().forEach((function, m) ->
        m.forEach((scope, policy) -> b.limit(Scope.fromToken(scope), function, policies.get(policy).quota())));
    v.service().ifPresent(b::service);
    v.documentation().ifPresent(b::documentation);
    return b.build();
  }

  static VendRoutes of(Vend v, Map<String, Policy> policies, QuotaLimiter limiter) {
    return new VendRoutes(v, VendRequestReader.builder().maxBytes(v.maxRequestBytes()).build(),
        VendRateLimiter.builder(limits(v, policies)).limiter(limiter).maxResponseBytes(v.maxResponseBytes()).build());
  }
}
