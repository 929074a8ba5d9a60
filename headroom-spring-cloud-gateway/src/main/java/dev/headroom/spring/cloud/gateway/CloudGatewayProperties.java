package dev.headroom.spring.cloud.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code headroom.cloud-gateway.*}: what Headroom shares between the routes of a Spring Cloud
 * Gateway application: the service's name and reason for its limits, named policies that routes
 * refer to, the store, and the defaults of the field rules. What applies to one route is that
 * route's filter arguments ({@code RequestRateLimiter}'s {@code headroom-rate-limiter.*}, or the
 * {@code Headroom} filter's).
 */
@ConfigurationProperties("headroom.cloud-gateway")
public class CloudGatewayProperties {

  /** The service, as the discovery document names it. */
  private final Service service = new Service();

  /**
   * Why the limits exist, said in every refusal body (Graceful Boundaries {@code why}) unless a
   * policy says its own.
   */
  private String why = "Limits keep the service responsive for every caller.";

  /** Policies by name, for routes to refer to with {@code policy: NAME}. */
  private Map<String, Policy> policies = new LinkedHashMap<>();

  /** Where quota state lives. */
  private final Store store = new Store();

  /** Defaults of the RateLimit field rules; a route's arguments take precedence. */
  private final Headers headers = new Headers();

  /**
   * Whether the gateway's own errors (a path no route serves, a failure) are answered with
   * Graceful Boundaries bodies (error, detail, why) instead of Spring Boot's.
   */
  private boolean errorBodies = true;

  public boolean isErrorBodies() {
    return errorBodies;
  }

  public void setErrorBodies(boolean errorBodies) {
    this.errorBodies = errorBodies;
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

  public Map<String, Policy> getPolicies() {
    return policies;
  }

  public void setPolicies(Map<String, Policy> policies) {
    this.policies = policies;
  }

  public Store getStore() {
    return store;
  }

  public Headers getHeaders() {
    return headers;
  }

  /** {@code headroom.cloud-gateway.service.*}. */
  public static class Service {
    /** The service's name in the discovery document. */
    private String name = "Spring Cloud Gateway";
    /** The service's description in the discovery document. */
    private String description = "The limits of the routes of this gateway.";

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
  }

  /** {@code headroom.cloud-gateway.policies.NAME.*}: one quota policy. */
  public static class Policy {
    /** Units allowed per window (requests, content bytes, or concurrent requests). */
    private Long quota;
    /** The window, such as {@code 60s} or {@code 1m}. */
    private Duration window = Duration.ofSeconds(60);
    /** fixed-window, sliding-window, token-bucket or concurrency. */
    private String algorithm = "fixed-window";
    /** requests, content-bytes or concurrent-requests. */
    private String unit = "requests";
    /**
     * Who shares a quota: client-ip, api-key, header:Name, user, route, method or global, joined
     * with + and |. The Headroom filter reads it; RequestRateLimiter partitions by its KeyResolver.
     */
    private String partitioning = "client-ip";
    /** How long a concurrency lease is held at most when its response never completes. */
    private Duration leaseTimeout = Duration.ofMinutes(5);
    /** Why this policy exists (Graceful Boundaries {@code why}); the service's when empty. */
    private String why;
    /**
     * The Headroom filter: this many refusals of one partition while it is told to wait block it
     * for escalation-block, answered 429 abnormal-usage-detected (draft-09 section 5.3); off when unset.
     */
    private Integer escalationThreshold;
    /** How long an escalation blocks a partition. */
    private Duration escalationBlock = Duration.ofMinutes(15);

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

    public String getAlgorithm() {
      return algorithm;
    }

    public void setAlgorithm(String algorithm) {
      this.algorithm = algorithm;
    }

    public String getUnit() {
      return unit;
    }

    public void setUnit(String unit) {
      this.unit = unit;
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
  }

  /** {@code headroom.cloud-gateway.store.*}. */
  public static class Store {
    /** in-memory (one process) or redis (shared by every instance; needs headroom-redis). */
    private String type = "in-memory";
    /** Partitions the in-memory store tracks at most. */
    private long maxKeys = 1_000_000;
    /** The Redis to keep quota state in, when type is redis. */
    private String redisUri = "redis://127.0.0.1:6379";
    /** The prefix of every Redis key Headroom writes. */
    private String keyPrefix = "headroom:";
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
    /**
     * What a request meets when the store cannot decide: allow (the default: let it through
     * without fields) or refuse (503 temporary-reduced-capacity from the Headroom filter; the
     * RequestRateLimiter's own refusal status with Retry-After 2).
     */
    private String onFailure = "allow";

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

    public String getRedisUri() {
      return redisUri;
    }

    public void setRedisUri(String redisUri) {
      this.redisUri = redisUri;
    }

    public String getKeyPrefix() {
      return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
      this.keyPrefix = keyPrefix;
    }

    public String getOnFailure() {
      return onFailure;
    }

    public void setOnFailure(String onFailure) {
      this.onFailure = onFailure;
    }
  }

  /** {@code headroom.cloud-gateway.headers.*}. */
  public static class Headers {
    /** The dialects of a route that names none: ietf, ietf-next, draft-09, draft-07, draft-06, draft-03, x-ratelimit. */
    private List<String> dialects = new ArrayList<>(List.of("ietf"));
    /** Up to this much added to Retry-After and t, drawn once per response (draft-09 section 8.5). */
    private Duration jitter = Duration.ZERO;
    /**
     * The Headroom filter: no RateLimit fields on the upstream's 3xx responses (draft-09 section 6:
     * a low remaining quota on a redirect can stall a client that follows it).
     */
    private boolean omitOnRedirect;

    public boolean isOmitOnRedirect() {
      return omitOnRedirect;
    }

    public void setOmitOnRedirect(boolean omitOnRedirect) {
      this.omitOnRedirect = omitOnRedirect;
    }

    public List<String> getDialects() {
      return dialects;
    }

    public void setDialects(List<String> dialects) {
      this.dialects = dialects;
    }

    public Duration getJitter() {
      return jitter;
    }

    public void setJitter(Duration jitter) {
      this.jitter = jitter;
    }
  }
}
