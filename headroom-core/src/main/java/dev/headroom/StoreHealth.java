package dev.headroom;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The state of a {@link Store} as a health check reports it, in no framework's types: the Spring
 * Boot starter's and the Spring Cloud Gateway integration's {@code headroom} health contributors
 * turn it into their Boot line's {@code Health}.
 *
 * <p>{@link #of(Store, boolean)} reads a store now. A store that can tell its own state implements
 * {@link Source} ({@link InMemoryStore}: its keys; the Redis store: whether it is connected, as the
 * Headroom gateway's {@code GET /ready} reads it, with no command sent); any other store is
 * {@link Status#UP}. Immutable; keeps nothing but what it reports.
 *
 * @param status what the store answers now
 * @param failsClosed whether requests the store cannot decide are refused: the store is then
 *     {@link Status#DOWN} while it cannot decide, and belongs in a readiness check
 * @param details what the check shows of the store (its type and what it reads of it), in order
 */
public record StoreHealth(Status status, boolean failsClosed, Map<String, Object> details) {

  /** What a store answers now. */
  public enum Status {
    /** The store decides as configured. */
    UP,
    /**
     * The store answers every request but not as configured: a fallback store decides, or requests
     * are admitted without a limit. The application still answers; not a reason to take it out of
     * a load balancer.
     */
    DEGRADED,
    /** The store cannot decide and requests it cannot decide are refused. */
    DOWN
  }

  /** A store that tells its own state. */
  public interface Source {
    /**
     * Reads the store now; cheap (a health check may call it on every probe).
     *
     * @param refuses whether the front end refuses a request the store cannot decide (its
     *     {@code on-failure: refuse}); a store that cannot decide is {@link Status#DOWN} only then
     */
    StoreHealth health(boolean refuses);
  }

  /**
   * @throws NullPointerException if {@code status} or {@code details} is null
   */
  public StoreHealth {
    Objects.requireNonNull(status, "status");
    details = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(details, "details")));
  }

  /**
   * Reads {@code store} now.
   *
   * @param refuses whether the front end refuses a request the store cannot decide
   */
  public static StoreHealth of(Store store, boolean refuses) {
    Objects.requireNonNull(store, "store");
    if (store instanceof Source source) {
      return source.health(refuses);
    }
    return new StoreHealth(Status.UP, false, Map.of("type", store.getClass().getName()));
  }

  /**
   * This health with the store's configured address among its details (after its type), without
   * the address's user information (a password); unchanged when {@code uri} is null, blank or not a
   * URI.
   */
  public StoreHealth withUri(String uri) {
    String shown = withoutCredentials(uri);
    if (shown == null) {
      return this;
    }
    Map<String, Object> d = new LinkedHashMap<>();
    details.forEach((k, v) -> {
      d.put(k, v);
      if (k.equals("type")) {
        d.put("uri", shown);
      }
    });
    d.putIfAbsent("uri", shown);
    return new StoreHealth(status, failsClosed, d);
  }

  private static String withoutCredentials(String uri) {
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
