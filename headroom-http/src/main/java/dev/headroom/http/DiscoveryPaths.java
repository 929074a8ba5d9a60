package dev.headroom.http;

import java.util.List;

/**
 * Where a service publishes its limits: the Graceful Boundaries limits discovery endpoints (Graceful
 * Boundaries section 1, "Limits Discovery Endpoint"). The one home of these paths: the front ends serve them, the
 * client and the checker read them, the gateway's configuration reserves them.
 */
public final class DiscoveryPaths {
  private DiscoveryPaths() {}

  /** The well-known location, {@code /.well-known/limits} (RFC 8615 well-known URI). */
  public static final String WELL_KNOWN = "/.well-known/limits";

  /** The conventional API location, {@code /api/limits}. */
  public static final String API = "/api/limits";

  /** Both, the well-known one first: the order a reader tries them in and a server serves them. */
  public static final List<String> ALL = List.of(WELL_KNOWN, API);
}
