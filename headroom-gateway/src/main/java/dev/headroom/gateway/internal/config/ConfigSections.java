package dev.headroom.gateway.internal.config;

import dev.headroom.gateway.config.AccessLogSettings;
import dev.headroom.gateway.config.Admin;
import dev.headroom.gateway.config.Limits;
import dev.headroom.gateway.config.Listen;
import dev.headroom.gateway.config.PartitionKeySettings;
import dev.headroom.gateway.config.PlanSettings;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Route;
import dev.headroom.gateway.config.Service;
import dev.headroom.gateway.config.StoreSettings;
import dev.headroom.gateway.config.TelemetrySettings;
import dev.headroom.gateway.config.Shutdown;
import dev.headroom.gateway.config.Timeouts;
import dev.headroom.gateway.config.Upstream;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The validated sections of a configuration, as {@link ConfigReader} returns them:
 * {@link dev.headroom.gateway.GatewayConfig} adds where they came from and the text, and is the
 * only one to build itself from them.
 *
 * <p>Dependency direction: {@code GatewayConfig} calls {@link ConfigReader#read} (its one entry
 * point into the readers) and builds itself from this record; the readers and this record use the
 * section records of {@code dev.headroom.gateway.config} ({@code Service}, {@code Route}, ...) but never
 * {@code GatewayConfig} itself, so there is no circle between the record and its readers.
 *
 * @param trustedProxies addresses or CIDR blocks whose forwarding headers are believed
 * @param upstreams by name, in file order
 * @param policies by name, in file order
 * @param routes in the order they are matched
 * @param plans the plans and their resolver, when the file declares them
 * @param accessLog the access log, when the file turns it on
 * @param telemetry traces and metrics over OTLP, when the file turns them on
 */
public record ConfigSections(
    Service service,
    Listen listen,
    Admin admin,
    StoreSettings store,
    List<String> trustedProxies,
    Limits limits,
    Timeouts timeouts,
    Shutdown shutdown,
    Map<String, Upstream> upstreams,
    Map<String, Policy> policies,
    List<Route> routes,
    PartitionKeySettings pk,
    Optional<PlanSettings> plans,
    Optional<AccessLogSettings> accessLog,
    Optional<TelemetrySettings> telemetry) {

  /** Copied as {@link dev.headroom.gateway.GatewayConfig} copies them, so the load-time check iterates what requests will. */
  public ConfigSections {
    trustedProxies = List.copyOf(trustedProxies);
    upstreams = Map.copyOf(upstreams);
    policies = Map.copyOf(policies);
    routes = List.copyOf(routes);
  }
}
