package dev.headroom.benchmarks.redis;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.benchmarks.redis.RedisStoreBenchmark.AsyncLimiter;
import dev.headroom.benchmarks.redis.RedisStoreBenchmark.Limiter;
import dev.headroom.benchmarks.redis.RedisStoreBenchmark.Result;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.RedisStore;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code RedisStore.Builder.replicaAcknowledgements(1, 50 ms)} costs: decisions per second of
 * the store without it and with it, against a master and one replica ({@code --replicaof}) this
 * program starts on free loopback ports (so the shared machine's Redis is never touched), every
 * decision an admission on one of 100,000 keys (a fixed window of a billion per hour: nothing is
 * refused, so every call is followed by {@code WAIT}). Blocking callers (a thread each) and the
 * asynchronous API (decisions kept in flight), as {@link RedisStoreBenchmark} measures them.
 *
 * <p>Each cell warms both stores up, then alternates them, one {@code seconds}-long round each,
 * {@code rounds} times, and reports the median rate of each and their ratio (on / off), with the
 * {@code WAIT}s Redis ran per decision (coalescing puts many decisions in one call, hence one
 * {@code WAIT}) and the admissions not acknowledged (0 when the replica keeps up).
 *
 * <pre>
 * java -cp headroom-benchmarks/target/benchmarks.jar dev.headroom.benchmarks.redis.ReplicaAcknowledgementCost \
 *     [seconds per round, default 2] [rounds, default 3]
 * </pre>
 */
public final class ReplicaAcknowledgementCost {

  static final int KEYS = RedisStoreBenchmark.KEYS;
  static final int[] BLOCKING_CALLERS = {1, 16, 64};
  static final int[] IN_FLIGHT = {64};

  private ReplicaAcknowledgementCost() {}

  public static void main(String[] args) throws Exception {
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 2;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    List<Process> servers = new ArrayList<>();
    try {
      int masterPort = freePort();
      servers.add(redisServer(masterPort));
      int replicaPort = freePort();
      servers.add(redisServer(replicaPort, "--replicaof", "127.0.0.1", Integer.toString(masterPort)));
      awaitInSync(replicaPort);
      String uri = "redis://127.0.0.1:" + masterPort;
      QuotaPolicy policy = QuotaPolicy.builder("bench").quota(1_000_000_000L).window(Duration.ofHours(1))
          .algorithm(Algorithm.FIXED_WINDOW).build();
      PartitionKey[] keys = new PartitionKey[KEYS];
      for (int i = 0; i < KEYS; i++) {
        keys[i] = PartitionKey.of("k" + i);
      }
      try (RedisStore off = RedisStore.builder().uri(uri).keyPrefix("bench:off:").failurePolicy(FailurePolicy.FAIL_CLOSED)
              .decisionDeadline(Duration.ofSeconds(5)).build();
          RedisStore on = RedisStore.builder().uri(uri).keyPrefix("bench:on:").failurePolicy(FailurePolicy.FAIL_CLOSED)
              .decisionDeadline(Duration.ofSeconds(5)).replicaAcknowledgements(1, Duration.ofMillis(50)).build()) {
        System.out.println("# replicaAcknowledgements(1, 50ms) against off: master :" + masterPort + ", replica :"
            + replicaPort + " on loopback, 100,000 keys, every decision an admission; " + seconds + " s rounds, "
            + rounds + " of each per cell, alternated; JVM " + System.getProperty("java.version") + ", "
            + Runtime.getRuntime().availableProcessors() + " cores");
        System.out.println();
        System.out.println("| API | callers | off: decisions/s | on: decisions/s | on / off | on: p50 / p99 µs | "
            + "off: p50 / p99 µs | WAITs per decision (on) | unacknowledged |");
        System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (boolean async : new boolean[] {false, true}) {
          for (int callers : async ? IN_FLIGHT : BLOCKING_CALLERS) {
            Limiter offBlocking = k -> off.acquire(List.of(Acquisition.of(policy, keys[k]))).allowed();
            Limiter onBlocking = k -> on.acquire(List.of(Acquisition.of(policy, keys[k]))).allowed();
            AsyncLimiter offAsync = k -> off.acquireAsync(List.of(Acquisition.of(policy, keys[k])))
                .toCompletableFuture().thenApply(d -> d.allowed());
            AsyncLimiter onAsync = k -> on.acquireAsync(List.of(Acquisition.of(policy, keys[k])))
                .toCompletableFuture().thenApply(d -> d.allowed());
            Cell cell = new Cell(async, callers, seconds);
            RedisStoreBenchmark.warmUp(() -> cell.round(offBlocking, offAsync, 1));
            RedisStoreBenchmark.warmUp(() -> cell.round(onBlocking, onAsync, 1));
            List<Result> offResults = new ArrayList<>();
            List<Result> onResults = new ArrayList<>();
            long waitsBefore = commandCalls(masterPort, "wait");
            long onDecisions = 0;
            for (int r = 0; r < rounds; r++) {
              offResults.add(cell.round(offBlocking, offAsync, seconds));
              Result o = cell.round(onBlocking, onAsync, seconds);
              onResults.add(o);
              onDecisions += Arrays.stream(o.attempts).sum();
            }
            long waits = commandCalls(masterPort, "wait") - waitsBefore;
            Result offMedian = median(offResults);
            Result onMedian = median(onResults);
            System.out.printf(Locale.ROOT, "| %s | %d | %,.0f | %,.0f | %.2f | %d / %d | %d / %d | %.3f | %d |%n",
                async ? "acquireAsync" : "acquire", callers, offMedian.throughput, onMedian.throughput,
                onMedian.throughput / offMedian.throughput, onMedian.p50Micros, onMedian.p99Micros,
                offMedian.p50Micros, offMedian.p99Micros, (double) waits / onDecisions, on.replicaUnacknowledged());
          }
        }
      }
    } finally {
      for (Process p : servers) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /** One cell: blocking callers or decisions in flight. */
  record Cell(boolean async, int callers, int seconds) {
    Result round(Limiter blocking, AsyncLimiter asynchronous, int secs) throws InterruptedException {
      return async ? RedisStoreBenchmark.measureAsync(asynchronous, false, callers, secs)
          : RedisStoreBenchmark.measure(blocking, false, callers, secs);
    }
  }

  /** The round of median throughput. */
  static Result median(List<Result> results) {
    List<Result> sorted = new ArrayList<>(results);
    sorted.sort((a, b) -> Double.compare(a.throughput, b.throughput));
    return sorted.get(sorted.size() / 2);
  }

  static Process redisServer(int port, String... extra) throws Exception {
    Path dir = Files.createTempDirectory("headroom-bench-redis-" + port);
    List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
        "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--logfile", dir.resolve("redis.log").toString()));
    cmd.addAll(List.of(extra));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("stdout.log").toFile())
        .start();
    Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!cli(port, "ping").equals("PONG")) {
      if (System.nanoTime() > until || !p.isAlive()) {
        throw new IOException("redis-server on port " + port + " did not start; see " + dir);
      }
      Thread.sleep(20);
    }
    return p;
  }

  static void awaitInSync(int replicaPort) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!cli(replicaPort, "info", "replication").contains("master_link_status:up")) {
      if (System.nanoTime() > until) {
        throw new IOException("the replica on port " + replicaPort + " never came in sync");
      }
      Thread.sleep(50);
    }
  }

  /** How many times the server has run a command ({@code INFO commandstats}). */
  static long commandCalls(int port, String command) throws Exception {
    Matcher m = Pattern.compile("cmdstat_" + command + ":calls=(\\d+)").matcher(cli(port, "info", "commandstats"));
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  static String cli(int port, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("redis-cli", "-h", "127.0.0.1", "-p", Integer.toString(port)));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    p.waitFor(10, TimeUnit.SECONDS);
    return out;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
