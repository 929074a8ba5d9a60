package dev.headroom.gateway;

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
import dev.headroom.gateway.internal.config.ConfigReader;
import dev.headroom.gateway.internal.config.ConfigSections;
import dev.headroom.gateway.internal.config.ConfigSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The gateway's configuration: what {@code headroom serve} reads from its YAML file, validated as a
 * whole. Immutable; {@link #load(Path)} and {@link #parse(String, String)} either return a
 * configuration in which every reference resolves, or throw a {@link ConfigException} listing
 * every problem found. The file format is described by {@code headroom-config.schema.json}, which
 * ships in this module's resources.
 *
 * @param service who is speaking in discovery documents and refusals
 * @param listen where the gateway accepts traffic
 * @param admin where health, metrics and the current configuration are served
 * @param store where counters live
 * @param trustedProxies addresses or CIDR blocks whose {@code Forwarded} / {@code X-Forwarded-For}
 *     the gateway believes when it derives a client's address ({@code Forwarded} when both came)
 * @param limits size limits on requests
 * @param timeouts upstream and client timeouts
 * @param shutdown how long a drain lets exchanges in flight finish
 * @param upstreams the origin servers, by name
 * @param policies the quota policies, by name
 * @param routes the routes, in the order they are matched
 * @param pk how the {@code pk} parameter of the RateLimit fields is made, unless a route says otherwise
 * @param plans the plans (policy overrides per plan) and where a request's plan is read from
 * @param accessLog the access log ({@code accessLog}), off when absent
 * @param telemetry traces and metrics over OTLP ({@code telemetry}), off when absent
 * @param source where the configuration came from (a file name, or {@code <sample>})
 * @param text the configuration's text as read, served on the admin port
 */
public record GatewayConfig(
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
    Optional<TelemetrySettings> telemetry,
    String source,
    String text) {

  /** The name of the sample configuration resource, the one {@code headroom serve} runs without --config. */
  public static final String SAMPLE_RESOURCE = "/dev/headroom/gateway/sample-config.yaml";

  /** The name of the JSON Schema resource describing the file. */
  public static final String SCHEMA_RESOURCE = "/headroom-config.schema.json";

  /**
   * The size in bytes a configuration file may have unless told otherwise: hundreds of times the
   * sample's 2 KB, and small enough that SnakeYAML, whose time grows with the square of a line's
   * length, parses the worst such file (one 1 MiB line) in under a second of CPU (BENCHMARKS.md).
   */
  public static final long DEFAULT_MAX_BYTES = 1 << 20;

  /** The largest bound {@link #load(Path, long)} accepts: the file is held in memory whole. */
  public static final int MAX_BYTES_CEILING = ConfigSource.MAX_BYTES_CEILING;

  public GatewayConfig {
    trustedProxies = List.copyOf(trustedProxies);
    upstreams = Map.copyOf(upstreams);
    policies = Map.copyOf(policies);
    routes = List.copyOf(routes);
  }

  /**
   * Reads and validates a YAML file of at most {@link #DEFAULT_MAX_BYTES}.
   *
   * @see #load(Path, long)
   */
  public static GatewayConfig load(Path file) throws ConfigException {
    return load(file, DEFAULT_MAX_BYTES);
  }

  /**
   * Reads and validates a YAML file of at most {@code maxBytes} bytes. The bound is checked from
   * the file's size and a read that stops one byte past it, before any parsing, so an oversized
   * file is refused without being parsed. Duplicate keys, aliases and nesting deeper than 20
   * levels are refused too.
   *
   * @param maxBytes from 1 to {@link #MAX_BYTES_CEILING}
   * @throws ConfigException listing every problem, each naming the file or the YAML path
   */
  public static GatewayConfig load(Path file, long maxBytes) throws ConfigException {
    if (maxBytes < 1 || maxBytes > MAX_BYTES_CEILING) {
      throw new IllegalArgumentException("maxBytes: " + maxBytes + " is not valid; expected 1 to "
          + MAX_BYTES_CEILING);
    }
    return read(ConfigSource.read(file, maxBytes), file.toString(), file.toAbsolutePath().getParent());
  }

  /**
   * Validates YAML text of at most {@link #DEFAULT_MAX_BYTES} (in UTF-8), the bound a file has by
   * default; {@code source} names it in messages. Relative file paths in it resolve against the
   * working directory; in a file read by {@link #load(Path)}, against the file's folder.
   */
  public static GatewayConfig parse(String yaml, String source) throws ConfigException {
    ConfigSource.checkLength(yaml, source, DEFAULT_MAX_BYTES);
    return read(yaml, source, null);
  }

  /**
   * The one call into the readers: {@link ConfigReader} validates every section and returns them;
   * this record adds the source and the text. The readers never refer to this record itself, only
   * to the section records of {@code dev.headroom.gateway.config}, so the dependency goes one way,
   * from here to them (no import circle: {@code ImportCircleTest} in headroom-cli).
   */
  private static GatewayConfig read(String yaml, String source, Path folder) throws ConfigException {
    ConfigSections s = ConfigReader.read(yaml, source, System::getenv, folder);
    return new GatewayConfig(s.service(), s.listen(), s.admin(), s.store(), s.trustedProxies(), s.limits(),
        s.timeouts(), s.shutdown(), s.upstreams(), s.policies(), s.routes(), s.pk(), s.plans(), s.accessLog(), s.telemetry(),
        source, yaml);
  }

  /** The sample configuration: three policies in front of the built-in demo upstream. */
  public static GatewayConfig sample() {
    try {
      return parse(sampleText(), "<sample>");
    } catch (ConfigException e) {
      throw new IllegalStateException("the bundled sample configuration is invalid: " + e.getMessage(), e);
    }
  }

  /** The sample configuration's YAML text. */
  public static String sampleText() {
    try (InputStream in = GatewayConfig.class.getResourceAsStream(SAMPLE_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + SAMPLE_RESOURCE);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read resource " + SAMPLE_RESOURCE, e);
    }
  }

  /** A copy listening on another port (the command line's {@code --port}). */
  public GatewayConfig withListenPort(int port) {
    return new GatewayConfig(service, listen.withPort(port), admin, store, trustedProxies,
        limits, timeouts, shutdown, upstreams, policies, routes, pk, plans, accessLog, telemetry, source, text);
  }

  /** A copy with the admin listener on another port (the command line's {@code --admin-port}). */
  public GatewayConfig withAdminPort(int port) {
    return new GatewayConfig(service, listen, admin.withPort(port), store,
        trustedProxies, limits, timeouts, shutdown, upstreams, policies, routes, pk, plans, accessLog, telemetry, source, text);
  }
}
