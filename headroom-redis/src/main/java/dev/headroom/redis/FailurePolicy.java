package dev.headroom.redis;

/**
 * What a {@link RedisStore} does when Redis cannot decide in time: it is unreachable, the
 * connection dropped, or it did not answer within the decision deadline.
 *
 * <p>Whatever the policy, the store never lets a Lettuce exception escape, and it goes back to
 * Redis by itself as soon as Redis answers again (Lettuce reconnects; a store that never reached
 * Redis keeps trying to connect in the background).
 */
public enum FailurePolicy {

  /**
   * Admit the request. Every policy reports itself allowed with its whole quota remaining and no
   * reset ({@code r = q}, {@code t = 0}) and no lease: the store knows nothing better. Use when an
   * outage of the limiter must never become an outage of the service.
   */
  FAIL_OPEN,

  /**
   * Refuse to decide: {@link RedisStore#acquire} throws {@link RedisUnavailableException} (a
   * {@link dev.headroom.StoreException}), which the HTTP layer answers with 503 and the problem
   * type {@code temporary-reduced-capacity} (draft-ietf-httpapi-ratelimit-headers-09 section 6).
   * {@code acquireAsync} completes exceptionally with the same exception.
   */
  FAIL_CLOSED,

  /**
   * Decide with a local in-memory limiter ({@link dev.headroom.InMemoryStore}, or the store given
   * to {@link RedisStore.Builder#fallback}) while Redis is away. Each process then enforces the
   * policies on its own, so a fleet of {@code N} processes may admit up to {@code N} times a quota
   * during the outage; counts in the local store are not copied to Redis when it returns.
   */
  FALLBACK
}
