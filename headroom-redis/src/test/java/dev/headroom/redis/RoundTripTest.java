package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.RateLimiter;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * One command per decision (issue "Distributed store on Redis"): on a Redis of the test's own,
 * MONITOR records every command clients send; a decision of four policies, one of each algorithm,
 * is one EVALSHA, and the first decision after SCRIPT FLUSH is EVALSHA then EVAL (NOSCRIPT).
 */
class RoundTripTest {

  @Test
  void everyDecisionIsOneEvalsha() throws Exception {
    try (RedisServer server = RedisServer.launch();
        RedisStore store = RedisStore.builder().uri(server.uri()).build()) {
      RateLimiter limiter = RateLimiter.of(store);
      List<Acquisition> request = List.of(
          Acquisition.of(QuotaPolicy.builder("burst").quota(1000).window(Duration.ofSeconds(1)).build(), PartitionKey.of("c1")),
          Acquisition.of(QuotaPolicy.builder("minute").quota(1000).window(Duration.ofMinutes(1)).algorithm(Algorithm.FIXED_WINDOW).build(), PartitionKey.of("c1")),
          Acquisition.of(QuotaPolicy.builder("hour").quota(1000).window(Duration.ofHours(1)).algorithm(Algorithm.SLIDING_WINDOW).build(), PartitionKey.GLOBAL),
          Acquisition.of(QuotaPolicy.builder("inflight").quota(1000).window(Duration.ofSeconds(10)).unit(QuotaUnit.CONCURRENT_REQUESTS).build(), PartitionKey.of("c1")));
      limiter.acquire(request); // connection set up, script loaded
      server.command("SCRIPT FLUSH");
      Path log = Files.createTempFile(server.dir, "monitor", ".log");
      Process monitor = new ProcessBuilder("redis-cli", "-p", Integer.toString(server.port), "monitor")
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      try {
        awaitLine(log.toFile(), "OK");
        int decisions = 200;
        for (int i = 0; i < decisions; i++) {
          assertThat(limiter.acquire(request).allowed()).isTrue();
        }
        server.command("ECHO monitor-end");
        awaitLine(log.toFile(), "monitor-end");
        List<String> lines = Files.readAllLines(log);
        List<String> fromClients = lines.stream().filter(l -> l.contains("[0 127.0.0.1:")).toList();
        List<String> fromStore = fromClients.stream().filter(l -> !l.contains("\"ECHO\"")).toList();
        assertThat(fromStore).hasSize(decisions + 1);
        assertThat(fromStore.get(0)).contains("\"EVALSHA\"");
        assertThat(fromStore.get(1)).contains("\"EVAL\"");
        assertThat(fromStore.subList(2, fromStore.size())).allMatch(l -> l.contains("\"EVALSHA\""));
        // Inside the script: TIME, then the keys' reads and writes ([0 lua]), never from the client.
        assertThat(lines.stream().filter(l -> l.contains("[0 lua]") && l.contains("\"TIME\"")).count())
            .isEqualTo(decisions);
      } finally {
        monitor.destroyForcibly();
        monitor.waitFor(5, TimeUnit.SECONDS);
      }
      // The same from Redis's own counters, for the server's whole life: 201 decisions were 201
      // EVALSHA, two of which (the first on a new server, the first after the flush) answered
      // NOSCRIPT and were followed by an EVAL.
      String stats = commandStats(server);
      assertThat(stats).containsPattern("cmdstat_evalsha:calls=201,.*failed_calls=2");
      assertThat(stats).contains("cmdstat_eval:calls=2,");
    }
  }

  private static String commandStats(RedisServer server) throws Exception {
    Process p = new ProcessBuilder("redis-cli", "-p", Integer.toString(server.port), "info", "commandstats")
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor(5, TimeUnit.SECONDS);
    return out;
  }

  private static void awaitLine(File f, String text) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < until) {
      if (Files.readString(f.toPath()).contains(text)) {
        return;
      }
      Thread.sleep(10);
    }
    throw new AssertionError("MONITOR never showed '" + text + "'");
  }
}
