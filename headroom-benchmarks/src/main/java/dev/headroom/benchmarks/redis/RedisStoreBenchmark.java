package dev.headroom.benchmarks.redis;

import dev.headroom.Acquisition;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.RedisStore;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Headroom's Redis store against Bucket4j's documented Lettuce setup
 * ({@code Bucket4jLettuce.casBasedBuilder(connection)}: a {@code LettuceBasedProxyManager} doing
 * compare-and-swap), in one run against the same Redis: one hot key and 100,000 keys (uniform),
 * with 1, 16 and 64 concurrent callers, each deciding one request at a time (blocking calls).
 * Both limit a token bucket of 1,000 per second per key.
 *
 * <p>Reports throughput (decisions per second), p50 and p99 latency, the admitted count per caller
 * on the hot key (fairness: min, median, max), and Redis commands per decision, counted by
 * {@code redis-cli monitor} over 1,000 sequential decisions (commands sent by clients only; the
 * commands a script runs inside Redis are not round trips).
 *
 * <pre>
 * java -cp headroom-benchmarks/target/benchmarks.jar dev.headroom.benchmarks.redis.RedisStoreBenchmark \
 *     [redis://127.0.0.1:6379] [seconds per cell, default 5]
 * </pre>
 */
public final class RedisStoreBenchmark {

  static final long QUOTA_PER_SECOND = 1_000;
  static final int KEYS = 100_000;
  static final int[] CALLERS = {1, 16, 64};

  private RedisStoreBenchmark() {}

  interface Limiter {
    boolean tryAcquire(int key);
  }

  public static void main(String[] args) throws Exception {
    String uri = args.length > 0 ? args[0] : "redis://127.0.0.1:6379";
    int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    RedisURI redisUri = RedisURI.create(uri);

    QuotaPolicy policy = QuotaPolicy.builder("bench").quota(QUOTA_PER_SECOND).window(Duration.ofSeconds(1)).build();
    PartitionKey[] keys = new PartitionKey[KEYS];
    byte[][] b4jKeys = new byte[KEYS][];
    for (int i = 0; i < KEYS; i++) {
      keys[i] = PartitionKey.of("k" + i);
      b4jKeys[i] = ("bench:b4j:k" + i).getBytes(StandardCharsets.UTF_8);
    }

    RedisStore store = RedisStore.builder().uri(redisUri).keyPrefix("bench:hr:")
        .failurePolicy(FailurePolicy.FAIL_CLOSED).decisionDeadline(Duration.ofSeconds(5)).build();
    Limiter headroom = k -> store.acquire(List.of(Acquisition.of(policy, keys[k]))).allowed();

    RedisClient client = RedisClient.create(redisUri);
    StatefulRedisConnection<byte[], byte[]> connection = client.connect(RedisCodec.of(ByteArrayCodec.INSTANCE, ByteArrayCodec.INSTANCE));
    LettuceBasedProxyManager<byte[]> proxyManager = Bucket4jLettuce.casBasedBuilder(connection)
        .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
        .build();
    BucketConfiguration config = BucketConfiguration.builder()
        .addLimit(limit -> limit.capacity(QUOTA_PER_SECOND).refillGreedy(QUOTA_PER_SECOND, Duration.ofSeconds(1)))
        .build();
    Limiter bucket4j = k -> proxyManager.builder().build(b4jKeys[k], () -> config).tryConsume(1);

    System.out.println("# Redis store benchmark: " + uri + ", " + seconds + " s per cell, JVM "
        + System.getProperty("java.version") + ", " + Runtime.getRuntime().availableProcessors() + " cores");
    System.out.println();
    System.out.println("Commands per decision (MONITOR, 1,000 sequential decisions):");
    System.out.printf(Locale.ROOT, "  headroom hot %.2f, 100k keys %.2f%n",
        commandsPerDecision(redisUri, headroom, true), commandsPerDecision(redisUri, headroom, false));
    System.out.printf(Locale.ROOT, "  bucket4j hot %.2f, 100k keys %.2f%n",
        commandsPerDecision(redisUri, bucket4j, true), commandsPerDecision(redisUri, bucket4j, false));
    System.out.println();
    System.out.println("| keys | callers | library | decisions/s | p50 µs | p99 µs | admitted per caller min/median/max | ratio |");
    System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (boolean hot : new boolean[] {true, false}) {
      for (int callers : CALLERS) {
        Result h = run(headroom, hot, callers, seconds);
        Result b = run(bucket4j, hot, callers, seconds);
        String keysLabel = hot ? "1 (hot)" : "100,000";
        System.out.println(h.row(keysLabel, callers, "Headroom", h.throughput / b.throughput));
        System.out.println(b.row(keysLabel, callers, "Bucket4j", 1.0));
      }
    }
    store.close();
    connection.close();
    client.shutdown();
  }

  static final class Result {
    double throughput;
    long p50Micros;
    long p99Micros;
    long[] admitted;

    String row(String keys, int callers, String library, double ratio) {
      long[] a = admitted.clone();
      Arrays.sort(a);
      String fairness = keys.startsWith("1 ") ? a[0] + " / " + a[a.length / 2] + " / " + a[a.length - 1] : "-";
      return String.format(Locale.ROOT, "| %s | %d | %s | %,.0f | %d | %d | %s | %s |", keys, callers, library,
          throughput, p50Micros, p99Micros, fairness, library.equals("Headroom") ? String.format(Locale.ROOT, "%.2fx", ratio) : "1.00x");
    }
  }

  static Result run(Limiter limiter, boolean hot, int callers, int seconds) throws InterruptedException {
    measure(limiter, hot, callers, 1); // warm up
    return measure(limiter, hot, callers, seconds);
  }

  static Result measure(Limiter limiter, boolean hot, int callers, int seconds) throws InterruptedException {
    long[][] latencies = new long[callers][];
    int[] counts = new int[callers];
    long[] admitted = new long[callers];
    CountDownLatch start = new CountDownLatch(1);
    Thread[] threads = new Thread[callers];
    long[] endAt = new long[1];
    for (int t = 0; t < callers; t++) {
      int me = t;
      threads[t] = new Thread(() -> {
        long[] lat = new long[1 << 16];
        int n = 0;
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        long end = endAt[0];
        ThreadLocalRandom r = ThreadLocalRandom.current();
        while (true) {
          long t0 = System.nanoTime();
          if (t0 >= end) {
            break;
          }
          if (limiter.tryAcquire(hot ? 0 : r.nextInt(KEYS))) {
            admitted[me]++;
          }
          if (n == lat.length) {
            lat = Arrays.copyOf(lat, n * 2);
          }
          lat[n++] = System.nanoTime() - t0;
        }
        latencies[me] = lat;
        counts[me] = n;
      });
      threads[t].start();
    }
    long t0 = System.nanoTime();
    endAt[0] = t0 + TimeUnit.SECONDS.toNanos(seconds);
    start.countDown();
    for (Thread t : threads) {
      t.join();
    }
    long elapsed = System.nanoTime() - t0;
    int total = 0;
    for (int c : counts) {
      total += c;
    }
    long[] all = new long[total];
    int i = 0;
    for (int t = 0; t < callers; t++) {
      System.arraycopy(latencies[t], 0, all, i, counts[t]);
      i += counts[t];
    }
    Arrays.sort(all);
    Result r = new Result();
    r.throughput = total / (elapsed / 1e9);
    r.p50Micros = all[(int) (all.length * 0.50)] / 1000;
    r.p99Micros = all[(int) Math.min(all.length - 1, all.length * 0.99)] / 1000;
    r.admitted = admitted;
    return r;
  }

  /** Client commands per decision, by MONITOR over 1,000 sequential decisions. */
  static double commandsPerDecision(RedisURI uri, Limiter limiter, boolean hot) throws Exception {
    for (int i = 0; i < 100; i++) {
      limiter.tryAcquire(hot ? 0 : ThreadLocalRandom.current().nextInt(KEYS));
    }
    Path log = Files.createTempFile("monitor", ".log");
    Process monitor = new ProcessBuilder("redis-cli", "-h", uri.getHost(), "-p", Integer.toString(uri.getPort()), "monitor")
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      await(log, "OK");
      String marker = "bench-" + System.nanoTime();
      int decisions = 1_000;
      for (int i = 0; i < decisions; i++) {
        limiter.tryAcquire(hot ? 0 : ThreadLocalRandom.current().nextInt(KEYS));
      }
      new ProcessBuilder("redis-cli", "-h", uri.getHost(), "-p", Integer.toString(uri.getPort()), "echo", marker)
          .start().waitFor(10, TimeUnit.SECONDS);
      await(log, marker);
      List<String> lines = Files.readAllLines(log);
      long mine = 0;
      for (String l : lines) {
        if (l.contains(marker)) {
          break;
        }
        // Client commands carry the client's address; script commands say "lua". Only our
        // keys count, so that other clients of a shared Redis do not.
        if (!l.contains(" lua]") && l.contains("bench:")) {
          mine++;
        }
      }
      return (double) mine / decisions;
    } finally {
      monitor.destroyForcibly();
      monitor.waitFor(5, TimeUnit.SECONDS);
      Files.deleteIfExists(log);
    }
  }

  private static void await(Path log, String text) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < until) {
      if (Files.readString(log).contains(text)) {
        return;
      }
      Thread.sleep(10);
    }
    throw new IllegalStateException("MONITOR never showed " + text);
  }

}
