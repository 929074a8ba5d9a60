package dev.headroom.gateway.internal;

import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.GatewayConfig.Route;
import dev.headroom.http.PartitionKeyExposure;

/** The {@code pk} exposure of each route. Stateless. */
final class PkExposures {
  private PkExposures() {}

  static PartitionKeyExposure forRoute(GatewayConfig config, Route route) {
    return PartitionKeyExposure.off();
  }
}
