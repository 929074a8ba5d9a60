package dev.headroom.benchmarks.redis;

import com.sun.management.OperatingSystemMXBean;
import dev.headroom.Acquisition;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.RedisStore;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.FlushMode;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Headroom's Redis store against Bucket4j's documented Lettuce setup
 * ({@code Bucket4jLettuce.casBasedBuilder(connection)}: a {@code LettuceBasedProxyManager} doing
 * compare-and-swap), in one run against the same Redis, both in its default use (a bucket proxy
 * built per call, one compare-and-swap round trip or more per decision) and in its best documented
 * configuration ("Bucket4j batching": one proxy per key, kept, built
 * {@code withOptimization(Optimizations.batching())}, so that concurrent calls on a key share one
 * round trip): one hot key and 100,000 keys (uniform),
 * with 1, 16 and 64 concurrent callers, each deciding one request at a time (blocking calls).
 * Both limit a token bucket of 1,000 per second per key.
 *
 * <p><b>The benchmark empties its Redis ({@code FLUSHALL}) before every cell: give it a Redis of its
 * own.</b> It refuses to start on a Redis holding a key that is not its own ({@code bench:*}) unless
 * {@code -Dflush.foreign=true}. Each cell then starts from nothing; on 100,000 keys every key is decided once before the
 * warm-up, so each library is measured in its own steady state (see {@link Server#emptied()}).
 *
 * <p>Reports throughput (decisions per second), p50 and p99 latency, the admitted and attempted
 * counts per caller on the hot key (fairness: min, median, max), Redis commands per decision,
 * counted by {@code redis-cli monitor} over 1,000 sequential decisions (commands sent by clients
 * only; the commands a script runs inside Redis are not round trips), and per cell, from
 * {@code INFO commandstats} before and after it (no reset needed), the server's microseconds per
 * call of each client command, and, given the server's pid, the server's CPU time per decision
 * (user + system, from {@code /proc}).
 *
 * <pre>
 * java -cp headroom-benchmarks/target/benchmarks.jar dev.headroom.benchmarks.redis.RedisStoreBenchmark \
 *     [redis://127.0.0.1:6379] [seconds per cell, default 5] [redis-server pid] [repeats, default 1]
 * </pre>
 *
 * <p>Each cell is warmed up first with its own load, in one-second rounds until two rounds agree
 * within 10% (see {@link #warmUp}). Asynchronous callers share evenly: a decision answered at once
 * passes its caller's turn on (see {@link #measureAsync}); the attempts per caller (min / median /
 * max) show the share each had.
 *
 * {@code -Dcells=100k:64,hot:64} runs only those cells (keys {@code hot} or {@code 100k}, callers);
 * {@code -Dskip.monitor=true} skips the MONITOR count of commands per decision;
 * {@code -Dlibrary=headroom} runs Headroom alone, {@code -Dlibrary=bucket4j-batching} that peer alone
 * (for profiling one library).
 *
 * <p>On the hot key Headroom is also measured with its refusal memory off ("Headroom, no
 * memory": {@code RedisStore.Builder.refusalMemory(Duration.ZERO)}), which is coalescing alone.
 * {@code -Dasync=true} measures every library through its asynchronous API instead (the
 * gateway's way): "callers" is then the number of decisions kept in flight, each started again
 * from the previous one's completion, with no thread per caller: Headroom's
 * {@code RedisStore.acquireAsync}, Bucket4j's {@code AsyncProxyManager} proxies, plain and with
 * batching.
 *
 * <pre>
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

  /** A limiter's asynchronous API. */
  interface AsyncLimiter {
    CompletableFuture<Boolean> tryAcquire(int key);
  }

  static final boolean ASYNC = Boolean.getBoolean("async");

  /**
   * {@code -Dthreads=virtual}: each blocking caller a virtual thread (JDK 21 or later; on JDK 24 or
   * later a virtual thread waiting in {@code synchronized} code no longer pins its carrier), so that
   * a caller's wait for Redis parks no kernel thread.
   */
  static final boolean VIRTUAL = "virtual".equals(System.getProperty("threads"));

  /** Where blocking callers run: a platform thread each, or with {@link #VIRTUAL} a virtual thread each. */
  static ThreadFactory callerThreads() {
    if (!VIRTUAL) {
      return Thread::new;
    }
    try {
      // Thread.ofVirtual().factory(), looked up so that this module still compiles for Java 17.
      Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
      return (ThreadFactory) Class.forName("java.lang.Thread$Builder").getMethod("factory")
          .invoke(builder);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("threads=virtual needs JDK 21 or later; this is " + System.getProperty(
          "java.version"), e);
    }
  }

  /** The server's counters: commandstats and, when its pid is known, its CPU time. */
  static final class Server {
    final StatefulRedisConnection<String, String> admin;
    final long pid;

    Server(StatefulRedisConnection<String, String> admin, long pid) {
      this.admin = admin;
      this.pid = pid;
    }

    /**
     * Empties the server ({@code FLUSHALL SYNC}, freed before it answers) so that a cell pays for
     * no other cell's keys. Without it a cell paid for the keys the one before had left: Bucket4j's
     * live for ten seconds after their last write, so Redis deleted up to 200,000 of them (and
     * looked keys up in a keyspace twice as large) during the next Headroom cell, while Headroom's
     * (gone a millisecond after their bucket is full again) cost the cells after them nothing;
     * Headroom alone on 100,000 keys, asynchronous, lost a sixth to a fifth of its rate to that.
     */
    void emptied() {
      admin.sync().flushall(FlushMode.SYNC);
    }

    /** calls and usec per command, and the server's CPU time in microseconds (key "cpu"). */
    Map<String, long[]> snapshot() {
      Map<String, long[]> m = new TreeMap<>();
      for (String line : admin.sync().info("commandstats").split("\r?\n")) {
        if (line.startsWith("cmdstat_")) {
          String name = line.substring(8, line.indexOf(':'));
          long calls = Long.parseLong(field(line, "calls="));
          long usec = Long.parseLong(field(line, "usec="));
          m.put(name, new long[] {calls, usec});
        }
      }
      if (pid > 0) {
        try {
          String[] stat = Files.readString(Path.of("/proc/" + pid + "/stat")).split(" ");
          long ticks = Long.parseLong(stat[13]) + Long.parseLong(stat[14]);
          m.put("cpu", new long[] {0, ticks * 10_000}); // USER_HZ = 100
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      return m;
    }

    private static String field(String line, String name) {
      int i = line.indexOf(name) + name.length();
      int j = i;
      while (j < line.length() && Character.isDigit(line.charAt(j))) {
        j++;
      }
      return line.substring(i, j);
    }
  }

  /** What the server did between two snapshots, per decision: "cmd calls/decision @ usec_per_call". */
  static String serverWork(Map<String, long[]> before, Map<String, long[]> after, long decisions) {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<String, long[]> e : after.entrySet()) {
      long[] a = e.getValue();
      long[] z = before.getOrDefault(e.getKey(), new long[2]);
      long calls = a[0] - z[0];
      long usec = a[1] - z[1];
      if (e.getKey().equals("cpu")) {
        continue;
      }
      if (calls * 100 < decisions || e.getKey().equals("info")) {
        continue; // other clients of a shared server, and our own INFO
      }
      b.append(String.format(Locale.ROOT, "%s %.2f/dec @ %.1f µs; ", e.getKey(), (double) calls / decisions,
          (double) usec / calls));
    }
    if (after.containsKey("cpu")) {
      b.append(String.format(Locale.ROOT, "server CPU %.1f µs/dec",
          (double) (after.get("cpu")[1] - before.get("cpu")[1]) / decisions));
    }
    return b.toString();
  }

  public static void main(String[] args) throws Exception {
    String uri = args.length > 0 ? args[0] : "redis://127.0.0.1:6379";
    int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    long pid = args.length > 2 ? Long.parseLong(args[2]) : 0;
    int repeats = args.length > 3 ? Integer.parseInt(args[3]) : 1;
    RedisURI redisUri = RedisURI.create(uri);
    String foreign = foreignKey(redisUri);
    if (foreign != null && !Boolean.getBoolean("flush.foreign")) {
      System.err.println("RedisStoreBenchmark: " + uri + " holds the key \"" + foreign + "\", which is not this"
          + " benchmark's (bench:*); every cell empties the server (FLUSHALL), so it needs a Redis of its own."
          + " Point it at one, or pass -Dflush.foreign=true to flush this one anyway.");
      System.exit(2);
    }

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
    RedisStore coalescingOnly = RedisStore.builder().uri(redisUri).keyPrefix("bench:hr:")
        .failurePolicy(FailurePolicy.FAIL_CLOSED).decisionDeadline(Duration.ofSeconds(5))
        .refusalMemory(Duration.ZERO).build();
    Limiter headroomNoMemory = k -> coalescingOnly.acquire(List.of(Acquisition.of(policy, keys[k]))).allowed();
    AsyncLimiter headroomAsync = k -> store.acquireAsync(List.of(Acquisition.of(policy, keys[k])))
        .toCompletableFuture().thenApply(d -> d.allowed());
    AsyncLimiter headroomNoMemoryAsync = k -> coalescingOnly.acquireAsync(List.of(Acquisition.of(policy, keys[k])))
        .toCompletableFuture().thenApply(d -> d.allowed());

    RedisClient client = RedisClient.create(redisUri);
    StatefulRedisConnection<byte[], byte[]> connection = client.connect(RedisCodec.of(ByteArrayCodec.INSTANCE, ByteArrayCodec.INSTANCE));
    LettuceBasedProxyManager<byte[]> proxyManager = Bucket4jLettuce.casBasedBuilder(connection)
        .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
        .build();
    BucketConfiguration config = BucketConfiguration.builder()
        .addLimit(limit -> limit.capacity(QUOTA_PER_SECOND).refillGreedy(QUOTA_PER_SECOND, Duration.ofSeconds(1)))
        .build();
    Limiter bucket4j = k -> proxyManager.builder().build(b4jKeys[k], () -> config).tryConsume(1);
    BucketProxy[] batchingProxies = new BucketProxy[KEYS];
    for (int i = 0; i < KEYS; i++) {
      batchingProxies[i] = proxyManager.builder().withOptimization(Optimizations.batching())
          .build(b4jKeys[i], () -> config);
    }
    Limiter bucket4jBatching = k -> batchingProxies[k].tryConsume(1);
    AsyncProxyManager<byte[]> asyncManager = proxyManager.asAsync();
    AsyncLimiter bucket4jAsync = k -> asyncManager.builder()
        .build(b4jKeys[k], () -> CompletableFuture.completedFuture(config)).tryConsume(1);
    AsyncBucketProxy[] asyncBatching = new AsyncBucketProxy[KEYS];
    for (int i = 0; i < KEYS; i++) {
      asyncBatching[i] = asyncManager.builder().withOptimization(Optimizations.batching())
          .build(b4jKeys[i], () -> CompletableFuture.completedFuture(config));
    }
    AsyncLimiter bucket4jBatchingAsync = k -> asyncBatching[k].tryConsume(1);

    System.out.println("# Redis store benchmark: " + uri + ", " + seconds + " s per cell, JVM "
        + System.getProperty("java.version") + ", " + Runtime.getRuntime().availableProcessors() + " cores"
        + (ASYNC ? "; asynchronous APIs, \"callers\" = decisions in flight"
            : VIRTUAL ? "; blocking callers, a virtual thread each" : "; blocking callers, a thread each"));
    System.out.println();
    if (!Boolean.getBoolean("skip.monitor")) {
      System.out.println("Commands per decision (MONITOR, 1,000 sequential decisions):");
      System.out.printf(Locale.ROOT, "  headroom hot %.2f, 100k keys %.2f%n",
          commandsPerDecision(redisUri, headroom, true), commandsPerDecision(redisUri, headroom, false));
      System.out.printf(Locale.ROOT, "  bucket4j hot %.2f, 100k keys %.2f%n",
          commandsPerDecision(redisUri, bucket4j, true), commandsPerDecision(redisUri, bucket4j, false));
      System.out.printf(Locale.ROOT, "  bucket4j batching hot %.2f, 100k keys %.2f%n",
          commandsPerDecision(redisUri, bucket4jBatching, true), commandsPerDecision(redisUri, bucket4jBatching, false));
    }
    System.out.println();
    RedisClient adminClient = RedisClient.create(redisUri);
    Server server = new Server(adminClient.connect(), pid);
    List<String> work = new ArrayList<>();
    for (int rep = 1; rep <= repeats; rep++) {
      System.out.println();
      System.out.println("Run " + rep + ":");
      System.out.println();
      System.out.println("| keys | callers | library | decisions/s | p50 µs | p99 µs | admitted per caller min / median / max | attempts per caller min / median / max | Headroom / Bucket4j | Headroom / Bucket4j batching |");
      System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
      for (boolean hot : new boolean[] {true, false}) {
        for (int callers : CALLERS) {
          String keysLabel = hot ? "1 (hot)" : "100,000";
          if (!selected(hot, callers)) {
            continue;
          }
          if ("bucket4j-batching".equals(System.getProperty("library"))) {
            Result bb = run(bucket4jBatching, bucket4jBatchingAsync, hot, callers, seconds, server);
            System.out.println(bb.row(keysLabel, callers, "Bucket4j batching", 1.0, 1.0));
            work.add("run " + rep + ", " + keysLabel + ", " + callers + " callers: Bucket4j batching " + bb.work);
            continue;
          }
          boolean onlyHeadroom = "headroom".equals(System.getProperty("library"));
          Result h = run(headroom, headroomAsync, hot, callers, seconds, server);
          Result hn = hot ? run(headroomNoMemory, headroomNoMemoryAsync, hot, callers, seconds, server) : null;
          if (onlyHeadroom) {
            System.out.println(h.row(keysLabel, callers, "Headroom", Double.NaN, Double.NaN));
            work.add("run " + rep + ", " + keysLabel + ", " + callers + " callers: Headroom " + h.work);
            if (hn != null) {
              System.out.println(hn.row(keysLabel, callers, "Headroom, no memory", Double.NaN, Double.NaN));
              work.add("run " + rep + ", " + keysLabel + ", " + callers + " callers: Headroom, no memory " + hn.work);
            }
            continue;
          }
          Result b = run(bucket4j, bucket4jAsync, hot, callers, seconds, server);
          Result bb = run(bucket4jBatching, bucket4jBatchingAsync, hot, callers, seconds, server);
          System.out.println(h.row(keysLabel, callers, "Headroom", h.throughput / b.throughput,
              h.throughput / bb.throughput));
          if (hn != null) {
            System.out.println(hn.row(keysLabel, callers, "Headroom, no memory", hn.throughput / b.throughput,
                hn.throughput / bb.throughput));
            work.add("run " + rep + ", " + keysLabel + ", " + callers + " callers: Headroom, no memory " + hn.work);
          }
          System.out.println(b.row(keysLabel, callers, "Bucket4j", 1.0, 1.0));
          System.out.println(bb.row(keysLabel, callers, "Bucket4j batching", 1.0, 1.0));
          work.add("run " + rep + ", " + keysLabel + ", " + callers + " callers: Headroom " + h.work + "| Bucket4j "
              + b.work + "| Bucket4j batching " + bb.work);
        }
      }
    }
    System.out.println();
    System.out.println("Server work per decision (commandstats deltas, per cell):");
    for (String w : work) {
      System.out.println("  " + w);
    }
    server.admin.close();
    adminClient.shutdown();
    store.close();
    coalescingOnly.close();
    connection.close();
    client.shutdown();
  }

  /** A key of the server's that is not this benchmark's ({@code bench:*}), or null when there is none. */
  static String foreignKey(RedisURI uri) {
    RedisClient c = RedisClient.create(uri);
    try (StatefulRedisConnection<String, String> admin = c.connect()) {
      ScanCursor cursor = ScanCursor.INITIAL;
      do {
        KeyScanCursor<String> page = admin.sync().scan(cursor, ScanArgs.Builder.limit(1000));
        for (String k : page.getKeys()) {
          if (!k.startsWith("bench:")) {
            return k;
          }
        }
        cursor = page;
      } while (!cursor.isFinished());
      return null;
    } finally {
      c.shutdown();
    }
  }

  /**
   * Whether a cell is to be run: all of them unless the system property {@code cells} lists some,
   * as {@code hot:64,100k:16} (for profiling one cell).
   */
  static boolean selected(boolean hot, int callers) {
    String cells = System.getProperty("cells");
    if (cells == null || cells.isBlank()) {
      return true;
    }
    return Arrays.asList(cells.split(",")).contains((hot ? "hot:" : "100k:") + callers);
  }

  static final class Result {
    double throughput;
    long p50Micros;
    long p99Micros;
    long[] admitted;
    long[] attempts;
    String work = "";

    /** p50 and p99 of a cell's sorted latencies in nanoseconds; a cell without one is an error. */
    void percentiles(long[] sorted) {
      if (sorted.length == 0) {
        throw new IllegalStateException("no decision completed in the cell: the machine stalled longer than the cell");
      }
      p50Micros = sorted[(int) (sorted.length * 0.50)] / 1000;
      p99Micros = sorted[(int) Math.min(sorted.length - 1, sorted.length * 0.99)] / 1000;
    }

    String row(String keys, int callers, String library, double ratio, double ratioBatching) {
      boolean hot = keys.startsWith("1 ");
      boolean ours = library.startsWith("Headroom");
      return String.format(Locale.ROOT, "| %s | %d | %s | %,.0f | %d | %d | %s | %s | %s | %s |", keys, callers,
          library, throughput, p50Micros, p99Micros, hot ? spread(admitted) : "-", hot ? spread(attempts) : "-",
          ours ? String.format(Locale.ROOT, "%.2fx", ratio) : "",
          ours ? String.format(Locale.ROOT, "%.2fx", ratioBatching) : "");
    }

    static String spread(long[] values) {
      long[] a = values.clone();
      Arrays.sort(a);
      return a[0] + " / " + a[a.length / 2] + " / " + a[a.length - 1];
    }
  }

  /**
   * Decides each of the 100,000 keys once, in order, 64 at a time, so that every library starts
   * its cell on an emptied server in its own steady state (Bucket4j's state for every key present,
   * as ten seconds' expiry keeps it; Headroom's gone again a millisecond after), not creating keys
   * inside the measurement.
   */
  static void prime(AsyncLimiter async) throws InterruptedException {
    Semaphore inFlight = new Semaphore(64);
    for (int k = 0; k < KEYS; k++) {
      inFlight.acquire();
      try {
        async.tryAcquire(k).whenComplete((allowed, failure) -> inFlight.release());
      } catch (RuntimeException refused) {
        inFlight.release(); // a decision refused before it started leaves no permit behind
      }
    }
    inFlight.acquire(64);
  }

  static Result run(Limiter limiter, AsyncLimiter async, boolean hot, int callers, int seconds, Server server)
      throws InterruptedException {
    server.emptied();
    if (!hot) {
      prime(async);
    }
    int warmUp = warmUp(() -> ASYNC ? measureAsync(async, hot, callers, 1) : measure(limiter, hot, callers, 1));
    Map<String, long[]> before = server.snapshot();
    long processCpu = processCpuNanos();
    long ioCpu = ioThreadCpuNanos();
    long switches = contextSwitches();
    Result r = ASYNC ? measureAsync(async, hot, callers, seconds) : measure(limiter, hot, callers, seconds);
    ioCpu = ioThreadCpuNanos() - ioCpu;
    processCpu = processCpuNanos() - processCpu;
    Map<String, long[]> after = server.snapshot();
    long decisions = 0;
    for (long a : r.attempts) {
      decisions += a;
    }
    r.work = serverWork(before, after, decisions) + String.format(Locale.ROOT,
        "; client CPU %.1f µs/dec, of which Lettuce I/O threads %.1f; client context switches %.2f/dec;"
        + " warm-up %d s", processCpu / 1e3 / decisions, ioCpu / 1e3 / decisions,
        (double) (contextSwitches() - switches) / decisions, warmUp);
    return r;
  }

  /** A warm-up round: one second of the cell's own load. */
  interface Round {
    Result run() throws InterruptedException;
  }

  /** The fewest one-second warm-up rounds of a cell. */
  static final int WARM_UP_MIN_ROUNDS = 3;

  /** The most one-second warm-up rounds of a cell ({@code -Dwarmup.max}). */
  static final int WARM_UP_MAX_ROUNDS = Integer.getInteger("warmup.max", 15);

  /** How close two successive warm-up rounds' rates must be for the cell to count as warm. */
  static final double WARM_UP_TOLERANCE = 0.10;

  /**
   * Warms a cell up: one-second rounds of its own load until a round's rate is within
   * {@link #WARM_UP_TOLERANCE} of the round before (at least {@link #WARM_UP_MIN_ROUNDS}, at most
   * {@link #WARM_UP_MAX_ROUNDS}). One second was too short: the first blocking cell (one caller, hot
   * key, Headroom answering refusals from memory) read 342,000 decisions per second against 1.46
   * to 1.75 million in the same cell later, its hot path still interpreted when measured.
   *
   * @return the rounds run, that is the seconds spent warming up
   */
  static int warmUp(Round round) throws InterruptedException {
    double before = round.run().throughput;
    int rounds = 1;
    while (rounds < WARM_UP_MAX_ROUNDS) {
      double now = round.run().throughput;
      rounds++;
      if (rounds >= WARM_UP_MIN_ROUNDS && Math.abs(now - before) <= WARM_UP_TOLERANCE * Math.max(now, before)) {
        break;
      }
      before = now;
    }
    return rounds;
  }

  /**
   * Context switches of this JVM's threads so far, voluntary and not, from {@code /proc}: the
   * living threads other than callers, plus what every caller counted for itself as it ended
   * (a thread's counts vanish with it).
   */
  static long contextSwitches() {
    return CALLER_SWITCHES.sum() + threadSwitches(false);
  }

  static final LongAdder CALLER_SWITCHES = new LongAdder();

  /** The switches of this process's threads from /proc (only callers, or all but callers). */
  static long threadSwitches(boolean self) {
    long sum = 0;
    try (Stream<Path> tasks = self ? Stream.of(Path.of("/proc/thread-self"))
        : Files.list(Path.of("/proc/self/task"))) {
      for (Path t : (Iterable<Path>) tasks::iterator) {
        try {
          String status = Files.readString(t.resolve("status"));
          if (!self && status.contains("Name:\tThread-")) {
            continue; // callers: counted by themselves as they end
          }
          for (String line : status.split("\n")) {
            if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
              sum += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
          }
        } catch (IOException | RuntimeException gone) {
          // the thread ended meanwhile
        }
      }
    } catch (IOException e) {
      return 0;
    }
    return sum;
  }

  /** The CPU time of this whole JVM (callers, I/O threads, GC, JIT). */
  static long processCpuNanos() {
    return ((OperatingSystemMXBean) ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /**
   * The CPU time of the Lettuce event-loop threads (both libraries' clients: only one of them
   * works during a cell).
   */
  static long ioThreadCpuNanos() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long sum = 0;
    for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds())) {
      if (t != null && t.getThreadName().startsWith("lettuce-") && t.getThreadName().contains("EventLoop")) {
        long cpu = mx.getThreadCpuTime(t.getThreadId());
        sum += Math.max(0, cpu);
      }
    }
    return sum;
  }

  static Result measure(Limiter limiter, boolean hot, int callers, int seconds) throws InterruptedException {
    long[][] latencies = new long[callers][];
    int[] counts = new int[callers];
    long[] admitted = new long[callers];
    long[] attempts = new long[callers];
    CountDownLatch start = new CountDownLatch(1);
    Thread[] threads = new Thread[callers];
    long[] endAt = new long[1];
    ThreadFactory factory = callerThreads();
    for (int t = 0; t < callers; t++) {
      int me = t;
      threads[t] = factory.newThread(() -> {
        long[] lat = new long[1 << 16];
        int n = 0;
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        long end = endAt[0];
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long mine = 0; // counted locally: no false sharing between callers
        while (true) {
          long t0 = System.nanoTime();
          if (t0 >= end) {
            break;
          }
          if (limiter.tryAcquire(hot ? 0 : r.nextInt(KEYS))) {
            mine++;
          }
          if (n == lat.length) {
            lat = Arrays.copyOf(lat, n * 2);
          }
          lat[n++] = System.nanoTime() - t0;
        }
        if (!VIRTUAL) {
          CALLER_SWITCHES.add(threadSwitches(true)); // a virtual caller's carriers are counted as living threads
        }
        latencies[me] = lat;
        counts[me] = n;
        admitted[me] = mine;
        attempts[me] = n;
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
    r.percentiles(all);
    r.admitted = admitted;
    r.attempts = attempts;
    return r;
  }

  /**
   * {@code inFlight} decisions kept in flight through an asynchronous API for {@code seconds}, each
   * slot starting its next decision when the previous one completes, every slot with the same
   * share. A decision that completes on an I/O thread starts its slot's next one there; a decision
   * that completes at once (a refusal answered from memory) does not start the next one itself: its
   * slot joins the back of a queue of ready slots, which one thread serves in turn. Before, such a
   * slot looped on the thread that had completed it until the cell's end: one slot of 64 on the hot
   * key made 3.2 to 4.1 million attempts, all refusals answered from memory, holding the I/O thread
   * that the 63 others waited on (about 4,700 attempts each), so the cell measured one caller, not
   * 64 in flight.
   */
  static Result measureAsync(AsyncLimiter limiter, boolean hot, int inFlight, int seconds) throws InterruptedException {
    final class Slot {
      long[] lat = new long[1 << 16];
      int n;
      long admitted;
      long started;

      void completed(Boolean allowed) {
        if (n == lat.length) {
          lat = Arrays.copyOf(lat, n * 2);
        }
        lat[n++] = System.nanoTime() - started;
        if (Boolean.TRUE.equals(allowed)) {
          admitted++;
        }
      }
    }
    Slot[] slots = new Slot[inFlight];
    CountDownLatch done = new CountDownLatch(inFlight);
    LinkedBlockingQueue<Slot> ready = new LinkedBlockingQueue<>();
    for (int i = 0; i < inFlight; i++) {
      slots[i] = new Slot(); // before the clock starts: allocating them can wait for a collection
    }
    long t0 = System.nanoTime();
    long end = t0 + TimeUnit.SECONDS.toNanos(seconds);
    Consumer<Slot>[] next = new Consumer[1];
    next[0] = slot -> {
      long now = System.nanoTime();
      if (now >= end) {
        done.countDown();
        return;
      }
      slot.started = now;
      CompletableFuture<Boolean> f;
      try {
        f = limiter.tryAcquire(hot ? 0 : ThreadLocalRandom.current().nextInt(KEYS));
      } catch (RuntimeException e) {
        f = CompletableFuture.failedFuture(e);
      }
      if (f.isDone()) {
        slot.completed(f.isCompletedExceptionally() ? null : f.getNow(null));
        ready.add(slot);
        return;
      }
      f.whenComplete((ok, e) -> {
        slot.completed(ok);
        next[0].accept(slot);
      });
    };
    ready.addAll(Arrays.asList(slots));
    long deadline = end + TimeUnit.SECONDS.toNanos(60);
    while (done.getCount() > 0) {
      Slot slot = ready.poll(1, TimeUnit.MILLISECONDS);
      if (slot != null) {
        next[0].accept(slot);
      } else if (System.nanoTime() > deadline) {
        throw new IllegalStateException("asynchronous decisions still in flight a minute after the cell's end");
      }
    }
    long elapsed = System.nanoTime() - t0;
    int total = 0;
    for (Slot slot : slots) {
      total += slot.n;
    }
    long[] all = new long[total];
    int i = 0;
    Result r = new Result();
    r.admitted = new long[inFlight];
    r.attempts = new long[inFlight];
    for (int k = 0; k < inFlight; k++) {
      System.arraycopy(slots[k].lat, 0, all, i, slots[k].n);
      i += slots[k].n;
      r.admitted[k] = slots[k].admitted;
      r.attempts[k] = slots[k].n;
    }
    Arrays.sort(all);
    r.throughput = total / (elapsed / 1e9);
    r.percentiles(all);
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
