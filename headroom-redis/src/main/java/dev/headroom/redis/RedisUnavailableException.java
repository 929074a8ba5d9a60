package dev.headroom.redis;

import dev.headroom.StoreException;

/**
 * A {@link RedisStore} with {@link FailurePolicy#FAIL_CLOSED} could not decide: Redis was
 * unreachable or did not answer within the decision deadline. The HTTP layer answers 503 with the
 * problem type {@code temporary-reduced-capacity}; nothing was consumed that the store knows of
 * (see {@link RedisStore} on decisions that time out).
 */
public final class RedisUnavailableException extends StoreException {
  private static final long serialVersionUID = 1L;

  public RedisUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
