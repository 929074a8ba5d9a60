package dev.headroom.spring.boot;

import dev.headroom.InMemoryStore;
import dev.headroom.Store;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.RedisStore;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.util.ClassUtils;

/**
 * The state of the application's {@link Store} as the {@code headroom} health contributor reports
 * it, in no Spring Boot line's types (each line's {@code HealthIndicator} in
 * {@link HeadroomHealthConfiguration} turns it into its own {@code Health}).
 *
 * <p>A Redis store is read as the Headroom gateway's {@code GET /ready} reads it: its
 * {@link RedisStore#connected()}, a cheap reading of the connection's state (no command is sent).
 * Connected: {@code UP}. Not connected: {@code DOWN} when requests the store cannot decide are
 * refused (the store fails closed and {@code headroom.store.on-failure} is {@code refuse}: every
 * limited request is refused until Redis is back), else {@link #DEGRADED} (the fallback store
 * decides, or requests are admitted unlimited): the application still answers. An in-memory store,
 * or one of the application's own, is {@code UP}.
 *
 * @param status {@code UP}, {@code DOWN} or {@code DEGRADED}
 * @param details what the contributor shows: the store's type and what it reads of it
 */
record HeadroomStoreHealth(String status, Map<String, Object> details) {

  /**
   * The status of a store that answers every request but not as configured: the fallback store
   * decides, or requests are admitted without a limit. Not in Spring Boot's default status order,
   * so it lowers no aggregate status and maps to HTTP 200.
   */
  static final String DEGRADED = "DEGRADED";

  /**
   * Reads the store now.
   *
   * @param store the application's store
   * @param refuses whether a request the store cannot decide is refused ({@code on-failure: refuse})
   * @param redisUri the configured Redis URI, shown without its credentials; {@code null} for none
   */
  static HeadroomStoreHealth of(Store store, boolean refuses, String redisUri) {
    Map<String, Object> details = new LinkedHashMap<>();
    if (store instanceof InMemoryStore memory) {
      details.put("type", "in-memory");
      details.put("keys", memory.trackedKeys());
      details.put("maxKeys", memory.maxKeys());
      return new HeadroomStoreHealth("UP", details);
    }
    if (!REDIS || !RedisRead.isRedis(store)) {
      details.put("type", store.getClass().getName());
      return new HeadroomStoreHealth("UP", details);
    }
    return RedisRead.of(store, refuses, redisUri, details);
  }

  /**
   * Whether requests {@code store} cannot decide are refused: a Redis store that fails closed, with
   * {@code refuses} ({@code on-failure: refuse}).
   */
  static boolean failsClosed(Store store, boolean refuses) {
    return refuses && REDIS && RedisRead.failsClosed(store);
  }

  /** Whether headroom-redis, which is optional, is on the class path: {@link RedisRead} names its classes. */
  private static final boolean REDIS =
      ClassUtils.isPresent("dev.headroom.redis.RedisStore", HeadroomStoreHealth.class.getClassLoader());

  /** Reads a {@link RedisStore}; loaded only when headroom-redis is on the class path. */
  private static final class RedisRead {
    static boolean isRedis(Store store) {
      return store instanceof RedisStore;
    }

    static boolean failsClosed(Store store) {
      return store instanceof RedisStore redis && redis.failurePolicy() == FailurePolicy.FAIL_CLOSED;
    }

    static HeadroomStoreHealth of(Store store, boolean refuses, String redisUri, Map<String, Object> details) {
      RedisStore redis = (RedisStore) store;
      details.put("type", "redis");
      String uri = withoutCredentials(redisUri);
      if (uri != null) {
        details.put("uri", uri);
      }
      boolean connected = redis.connected();
      boolean closed = redis.failurePolicy() == FailurePolicy.FAIL_CLOSED && refuses;
      details.put("connected", connected);
      details.put("whenRedisCannotDecide", closed ? "refuse"
          : redis.failurePolicy() == FailurePolicy.FALLBACK ? "fallback" : "admit");
      details.put("failures", redis.failures());
      if (connected) {
        return new HeadroomStoreHealth("UP", details);
      }
      return new HeadroomStoreHealth(closed ? "DOWN" : DEGRADED, details);
    }
  }

  /** {@code uri} without its user information (a password), or {@code null} when there is none. */
  static String withoutCredentials(String uri) {
    if (uri == null || uri.isBlank()) {
      return null;
    }
    try {
      URI u = new URI(uri);
      return new URI(u.getScheme(), null, u.getHost(), u.getPort(), u.getPath(), null, null).toString();
    } catch (URISyntaxException ex) {
      return null;
    }
  }
}
