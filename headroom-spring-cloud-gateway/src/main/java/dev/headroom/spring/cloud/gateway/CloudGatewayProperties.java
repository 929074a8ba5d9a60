package dev.headroom.spring.cloud.gateway;

import dev.headroom.enforcement.settings.HeaderSettings;
import dev.headroom.enforcement.settings.LimitSettings;
import dev.headroom.enforcement.settings.PolicySettings;
import dev.headroom.enforcement.settings.RouteSettings;
import dev.headroom.enforcement.settings.ServiceSettings;
import dev.headroom.enforcement.settings.StoreSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code headroom.cloud-gateway.*}: what Headroom shares between the routes of a Spring Cloud
 * Gateway application: the service's name and reason for its limits, named policies that routes
 * refer to, the store, and the defaults of the field rules. A binding of headroom-http's settings
 * model ({@link PolicySettings}, {@link StoreSettings}, {@link HeaderSettings}), read by its one
 * converter as Spring Boot's {@code headroom.*} is. What applies to one route is that route's filter
 * arguments ({@code RequestRateLimiter}'s {@code headroom-rate-limiter.*}, or the {@code Headroom}
 * filter's).
 */
@ConfigurationProperties("headroom.cloud-gateway")
public class CloudGatewayProperties extends LimitSettings<CloudGatewayProperties.Policy> {

  /** The service, as the discovery document names it. */
  private final Service service = new Service();

  /** Where quota state lives. */
  private final Store store = new Store();

  /** Defaults of the RateLimit field rules; a route's arguments take precedence. */
  private final Headers headers = new Headers();

  /**
   * The Headroom rules of Spring Cloud Gateway routes, by route id: what a route's {@code Headroom}
   * filter applies when its arguments name no policies (every rule of the settings model's route,
   * as the gateway's YAML states it).
   */
  private Map<String, Route> routes = new LinkedHashMap<>();

  public Map<String, Route> getRoutes() {
    return routes;
  }

  public void setRoutes(Map<String, Route> routes) {
    this.routes = routes;
  }

  public CloudGatewayProperties() {
    super("Limits keep the service responsive for every caller.");
  }

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

  public Store getStore() {
    return store;
  }

  public Headers getHeaders() {
    return headers;
  }

  /** {@code headroom.cloud-gateway.service.*}, named "Spring Cloud Gateway" unless set. */
  public static class Service extends ServiceSettings {
    public Service() {
      super("Spring Cloud Gateway", "The limits of the routes of this gateway.");
    }
  }

  /**
   * {@code headroom.cloud-gateway.policies.NAME.*}: one quota policy, with this binding's
   * defaults: a fixed window of 60s per client address, leases held at most 5 minutes. The
   * Headroom filter reads partitioning; RequestRateLimiter partitions by its KeyResolver.
   */
  public static class Policy extends PolicySettings {
    public Policy() {
      setWindow(Duration.ofSeconds(60));
      setAlgorithm("fixed-window");
      setPartitioning("client-ip");
      setLeaseTimeout(Duration.ofMinutes(5));
    }
  }

  /**
   * {@code headroom.cloud-gateway.routes.ID.*}: one route's rules (headroom-enforcement's
   * {@link RouteSettings}), on every path ({@code /**}) of the route unless path says otherwise;
   * its discovery key is the route id unless key says otherwise.
   */
  public static class Route extends RouteSettings {
    public Route() {
      setPath("/**");
    }
  }

  /** {@code headroom.cloud-gateway.store.*}. */
  public static class Store extends StoreSettings {
    /** The prefix of every Redis key Headroom writes. */
    private String keyPrefix = "headroom:";

    public String getKeyPrefix() {
      return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
      this.keyPrefix = keyPrefix;
    }

    /**
     * Where the Redis store's connection runs: {@code server}, the gateway's own Reactor Netty
     * server loops (the default), or {@code own}, an event loop of Lettuce's own.
     */
    private RedisEventLoops redisEventLoops = RedisEventLoops.SERVER;

    public RedisEventLoops getRedisEventLoops() {
      return redisEventLoops;
    }

    public void setRedisEventLoops(RedisEventLoops redisEventLoops) {
      this.redisEventLoops = redisEventLoops;
    }
  }

  /** {@code headroom.cloud-gateway.store.redis-event-loops}: where the Redis store's connection runs. */
  public enum RedisEventLoops {
    /**
     * The gateway's own Reactor Netty server loops, the default: no thread of its own to wake for
     * each reply (on a quiet machine, 1.25x and about 1.5x the throughput of
     * {@code RedisRateLimiter} at its best on Spring Cloud Gateway 4.3 and 5.0, where {@code own}
     * was level with it: BENCHMARKS.md).
     */
    SERVER,
    /** An event loop of Lettuce's own, as Lettuce makes one unless told otherwise. */
    OWN
  }

  /** {@code headroom.cloud-gateway.headers.*}. */
  public static class Headers extends HeaderSettings {
    /** The dialects of a route that names none: ietf, ietf-next, draft-09, draft-07, draft-06, draft-03, x-ratelimit. */
    private List<String> dialects = new ArrayList<>(List.of("ietf"));

    public List<String> getDialects() {
      return dialects;
    }

    public void setDialects(List<String> dialects) {
      this.dialects = dialects;
    }
  }
}
