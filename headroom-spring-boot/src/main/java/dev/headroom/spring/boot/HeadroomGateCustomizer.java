package dev.headroom.spring.boot;

import dev.headroom.enforcement.GateBuilder;

/**
 * Something the starter adds to every gate it builds, servlet or reactive, from the application's
 * beans: the application's Micrometer registries ({@link HeadroomObservabilityConfiguration}).
 */
@FunctionalInterface
interface HeadroomGateCustomizer {

  /** Adds to {@code gate}. */
  void customize(GateBuilder<?> gate);
}
