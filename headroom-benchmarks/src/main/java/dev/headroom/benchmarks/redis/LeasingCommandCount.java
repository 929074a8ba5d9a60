package dev.headroom.benchmarks.redis;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.Lease;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.redis.Leasing;
import dev.headroom.redis.LeasingStore;
import dev.headroom.redis.RedisStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Redis commands per 1,000 decisions on one hot key, with and without quota leasing
 * ({@link LeasingStore}, default options), against a real Redis.
 *
 * <p>Each row decides 10,000 requests of a fixed window and of a token bucket (q = 10^9 per hour,
 * never exhausted) on one thread. The local rate is set by a manual ticker shared by the leasing
 * store and the Redis script (1 ms between requests is 1,000 requests per second); the last row
 * runs flat out on real time (Redis {@code TIME}, system ticker). Commands are counted twice: by a
 * counting wrapper around the Redis store (exact: every acquire and refund the leasing store
 * sends), and by the {@code cmdstat_fcall} delta of {@code INFO commandstats}, which also counts
 * whatever other clients of the same Redis did meanwhile.
 *
 * <p>Run: {@code java -cp headroom-benchmarks/target/benchmarks.jar
 * dev.headroom.benchmarks.redis.LeasingCommandCount [redis://127.0.0.1:6379]}.
 */
public final class LeasingCommandCount {

  static final int DECISIONS = 10_000;
  private static final Pattern FCALL = Pattern.compile("cmdstat_fcall:calls=(\\d+)");

  private LeasingCommandCount() {}

  public static void main(String[] args) {
    String uri = args.length > 0 ? args[0] : "redis://127.0.0.1:6379";
    RedisClient client = RedisClient.create(uri);
    try (StatefulRedisConnection<String, String> admin = client.connect()) {
      System.out.println("| algorithm | local rate | commands per 1,000 decisions without leasing, counted (commandstats delta) | with leasing "
          + "(counted) | with leasing (commandstats delta) | ratio |");
      System.out.println("|---|---|---|---|---|---|");
      for (Algorithm algorithm : List.of(Algorithm.FIXED_WINDOW, Algorithm.TOKEN_BUCKET)) {
        for (long gapNanos : new long[] {10_000_000L, 1_000_000L, 100_000L, 10_000L, 0}) {
          row(uri, admin, algorithm, gapNanos);
        }
      }
    } finally {
      client.shutdown();
    }
  }

  private static void row(String uri, StatefulRedisConnection<String, String> admin, Algorithm algorithm,
      long gapNanos) {
    QuotaPolicy policy = QuotaPolicy.builder("hot").quota(1_000_000_000L).window(Duration.ofHours(1))
        .algorithm(algorithm).build();
    long[] without = count(uri, admin, policy, gapNanos, false);
    long[] with = count(uri, admin, policy, gapNanos, true);
    String rate = gapNanos == 0 ? "flat out (real time)" : String.format(Locale.ROOT, "%,d/s", 1_000_000_000L / gapNanos);
    System.out.printf(Locale.ROOT, "| %s | %s | %.1f (%.1f) | %.2f | %.2f | %.4f |%n", algorithm.token(), rate,
        1000.0 * without[0] / DECISIONS, 1000.0 * without[1] / DECISIONS, 1000.0 * with[0] / DECISIONS,
        1000.0 * with[1] / DECISIONS, (double) with[0] / without[0]);
  }

  /** Commands for {@link #DECISIONS} decisions: {counted, commandstats delta}. */
  private static long[] count(String uri, StatefulRedisConnection<String, String> admin, QuotaPolicy policy,
      long gapNanos, boolean leasing) {
    ManualTicker manual = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    String prefix = "hrbench:lease:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    RedisStore.Builder b = RedisStore.builder().uri(uri).keyPrefix(prefix).decisionDeadline(Duration.ofSeconds(5));
    if (gapNanos > 0) {
      b.ticker(manual);
    }
    Ticker ticker = gapNanos > 0 ? manual : Ticker.system();
    RedisStore redis = b.build();
    Counting counting = new Counting(redis);
    Store store = leasing
        ? LeasingStore.wrap(counting, Leasing.builder().policy(policy).ticker(ticker).build())
        : counting;
    Acquisition one = Acquisition.of(policy, PartitionKey.of("k"));
    store.acquire(List.of(one)); // connection up, library loaded
    long before = fcalls(admin);
    long counted = counting.commands.get();
    for (int i = 0; i < DECISIONS; i++) {
      Decision d = store.acquire(List.of(one));
      if (!d.allowed()) {
        throw new IllegalStateException("refused: " + d);
      }
      manual.advanceNanos(gapNanos);
    }
    store.close(); // returns slices: counted
    long[] result = {counting.commands.get() - counted, fcalls(admin) - before};
    redis.close();
    List<String> keys = admin.sync().keys(prefix + "*");
    if (!keys.isEmpty()) {
      admin.sync().del(keys.toArray(new String[0]));
    }
    return result;
  }

  private static long fcalls(StatefulRedisConnection<String, String> admin) {
    Matcher m = FCALL.matcher(admin.sync().info("commandstats"));
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /** Counts every command sent to the Redis store. */
  static final class Counting implements Store {
    final Store inner;
    final AtomicLong commands = new AtomicLong();

    Counting(Store inner) {
      this.inner = inner;
    }

    @Override
    public Decision acquire(List<Acquisition> acquisitions) {
      commands.incrementAndGet();
      return inner.acquire(acquisitions);
    }

    @Override
    public CompletionStage<Decision> acquireAsync(List<Acquisition> acquisitions) {
      commands.incrementAndGet();
      return inner.acquireAsync(acquisitions);
    }

    @Override
    public void charge(Acquisition acquisition) {
      commands.incrementAndGet();
      inner.charge(acquisition);
    }

    @Override
    public void refund(Acquisition acquisition) {
      commands.incrementAndGet();
      inner.refund(acquisition);
    }

    @Override
    public void release(Lease lease) {
      commands.incrementAndGet();
      inner.release(lease);
    }

    @Override
    public void close() {
      // the Redis store is closed by the caller
    }
  }
}
