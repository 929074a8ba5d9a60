package dev.headroom.gateway;

import dev.headroom.QuotaPolicy;
import dev.headroom.gateway.internal.ConfigReader;
import dev.headroom.gateway.internal.ConfigSections;
import dev.headroom.gateway.internal.ConfigSource;
import dev.headroom.http.body.PolicyTexts;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

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
 * @param upstreams the origin servers, by name
 * @param policies the quota policies, by name
 * @param routes the routes, in the order they are matched
 * @param pk how the {@code pk} parameter of the RateLimit fields is made, unless a route says otherwise
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
    Map<String, Upstream> upstreams,
    Map<String, Policy> policies,
    List<Route> routes,
    PkSettings pk,
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
  public static final int MAX_BYTES_CEILING = 64 << 20;

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
    return read(ConfigSource.read(file, maxBytes), file.toString());
  }

  /**
   * Validates YAML text of at most {@link #DEFAULT_MAX_BYTES} (in UTF-8), the bound a file has by
   * default; {@code source} names it in messages.
   */
  public static GatewayConfig parse(String yaml, String source) throws ConfigException {
    ConfigSource.checkLength(yaml, source, DEFAULT_MAX_BYTES);
    return read(yaml, source);
  }

  /**
   * The one call into the readers: {@link ConfigReader} validates every section and returns them;
   * this record adds the source and the text. The readers never refer to this record itself (only
   * to the section records nested in it), so the dependency goes one way, from here to them.
   */
  private static GatewayConfig read(String yaml, String source) throws ConfigException {
    ConfigSections s = ConfigReader.read(yaml, source, System::getenv);
    return new GatewayConfig(s.service(), s.listen(), s.admin(), s.store(), s.trustedProxies(), s.limits(),
        s.timeouts(), s.upstreams(), s.policies(), s.routes(), s.pk(), source, yaml);
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
    return new GatewayConfig(service, new Listen(listen.host(), port), admin, store, trustedProxies,
        limits, timeouts, upstreams, policies, routes, pk, source, text);
  }

  /** A copy with the admin listener on another port (the command line's {@code --admin-port}). */
  public GatewayConfig withAdminPort(int port) {
    return new GatewayConfig(service, listen, new Admin(admin.enabled(), admin.host(), port), store,
        trustedProxies, limits, timeouts, upstreams, policies, routes, pk, source, text);
  }

  /**
   * Who the gateway speaks for: the discovery document's {@code service} and {@code description},
   * its changelog and feed, the public {@code origin} callers reach it at (against which absolute
   * guidance URLs must be same-origin, Graceful Boundaries SC-6), and a {@code statusUrl} sent on
   * availability errors (502, 503, 504).
   */
  public record Service(String name, String description, Optional<String> changelog, Optional<String> feed,
      Optional<java.net.URI> origin, Optional<String> statusUrl) {}

  /** A listening address; port 0 picks any free port. */
  public record Listen(String host, int port) {}

  /** The admin listener; bound to loopback unless configured otherwise. */
  public record Admin(boolean enabled, String host, int port) {}

  /**
   * What the {@code pk} parameter of the RateLimit fields carries
   * (draft-ietf-httpapi-ratelimit-headers-09 sections 3.1.4, 4.1.3, 6.1, 7.1); never a raw credential.
   */
  public enum PkMode {
    /** No {@code pk}. */
    OFF("off"),
    /**
     * The predictable hash a client can compute for its own partition: the first 16 bytes of
     * SHA-256 of the policy name, a zero byte and the partition key (such as {@code ip:203.0.113.7}).
     */
    HASH("hash"),
    /** A keyed HMAC-SHA256 of the same input: stable for a client, unpredictable without the key. */
    HMAC("hmac");

    private final String token;

    PkMode(String token) {
      this.token = token;
    }

    /** The configuration token. */
    public String token() {
      return token;
    }
  }

  /**
   * The {@code pk} settings: the default mode and, for {@code hmac}, the exposure made from the key
   * named by {@code keyEnv} or {@code keyFile} (the key itself is never part of the configuration,
   * its text, or its string form).
   */
  public record PkSettings(PkMode mode, Optional<String> keyEnv, Optional<String> keyFile,
      Optional<dev.headroom.http.PartitionKeyExposure> hmac) {}

  /**
   * A {@code type: vend} route (the vend rate-limit extension, seed 003): the POST body is read
   * (at most {@code maxRequestBytes}) as a vend envelope and decided per scope; allowed calls are
   * forwarded and the upstream's JSON response (at most {@code maxResponseBytes}) gets the
   * extension data; larger responses pass through unchanged with the RateLimit fields only.
   *
   * @param limits the policy name of each scope ({@code global}, {@code service}, {@code function},
   *     {@code user}) for every function
   * @param functions per function, the policy name of each scope that differs for it
   * @param userHeader the request header naming the authenticated user, for the {@code user} scope
   * @param mergeCapabilities {@code vend.capabilities} is forwarded and our extension merged into
   *     the upstream's answer (true), or answered by the gateway (false)
   */
  public record Vend(Map<String, String> limits, Map<String, Map<String, String>> functions,
      Optional<String> userHeader, Optional<String> service, Optional<java.net.URI> documentation,
      boolean mergeCapabilities, int maxRequestBytes, int maxResponseBytes) {
    public Vend {
      limits = Map.copyOf(limits);
      functions = Map.copyOf(functions);
    }
  }

  /** Which store keeps the counters. */
  public enum StoreType {
    /** One process, in memory. */
    MEMORY,
    /** Many processes sharing one Redis (the headroom-redis module). */
    REDIS
  }

  /**
   * The store: its type, its bound on tracked keys (memory, and the in-memory fallback of redis
   * with failurePolicy FALLBACK), or for redis its URI, key prefix,
   * what to do when Redis cannot decide in time ({@code failurePolicy}) and how long a decision
   * waits for it ({@code decisionDeadline}).
   */
  public record StoreSettings(StoreType type, long maxKeys, Optional<String> uri, Optional<String> keyPrefix,
      dev.headroom.redis.FailurePolicy failurePolicy, Duration decisionDeadline) {}

  /** Size limits: request line, all header fields together, request body. */
  public record Limits(int maxRequestLineBytes, int maxHeaderBytes, long maxBodyBytes) {}

  /** Timeouts: connecting to an upstream, waiting for its response head, idle connections. */
  public record Timeouts(Duration connect, Duration response, Duration idle) {}

  /**
   * An origin server. {@code demo} starts the built-in demo upstream in-process on a loopback port
   * instead of naming a host and port.
   */
  public record Upstream(String name, String host, int port, boolean demo, int maxConnections) {}

  /**
   * Progressive blocking (Graceful Boundaries section 2, "Retry behavior guidance"): a caller that
   * sends {@code threshold} more requests while it is told to wait is blocked for {@code block}
   * and told {@code abnormal-usage-detected}.
   */
  public record Escalation(int threshold, Duration block) {}

  /**
   * A quota policy and how it speaks: its partitioning ({@code client-ip}, {@code header:NAME},
   * {@code api-key}, {@code route}, {@code global}), its texts (the {@code why} of its refusals, an
   * optional description and limit type for discovery, constructive guidance URLs; validated by
   * headroom-http when the file is read) and escalation.
   */
  public record Policy(
      QuotaPolicy quota,
      String partition,
      PolicyTexts texts,
      Optional<Escalation> escalation) {

    public String name() {
      return quota.name();
    }
  }

  /**
   * A route: methods and a path template ({@code /items/{id}}, {@code /files/**}), the upstream it
   * forwards to, the policies that apply, the header dialects it speaks (one, or several that do not clash) and whether the upstream's
   * bare non-success responses are rewritten into structured ones, and whether the upstream's
   * redirects (3xx) go out without RateLimit fields (draft-09 section 6).
   */
  public record Route(
      String name,
      Set<String> methods,
      String path,
      String upstream,
      List<String> policies,
      List<String> dialects,
      boolean normaliseErrors,
      boolean omitOnRedirect,
      Optional<PkMode> pk,
      Optional<Vend> vend) {
    public Route {
      methods = Set.copyOf(methods);
      policies = List.copyOf(policies);
      dialects = List.copyOf(dialects);
    }
  }
}
