package dev.headroom.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The shared Redis the tests run against: {@code HEADROOM_TEST_REDIS} or redis://127.0.0.1:6379.
 * When it cannot be reached the tests FAIL with a message saying so; they never skip.
 */
final class LocalRedis {

  static final String URI = System.getenv().getOrDefault("HEADROOM_TEST_REDIS", "redis://127.0.0.1:6379");

  private static RedisClient client;
  private static StatefulRedisConnection<String, String> connection;

  private LocalRedis() {}

  static synchronized RedisCommands<String, String> commands() {
    if (connection == null) {
      RedisURI uri = RedisURI.create(URI);
      uri.setTimeout(Duration.ofSeconds(10));
      client = RedisClient.create(uri);
      try {
        connection = client.connect();
      } catch (RuntimeException e) {
        throw new AssertionError("The Redis store tests need a Redis server at " + URI
            + " (set HEADROOM_TEST_REDIS to use another); none could be reached: " + e.getMessage(), e);
      }
    }
    return connection.sync();
  }

  /** A key prefix no other test uses. */
  static String uniquePrefix(String what) {
    commands().ping();
    return "hrtest:" + what + ":" + UUID.randomUUID().toString().substring(0, 8) + ":";
  }

  /** Deletes every key under a prefix. */
  static int deleteAll(String prefix) {
    RedisCommands<String, String> c = commands();
    List<String> keys = new ArrayList<>();
    ScanIterator.scan(c, ScanArgs.Builder.matches(prefix + "*").limit(1000)).forEachRemaining(keys::add);
    if (!keys.isEmpty()) {
      c.del(keys.toArray(new String[0]));
    }
    return keys.size();
  }

  static List<String> keys(String prefix) {
    List<String> keys = new ArrayList<>();
    ScanIterator.scan(commands(), ScanArgs.Builder.matches(prefix + "*").limit(1000)).forEachRemaining(keys::add);
    return keys;
  }
}
