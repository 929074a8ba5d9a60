package dev.headroom.redis;

import dev.headroom.StoreHealth;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@link RedisStore#health(boolean)}: reads {@link RedisStore#connected()}, the connection's state
 * (no command is sent, as the Headroom gateway's {@code GET /ready} reads it). Connected:
 * {@code UP}. Not connected: {@code DOWN} when the store fails closed and the front end refuses
 * what it cannot decide (every limited request is refused until Redis is back), else
 * {@code DEGRADED} (the fallback store decides, or requests are admitted unlimited). Keeps no state.
 */
final class StoreHealthReading {

  private StoreHealthReading() {}

  static StoreHealth of(RedisStore redis, boolean refuses) {
    boolean connected = redis.connected();
    boolean closed = redis.failurePolicy() == FailurePolicy.FAIL_CLOSED && refuses;
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("type", "redis");
    details.put("connected", connected);
    details.put("whenRedisCannotDecide", closed ? "refuse"
        : redis.failurePolicy() == FailurePolicy.FALLBACK ? "fallback" : "admit");
    details.put("failures", redis.failures());
    StoreHealth.Status status = connected ? StoreHealth.Status.UP
        : closed ? StoreHealth.Status.DOWN : StoreHealth.Status.DEGRADED;
    return new StoreHealth(status, closed, details);
  }
}
