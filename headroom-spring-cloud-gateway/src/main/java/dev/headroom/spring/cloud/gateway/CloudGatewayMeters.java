package dev.headroom.spring.cloud.gateway;

import dev.headroom.enforcement.DecisionMeters;
import dev.headroom.enforcement.GateBuilder;
import org.springframework.web.server.ServerWebExchange;

/**
 * The application's Micrometer {@code MeterRegistry} as both Headroom front ends of a Spring Cloud
 * Gateway application record in it (headroom-enforcement {@code HeadroomMeters}): the
 * {@code Headroom} filter's gate and {@link HeadroomRateLimiter}. Made by
 * {@link HeadroomCloudGatewayAutoConfiguration}'s meter configuration only when micrometer-core is
 * on the class path and the application has one {@code MeterRegistry}; this type names no
 * Micrometer class, so the rest of the auto-configuration loads without it.
 */
interface CloudGatewayMeters {

  /** Gives the {@code Headroom} filter's gate the registry. */
  void bind(GateBuilder<ServerWebExchange> gate);

  /** The meters of {@code RequestRateLimiter}'s decisions. */
  DecisionMeters decisions();
}
