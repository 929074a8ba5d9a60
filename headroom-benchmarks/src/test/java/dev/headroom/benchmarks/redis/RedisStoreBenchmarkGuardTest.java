package dev.headroom.benchmarks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link RedisStoreBenchmark} empties its Redis before every cell, so it first looks for a key
 * that is not its own ({@link RedisStoreBenchmark#foreignKey}) and refuses to start when it finds
 * one. Against a redis-server of the test's own: empty, with only the benchmark's keys, and with
 * one foreign key among 2,500 of the benchmark's (more than one {@code SCAN} page).
 */
class RedisStoreBenchmarkGuardTest {

  private static Process server;
  private static RedisURI uri;
  private static RedisClient client;
  private static StatefulRedisConnection<String, String> admin;

  @BeforeAll
  static void start() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path dir = Files.createTempDirectory("headroom-bench-guard");
    server = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
        "--save", "", "--appendonly", "no", "--dir", dir.toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
    uri = RedisURI.builder().withHost("127.0.0.1").withPort(port).withTimeout(Duration.ofSeconds(10)).build();
    client = RedisClient.create(uri);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (admin == null) {
      try {
        admin = client.connect();
      } catch (RuntimeException notYet) {
        if (System.nanoTime() > until || !server.isAlive()) {
          throw new IOException("redis-server on port " + port + " did not start; see " + dir, notYet);
        }
        Thread.sleep(20);
      }
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (admin != null) {
      admin.close();
    }
    if (client != null) {
      client.shutdown();
    }
    if (server != null) {
      server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void anEmptyRedisOrOneHoldingOnlyTheBenchmarksKeysIsItsOwn() {
    admin.sync().flushall();
    assertThat(RedisStoreBenchmark.foreignKey(uri)).isNull();
    for (int i = 0; i < 2_500; i++) {
      admin.sync().set("bench:hr:k" + i, "1");
    }
    assertThat(RedisStoreBenchmark.foreignKey(uri)).isNull();
  }

  @Test
  void aKeyOfAnyoneElsesIsNamedAmongThousandsOfTheBenchmarks() {
    admin.sync().flushall();
    for (int i = 0; i < 2_500; i++) {
      admin.sync().set("bench:b4j:k" + i, "1");
    }
    admin.sync().set("app:session:42", "someone's data");
    assertThat(RedisStoreBenchmark.foreignKey(uri)).isEqualTo("app:session:42");
  }
}
