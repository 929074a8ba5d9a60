package dev.headroom.gateway.internal.proxy;

import dev.headroom.QuotaLimiter;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Vend;
import dev.headroom.gateway.internal.config.VendLimits;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.format.VendRequestReader;
import java.util.Map;

/**
 * One {@code type: vend} route made ready: headroom-vend's envelope reader (bounded by
 * {@code maxRequestBytes}) and rate limiter (on the gateway's store, bounded by
 * {@code maxResponseBytes} when it decorates responses). Immutable and thread-safe.
 */
public record VendRoutes(Vend settings, VendRequestReader reader, VendRateLimiter limiter) {

  /** The vend route {@code v}, deciding with {@code limiter} under the policies its limits name. */
  public static VendRoutes of(Vend v, Map<String, Policy> policies, QuotaLimiter limiter) {
    return new VendRoutes(v, VendRequestReader.builder().maxBytes(v.maxRequestBytes()).build(),
        VendRateLimiter.builder(VendLimits.of(v, policies)).limiter(limiter).maxResponseBytes(v.maxResponseBytes()).build());
  }
}
