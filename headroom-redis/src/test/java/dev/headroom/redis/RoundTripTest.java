package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
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
 * is one FCALL, and the first decision after FUNCTION FLUSH is FCALL (function not found),
 * FUNCTION LOAD, FCALL. In the script form (Redis before 7) it is one EVALSHA, and the first
 * decision after SCRIPT FLUSH is EVALSHA then EVAL (NOSCRIPT).
 */
class RoundTripTest {

  static final List<Acquisition> REQUEST = List.of(
      Acquisition.of(QuotaPolicy.builder("burst").quota(1000).window(Duration.ofSeconds(1)).build(), PartitionKey.of("c1")),
      Acquisition.of(QuotaPolicy.builder("minute").quota(1000).window(Duration.ofMinutes(1)).algorithm(Algorithm.FIXED_WINDOW).build(), PartitionKey.of("c1")),
      Acquisition.of(QuotaPolicy.builder("hour").quota(1000).window(Duration.ofHours(1)).algorithm(Algorithm.SLIDING_WINDOW).build(), PartitionKey.GLOBAL),
      Acquisition.of(QuotaPolicy.builder("inflight").quota(1000).window(Duration.ofSeconds(10)).unit(QuotaUnit.CONCURRENT_REQUESTS).build(), PartitionKey.of("c1")));

  @Test
  void everyDecisionIsOneFcall() throws Exception {
    try (RedisServer server = RedisServer.launch();
        RedisStore store = RedisStore.builder().uri(server.uri()).decisionDeadline(Duration.ofSeconds(5)).build()) {
      QuotaLimiter limiter = QuotaLimiter.of(store);
      limiter.acquire(REQUEST); // connection set up, library loaded
      server.command("FUNCTION FLUSH");
      int decisions = 200;
      List<String> lines = monitored(server, () -> {
        for (int i = 0; i < decisions; i++) {
          assertThat(limiter.acquire(REQUEST).allowed()).isTrue();
        }
      });
      List<String> fromStore = fromStore(lines);
      assertThat(fromStore).hasSize(decisions + 2);
      assertThat(fromStore.get(0)).contains("\"FCALL\"");
      assertThat(fromStore.get(1)).contains("\"FUNCTION\"").contains("\"LOAD\"");
      assertThat(fromStore.subList(2, fromStore.size())).allMatch(l -> l.contains("\"FCALL\""));
      assertThat(lines.stream().filter(l -> l.contains("[0 lua]") && l.contains("\"TIME\"")).count())
          .isEqualTo(decisions);
      // The same from Redis's own counters, for the server's whole life: 201 decisions, two of
      // which (the first on a new server, the first after the flush) found no function, loaded
      // the library and called again.
      String stats = commandStats(server);
      assertThat(stats).containsPattern("cmdstat_fcall:calls=203,.*failed_calls=2");
      assertThat(stats).contains("cmdstat_function|load:calls=2,");
      assertThat(stats).doesNotContain("cmdstat_evalsha").doesNotContain("cmdstat_eval:");
    }
  }

  @Test
  void beforeRedis7EveryDecisionIsOneEvalsha() throws Exception {
    try (RedisServer server = RedisServer.launch();
        RedisStore store = RedisStore.builder().uri(server.uri()).scriptsOnly()
            .decisionDeadline(Duration.ofSeconds(5)).build()) {
      QuotaLimiter limiter = QuotaLimiter.of(store);
      limiter.acquire(REQUEST); // connection set up, script loaded
      server.command("SCRIPT FLUSH");
      int decisions = 200;
      List<String> lines = monitored(server, () -> {
        for (int i = 0; i < decisions; i++) {
          assertThat(limiter.acquire(REQUEST).allowed()).isTrue();
        }
      });
      List<String> fromStore = fromStore(lines);
      assertThat(fromStore).hasSize(decisions + 1);
      assertThat(fromStore.get(0)).contains("\"EVALSHA\"");
      assertThat(fromStore.get(1)).contains("\"EVAL\"");
      assertThat(fromStore.subList(2, fromStore.size())).allMatch(l -> l.contains("\"EVALSHA\""));
      // Inside the script: TIME, then the keys' reads and writes ([0 lua]), never from the client.
      assertThat(lines.stream().filter(l -> l.contains("[0 lua]") && l.contains("\"TIME\"")).count())
          .isEqualTo(decisions);
      // The same from Redis's own counters, for the server's whole life: 201 decisions were 201
      // EVALSHA, two of which (the first on a new server, the first after the flush) answered
      // NOSCRIPT and were followed by an EVAL.
      String stats = commandStats(server);
      assertThat(stats).containsPattern("cmdstat_evalsha:calls=201,.*failed_calls=2");
      assertThat(stats).contains("cmdstat_eval:calls=2,");
    }
  }

  /** Every line MONITOR shows while {@code work} runs. */
  private static List<String> monitored(RedisServer server, Runnable work) throws Exception {
    Path log = Files.createTempFile(server.dir, "monitor", ".log");
    Process monitor = new ProcessBuilder("redis-cli", "-p", Integer.toString(server.port), "monitor")
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      awaitLine(log.toFile(), "OK");
      work.run();
      server.command("ECHO monitor-end");
      awaitLine(log.toFile(), "monitor-end");
      return Files.readAllLines(log);
    } finally {
      monitor.destroyForcibly();
      monitor.waitFor(5, TimeUnit.SECONDS);
    }
  }

  /** The commands clients sent, but the test's own ECHO. */
  private static List<String> fromStore(List<String> lines) {
    return lines.stream().filter(l -> l.contains("[0 127.0.0.1:")).filter(l -> !l.contains("\"ECHO\"")).toList();
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
