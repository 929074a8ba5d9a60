package dev.headroom.redis;

import dev.headroom.StoreException;

/**
 * A {@link RedisStore} did not ask Redis, or could not get its command written in time, because
 * this process is overloaded: more decisions await Redis than {@link RedisStore.Builder#maxOutstanding}
 * allows, or a command waited in the store's own queue longer than
 * {@link RedisStore.Builder#writeTimeout}. Redis itself may be healthy, so the failure policy does
 * not apply: failing open would admit uncounted requests exactly when the process can least
 * afford them, and a fallback store would count them where no other process sees them. The
 * request is refused; the HTTP layer answers 503 with a short Retry-After (the server is
 * "temporarily overloaded", RFC 9110 section 15.6.4).
 */
public final class StoreOverloadedException extends StoreException {
  private static final long serialVersionUID = 1L;

  public StoreOverloadedException(String message) {
    super(message);
  }

  @Override
  public boolean overloaded() {
    return true;
  }
}
