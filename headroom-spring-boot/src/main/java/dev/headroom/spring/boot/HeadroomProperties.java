package dev.headroom.spring.boot;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code headroom.*} properties. Everything is checked when the application starts
 * ({@link HeadroomConfiguration}); a bad value stops startup with a message naming the property,
 * the value and what is expected.
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
public class HeadroomProperties {

  /** Whether the Headroom filter is installed. */
  private boolean enabled = true;

  /** The service, as the limits discovery document names it. */
  private final Service service = new Service();

  /**
   * Why limits exist, for every policy without a why of its own: a category of protection, shown
   * in refusals and in discovery (Graceful Boundaries section 2).
   */
  private String why = "Limits keep the service responsive and fair for every caller.";

  /**
   * RateLimit header dialects written by routes that choose none: ietf (draft-08 to -10), draft-07,
   * draft-06, draft-03, x-ratelimit.
   */
  private List<String> dialects = new ArrayList<>(List.of("ietf"));

  /** How the RateLimit fields of responses are written (draft-ietf-httpapi-ratelimit-headers-09 sections 6 and 8.5). */
  private final Headers headers = new Headers();

  /** Graceful Boundaries bodies for Spring's own errors (the error page and ProblemDetail). */
  private final ErrorBodies errorBodies = new ErrorBodies();

  /** What is sent as pk in the ietf dialect: off, hash (SHA-256 of the partition) or hmac. */
  private String partitionKeyExposure = "off";

  /** The base64 key (at least 32 bytes) of partition-key-exposure hmac. */
  private String partitionKeyHmacKey;

  /** Where decisions are stored. */
  private final Store store = new Store();

  /** The limits discovery document (Graceful Boundaries section 1). */
  private final Discovery discovery = new Discovery();

  /** How client-ip partitions find the client. */
  private final ClientIp clientIp = new ClientIp();

  /** The order of the filter among the servlet filters; after Spring Security's (-100) by default. */
  private int filterOrder = 0;

  /** The quota policies, by name. */
  private Map<String, Policy> policies = new LinkedHashMap<>();

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

  public String getWhy() {
    return why;
  }

  public void setWhy(String why) {
    this.why = why;
  }

  public List<String> getDialects() {
    return dialects;
  }

  public void setDialects(List<String> dialects) {
    this.dialects = dialects;
  }

  public Headers getHeaders() {
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

  public Store getStore() {
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

  public Map<String, Policy> getPolicies() {
    return policies;
  }

  public void setPolicies(Map<String, Policy> policies) {
    this.policies = policies;
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

  /**
   * The optional field rules of draft-09 (headroom-http {@code FieldOptions}), for every route
   * ({@code headroom.headers}) or one route ({@code headroom.routes[]}, where an unset rule is
   * {@code headroom.headers}').
   */
  public abstract static class FieldRules {

    /**
     * The most whole seconds, from 0s to 1h, added at random to every reset (t) and to Retry-After
     * of a response, so that clients refused together come back spread out (draft-09 section 8.5).
     */
    private Duration jitter;

    /**
     * Write the fields of allowed requests only when some policy's utilisation (1 - r/q) reaches
     * this share, from above 0 to 1 (draft-09 section 6.2); always when unset. Refusals always carry them.
     */
    private Double onlyNearExhaustion;

    /**
     * Cap each policy's remaining/reset ratio (r / t) at this factor, 1 or more, times its nominal
     * throughput q / w (draft-09 sections 6 and 8.5); no cap when unset.
     */
    private Double capRemainingToResetRatio;

    /** The shortest window the ratio cap applies to; 0s (every window) by default. */
    private Duration capMinWindow = Duration.ZERO;

    public Duration getJitter() {
      return jitter;
    }

    public void setJitter(Duration jitter) {
      this.jitter = jitter;
    }

    public Double getOnlyNearExhaustion() {
      return onlyNearExhaustion;
    }

    public void setOnlyNearExhaustion(Double onlyNearExhaustion) {
      this.onlyNearExhaustion = onlyNearExhaustion;
    }

    public Double getCapRemainingToResetRatio() {
      return capRemainingToResetRatio;
    }

    public void setCapRemainingToResetRatio(Double capRemainingToResetRatio) {
      this.capRemainingToResetRatio = capRemainingToResetRatio;
    }

    public Duration getCapMinWindow() {
      return capMinWindow;
    }

    public void setCapMinWindow(Duration capMinWindow) {
      this.capMinWindow = capMinWindow;
    }
  }

  /** How the RateLimit fields of responses are written; jitter 0s (none) by default. */
  public static class Headers extends FieldRules {

    /**
     * Leave the RateLimit fields off 3xx responses of the application (draft-09 section 6: a low
     * remaining quota on a redirect can stall a client that follows it).
     */
    private boolean omitOnRedirect = false;

    public Headers() {
      setJitter(Duration.ZERO);
    }

    public boolean isOmitOnRedirect() {
      return omitOnRedirect;
    }

    public void setOmitOnRedirect(boolean omitOnRedirect) {
      this.omitOnRedirect = omitOnRedirect;
    }
  }

  /** The service described by the discovery document. */
  public static class Service {

    /** The service name; spring.application.name when unset. */
    private String name;

    /** What the service does. */
    private String description = "An API protected by Headroom.";

    /**
     * The service's origin, such as https://api.example.com: guidance URLs may then be absolute on
     * it as well as relative (Graceful Boundaries SC-6).
     */
    private String origin;

    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }

    public String getDescription() {
      return description;
    }

    public void setDescription(String description) {
      this.description = description;
    }

    public String getOrigin() {
      return origin;
    }

    public void setOrigin(String origin) {
      this.origin = origin;
    }
  }

  /** Where decisions are stored. */
  public static class Store {

    /**
     * in-memory (one process) or redis (shared; needs the headroom-redis module). A Store bean of
     * the application's own replaces either.
     */
    private String type = "in-memory";

    /** Most partitions the in-memory store tracks before evicting the least recently used. */
    private long maxKeys = 1_000_000;

    /** What to do when the store cannot decide: allow (let requests through) or refuse (503). */
    private String onFailure = "allow";

    /** The Redis URI of store type redis, such as redis://127.0.0.1:6379. */
    private String redisUri = "redis://127.0.0.1:6379";

    /**
     * Store type redis: how long a refusal Redis gave answers equal requests without a round trip,
     * while its Retry-After runs (0 asks Redis every time; at most 1h).
     */
    private java.time.Duration refusalMemory = java.time.Duration.ofSeconds(1);

    public java.time.Duration getRefusalMemory() {
      return refusalMemory;
    }

    public void setRefusalMemory(java.time.Duration refusalMemory) {
      this.refusalMemory = refusalMemory;
    }

    public String getType() {
      return type;
    }

    public void setType(String type) {
      this.type = type;
    }

    public long getMaxKeys() {
      return maxKeys;
    }

    public void setMaxKeys(long maxKeys) {
      this.maxKeys = maxKeys;
    }

    public String getOnFailure() {
      return onFailure;
    }

    public void setOnFailure(String onFailure) {
      this.onFailure = onFailure;
    }

    public String getRedisUri() {
      return redisUri;
    }

    public void setRedisUri(String redisUri) {
      this.redisUri = redisUri;
    }
  }

  /** The limits discovery document. */
  public static class Discovery {

    /** Whether the discovery document is served. */
    private boolean enabled = true;

    /** Where it is served. */
    private List<String> paths = new ArrayList<>(List.of("/.well-known/limits", "/api/limits"));

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

  /** One quota policy (draft-ietf-httpapi-ratelimit-headers-09 section 3) and what callers are told about it. */
  public static class Policy {

    /** q: the quota, 1 or more units per window. */
    private Long quota;

    /** w: the window, whole seconds, such as 60s or 1h. */
    private Duration window;

    /** qu: requests, content-bytes or concurrent-requests. */
    private String unit = "requests";

    /**
     * fixed-window, sliding-window, token-bucket or concurrency; token-bucket by default
     * (concurrency for concurrent-requests).
     */
    private String algorithm;

    /**
     * Who is counted apart: client-ip, api-key, header:Name, user, route, method, global, joined by
     * + (composite) and | (alternatives).
     */
    private String partitioning = "global";

    /** For concurrent-requests: the longest a lease is held if a response never completes. */
    private Duration leaseTimeout;

    /** Why this limit exists; headroom.why when unset. */
    private String why;

    /** The limit in words, such as "100 requests per minute per client address". */
    private String limit;

    /** The description in the discovery document. */
    private String description;

    /** The snake_case error of refusals; rate_limit_exceeded by default. */
    private String error;

    /** Where a cached result can be fetched instead (relative or same-origin). */
    private String cachedResultUrl;

    /** A different endpoint that may serve the need (relative or same-origin). */
    private String alternativeEndpoint;

    /** Where to get higher limits. */
    private String upgradeUrl;

    /** A page for human follow-up. */
    private String humanUrl;

    /**
     * Refusals of one partition while it is told to wait that block it, answered 429
     * abnormal-usage-detected (draft-09 section 5.3); no escalation when unset.
     */
    private Integer escalationThreshold;

    /** How long an escalation blocks a partition, whole seconds of at least 1s; 15m by default. */
    private Duration escalationBlock = Duration.ofMinutes(15);

    /** Callers that bypass this policy: neither counted nor refused by it (nor by a plan's version of it). */
    private final HeadroomAllowProperties allow = new HeadroomAllowProperties();

    public HeadroomAllowProperties getAllow() {
      return allow;
    }

    public Integer getEscalationThreshold() {
      return escalationThreshold;
    }

    public void setEscalationThreshold(Integer escalationThreshold) {
      this.escalationThreshold = escalationThreshold;
    }

    public Duration getEscalationBlock() {
      return escalationBlock;
    }

    public void setEscalationBlock(Duration escalationBlock) {
      this.escalationBlock = escalationBlock;
    }

    public Long getQuota() {
      return quota;
    }

    public void setQuota(Long quota) {
      this.quota = quota;
    }

    public Duration getWindow() {
      return window;
    }

    public void setWindow(Duration window) {
      this.window = window;
    }

    public String getUnit() {
      return unit;
    }

    public void setUnit(String unit) {
      this.unit = unit;
    }

    public String getAlgorithm() {
      return algorithm;
    }

    public void setAlgorithm(String algorithm) {
      this.algorithm = algorithm;
    }

    public String getPartitioning() {
      return partitioning;
    }

    public void setPartitioning(String partitioning) {
      this.partitioning = partitioning;
    }

    public Duration getLeaseTimeout() {
      return leaseTimeout;
    }

    public void setLeaseTimeout(Duration leaseTimeout) {
      this.leaseTimeout = leaseTimeout;
    }

    public String getWhy() {
      return why;
    }

    public void setWhy(String why) {
      this.why = why;
    }

    public String getLimit() {
      return limit;
    }

    public void setLimit(String limit) {
      this.limit = limit;
    }

    public String getDescription() {
      return description;
    }

    public void setDescription(String description) {
      this.description = description;
    }

    public String getError() {
      return error;
    }

    public void setError(String error) {
      this.error = error;
    }

    public String getCachedResultUrl() {
      return cachedResultUrl;
    }

    public void setCachedResultUrl(String cachedResultUrl) {
      this.cachedResultUrl = cachedResultUrl;
    }

    public String getAlternativeEndpoint() {
      return alternativeEndpoint;
    }

    public void setAlternativeEndpoint(String alternativeEndpoint) {
      this.alternativeEndpoint = alternativeEndpoint;
    }

    public String getUpgradeUrl() {
      return upgradeUrl;
    }

    public void setUpgradeUrl(String upgradeUrl) {
      this.upgradeUrl = upgradeUrl;
    }

    public String getHumanUrl() {
      return humanUrl;
    }

    public void setHumanUrl(String humanUrl) {
      this.humanUrl = humanUrl;
    }
  }

  /** One route: a path template, its methods, and the policies that apply. */
  public static class Route extends FieldRules {

    /** The path template (headroom-http's one grammar), such as /api/items/{id}; {id:regex} and * are one segment, a final ** any rest. */
    private String path;

    /** The methods, such as [GET, POST]; every method when empty. */
    private List<String> methods = new ArrayList<>();

    /** Names of policies from headroom.policies, decided together. */
    private List<String> policies = new ArrayList<>();

    /** The header dialects of this route; headroom.dialects when empty. */
    private List<String> dialects = new ArrayList<>();

    /** The endpoint key in the discovery document. */
    private String key;

    /** Additional context for the discovery document. */
    private String note;

    /** Whether the discovery document lists the route (leave internal routes out). */
    private boolean listed = true;

    /** Names of policies from headroom.policies decided in shadow: counted, metered, logged, never refusing. */
    private List<String> shadowPolicies = new ArrayList<>();

    /**
     * Whether the shadow policies' RateLimit fields are sent: as decided while one would allow,
     * r=0 with t until it would allow when it would refuse; the request is served either way.
     */
    private boolean shadowFields = false;

    public boolean isShadowFields() {
      return shadowFields;
    }

    public void setShadowFields(boolean shadowFields) {
      this.shadowFields = shadowFields;
    }

    /** What a request costs in units of the route's requests policies. */
    private long cost = 1;

    /** A request header stating the request's cost (0 to max-cost). */
    private String costHeader;

    /** The largest cost cost-header may state. */
    private long maxCost = 1;

    /** Which requests count: all, failures (responses 400 and up) or successes. */
    private String counting = "all";

    public String getCounting() {
      return counting;
    }

    public void setCounting(String counting) {
      this.counting = counting;
    }

    public List<String> getShadowPolicies() {
      return shadowPolicies;
    }

    public void setShadowPolicies(List<String> shadowPolicies) {
      this.shadowPolicies = shadowPolicies;
    }

    public long getCost() {
      return cost;
    }

    public void setCost(long cost) {
      this.cost = cost;
    }

    public String getCostHeader() {
      return costHeader;
    }

    public void setCostHeader(String costHeader) {
      this.costHeader = costHeader;
    }

    public long getMaxCost() {
      return maxCost;
    }

    public void setMaxCost(long maxCost) {
      this.maxCost = maxCost;
    }

    public String getPath() {
      return path;
    }

    public void setPath(String path) {
      this.path = path;
    }

    public List<String> getMethods() {
      return methods;
    }

    public void setMethods(List<String> methods) {
      this.methods = methods;
    }

    public List<String> getPolicies() {
      return policies;
    }

    public void setPolicies(List<String> policies) {
      this.policies = policies;
    }

    public List<String> getDialects() {
      return dialects;
    }

    public void setDialects(List<String> dialects) {
      this.dialects = dialects;
    }

    public String getKey() {
      return key;
    }

    public void setKey(String key) {
      this.key = key;
    }

    public String getNote() {
      return note;
    }

    public void setNote(String note) {
      this.note = note;
    }

    public boolean isListed() {
      return listed;
    }

    public void setListed(boolean listed) {
      this.listed = listed;
    }
  }
}
