package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.partition.PartitionKeyExposures;
import dev.headroom.gateway.config.PartitionKeyMode;
import dev.headroom.gateway.config.PartitionKeySettings;
import dev.headroom.gateway.config.Route;
import dev.headroom.http.PartitionKeyExposure;

/**
 * The {@code pk} exposure of each route: its own {@code pk} mode, else the configuration's; the
 * HMAC exposure was made from the key when the configuration was read. Stateless.
 */
final class RouteExposures {
  private RouteExposures() {}

  static PartitionKeyExposure forRoute(PartitionKeySettings pk, Route route) {
    PartitionKeyMode mode = route.pk().orElse(pk.mode());
    return switch (mode) {
      case OFF -> PartitionKeyExposures.off();
      case HASH -> PartitionKeyExposures.predictableHash();
      case HMAC -> pk.hmac().orElseThrow(() -> new IllegalStateException(
          "route " + route.name() + ": pk hmac without a key (the configuration reader checks this)"));
    };
  }
}
