package dev.headroom.spring.boot;

import dev.headroom.enforcement.settings.HeaderSettings;
import dev.headroom.enforcement.settings.LimitSettings;
import dev.headroom.enforcement.settings.PolicySettings;
import dev.headroom.enforcement.settings.RouteSettings;
import dev.headroom.enforcement.settings.ServiceSettings;
import dev.headroom.enforcement.settings.StoreSettings;
import dev.headroom.http.DiscoveryPaths;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * The {@code headroom.*} properties: a binding of headroom-http's settings model
 * ({@link LimitSettings} with a {@link PolicySettings} for each policy, {@link StoreSettings},
 * {@link HeaderSettings}), read by its one converter with the other bindings. Everything is
 * checked when the application starts ({@link HeadroomSettings}); bad values stop startup with a
 * message naming each property, its value and what is expected.
 *
 * <pre>
 * headroom:
 *   service:
 *     name: Items API
 *     description: Catalogue of items.
 *   why: Limits keep the service responsive for every caller.
 *   dialects: [ietf]
 *   policies:
 *     per-client:
 *       quota: 100
 *       window: 1m
 *       partitioning: client-ip
 *   routes:
 *     - path: /api/items/{id}
 *       methods: [GET]
 *       policies: [per-client]
 * </pre>
 */
@ConfigurationProperties(prefix = "headroom")
public class HeadroomProperties extends LimitSettings<PolicySettings> {

  public HeadroomProperties() {
    super("Limits keep the service responsive and fair for every caller.");
  }

  /** Whether the Headroom filter is installed. */
  private boolean enabled = true;

  /** The service, as the limits discovery document names it. */
  private final Service service = new Service();

  /**
   * RateLimit header dialects written by routes that choose none: ietf (draft-08 to -10), draft-07,
   * draft-06, draft-03, x-ratelimit.
   */
  private List<String> dialects = new ArrayList<>(List.of("ietf"));

  /** How the RateLimit fields of responses are written (draft-ietf-httpapi-ratelimit-headers-09 sections 6 and 8.5). */
  @NestedConfigurationProperty
  private final HeaderSettings headers = new HeaderSettings();

  /** Graceful Boundaries bodies for Spring's own errors (the error page and ProblemDetail). */
  private final ErrorBodies errorBodies = new ErrorBodies();

  /** What is sent as pk in the ietf dialect: off, hash (SHA-256 of the partition) or hmac. */
  private String partitionKeyExposure = "off";

  /** The base64 key (at least 32 bytes) of partition-key-exposure hmac. */
  private String partitionKeyHmacKey;

  /** Where decisions are stored. */
  @NestedConfigurationProperty
  private final StoreSettings store = new StoreSettings();

  /** The limits discovery document (Graceful Boundaries section 1). */
  private final Discovery discovery = new Discovery();

  /** How client-ip partitions find the client. */
  private final ClientIp clientIp = new ClientIp();

  /** The order of the filter among the servlet filters; after Spring Security's (-100) by default. */
  private int filterOrder = 0;

  /** The routes and the policies that apply to them, matched in order before annotated handler methods. */
  private List<Route> routes = new ArrayList<>();

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public Service getService() {
    return service;
  }

  public List<String> getDialects() {
    return dialects;
  }

  public void setDialects(List<String> dialects) {
    this.dialects = dialects;
  }

  public HeaderSettings getHeaders() {
    return headers;
  }

  public String getPartitionKeyExposure() {
    return partitionKeyExposure;
  }

  public void setPartitionKeyExposure(String partitionKeyExposure) {
    this.partitionKeyExposure = partitionKeyExposure;
  }

  public String getPartitionKeyHmacKey() {
    return partitionKeyHmacKey;
  }

  public void setPartitionKeyHmacKey(String partitionKeyHmacKey) {
    this.partitionKeyHmacKey = partitionKeyHmacKey;
  }

  public StoreSettings getStore() {
    return store;
  }

  public Discovery getDiscovery() {
    return discovery;
  }

  public ClientIp getClientIp() {
    return clientIp;
  }

  public int getFilterOrder() {
    return filterOrder;
  }

  public void setFilterOrder(int filterOrder) {
    this.filterOrder = filterOrder;
  }

  public List<Route> getRoutes() {
    return routes;
  }

  public void setRoutes(List<Route> routes) {
    this.routes = routes;
  }

  public ErrorBodies getErrorBodies() {
    return errorBodies;
  }

  /** Graceful Boundaries bodies (section 6) for the errors Spring answers itself. */
  public static class ErrorBodies {

    /**
     * Answer Spring's error page (404, 405, 500, ...) and complete its ProblemDetail bodies with
     * error, detail and why (Graceful Boundaries section 6).
     */
    private boolean enabled = true;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }
  }

  /** The service described by the discovery document; its name is spring.application.name when unset. */
  public static class Service extends ServiceSettings {
    public Service() {
      super(null, "An API protected by Headroom.");
    }
  }

  /** The limits discovery document. */
  public static class Discovery {

    /** Whether the discovery document is served. */
    private boolean enabled = true;

    /** Where it is served. */
    private List<String> paths = new ArrayList<>(DiscoveryPaths.ALL);

    /** URL of a changelog of limit changes: relative or same-origin. */
    private String changelog;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public List<String> getPaths() {
      return paths;
    }

    public void setPaths(List<String> paths) {
      this.paths = paths;
    }

    public String getChangelog() {
      return changelog;
    }

    public void setChangelog(String changelog) {
      this.changelog = changelog;
    }
  }

  /** How client-ip partitions find the client behind proxies. */
  public static class ClientIp {

    /** CIDR ranges of proxies whose forwarding headers are believed, such as 10.0.0.0/8. */
    private List<String> trustedProxies = new ArrayList<>();

    public List<String> getTrustedProxies() {
      return trustedProxies;
    }

    public void setTrustedProxies(List<String> trustedProxies) {
      this.trustedProxies = trustedProxies;
    }
  }

  /**
   * One route: a path template, its methods, the policies that apply and every rule of the route
   * (headroom-enforcement's {@link RouteSettings}, the settings model's route, as the gateway's YAML
   * states it too).
   */
  public static class Route extends RouteSettings {}
}
