package dev.headroom.gateway.internal.admin;

import dev.headroom.enforcement.CapacityReductions;
import dev.headroom.gateway.GatewayConfig;

/**
 * What the admin listener and the dashboard read of the running gateway, and all they read: the
 * configuration in force, the run-time capacity reductions (which {@code POST /capacity} sets) and
 * the gateway's meters. The proxy's state implements it; the admin side never sees connections,
 * routes or the store, so it depends on nothing of the proxy. Implementations are thread-safe.
 */
public interface LiveGateway {
  /** The configuration in force; a reload replaces it. */
  GatewayConfig config();

  /** The run-time capacity reductions, shared with the requests they reduce. */
  CapacityReductions capacity();

  /** The gateway's meters, which the dashboard samples. */
  GatewayMetrics metrics();
}
