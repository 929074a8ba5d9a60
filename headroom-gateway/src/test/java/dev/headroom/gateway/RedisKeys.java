package dev.headroom.gateway;

import io.lettuce.core.RedisClient;

/**
 * Cleans up after tests on the shared Redis at 127.0.0.1:6379: every key under a prefix of the
 * test's own. Public for headroom-cli's tests (through this module's test jar).
 */
public final class RedisKeys {

  private RedisKeys() {}

  /** Deletes every key that starts with {@code prefix}. */
  public static void deleteKeys(String prefix) {
    RedisClient c = RedisClient.create("redis://127.0.0.1:6379");
    try (var conn = c.connect()) {
      var sync = conn.sync();
      for (String key : sync.keys(prefix + "*")) {
        sync.del(key);
      }
    } finally {
      c.shutdown();
    }
  }
}
