package dev.headroom.redis;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The process {@link LeasingMultiProcessTest} starts: {@code attempts} requests on two threads,
 * each asking a leased fixed window and a leased token bucket of the same hot key, on Redis time.
 * Prints {@code admitted=<n> heldWindow=<units> heldBucket=<units> slices=<n>}; then closes the
 * store (returning its slices), or with {@code crash} halts the JVM holding them.
 */
public final class LeasingWorker {

  static final QuotaPolicy WINDOW = QuotaPolicy.builder("mpw").quota(3_000).window(Duration.ofDays(366))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  static final QuotaPolicy BUCKET = QuotaPolicy.builder("mpb").quota(2_500).window(Duration.ofDays(366))
      .algorithm(Algorithm.TOKEN_BUCKET).build();
  static final PartitionKey KEY = PartitionKey.of("hot");

  private LeasingWorker() {}

  public static void main(String[] args) throws Exception {
    String uri = args[0];
    String prefix = args[1];
    int attempts = Integer.parseInt(args[2]);
    boolean crash = "crash".equals(args[3]);
    RedisStore redis = RedisStore.builder().uri(uri).keyPrefix(prefix)
        .failurePolicy(FailurePolicy.FAIL_CLOSED).decisionDeadline(Duration.ofSeconds(10)).build();
    LeasingStore store = LeasingStore.wrap(redis, Leasing.builder().policy(WINDOW).policy(BUCKET)
        .maxHold(Duration.ofSeconds(30)).idleReturn(Duration.ofSeconds(30)).build());
    // Start together: report ready, then wait for the parent's go (a blocking pop, no polling).
    RedisClient client = RedisClient.create(uri);
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      c.sync().rpush(prefix + "ready", "1");
      if (c.sync().blpop(60, prefix + "go:" + args[4]) == null) {
        throw new IllegalStateException("no go from the test within 60 s");
      }
    } finally {
      client.shutdown();
    }
    AtomicLong next = new AtomicLong();
    AtomicLong admitted = new AtomicLong();
    AtomicLong dishonest = new AtomicLong();
    Thread[] workers = new Thread[2];
    for (int t = 0; t < workers.length; t++) {
      workers[t] = new Thread(() -> {
        while (next.getAndIncrement() < attempts) {
          long before = admitted.get();
          Decision d = store.acquire(List.of(Acquisition.of(WINDOW, KEY), Acquisition.of(BUCKET, KEY)));
          if (d.allowed()) {
            admitted.incrementAndGet();
          }
          // r never exceeds q minus what this process had admitted before it asked (less one
          // decision the other thread may have had in flight centrally)
          if (d.outcomes().get(0).remaining() > WINDOW.quota() - before + 1) {
            dishonest.incrementAndGet();
          }
        }
      });
      workers[t].start();
    }
    for (Thread w : workers) {
      w.join();
    }
    // The crashing JVM means to die holding units: if its last slice happened to be used up
    // exactly, it asks a few more times (a new slice) before halting.
    for (int extra = 0; crash && extra < 200 && store.unitsHeld(BUCKET, KEY) == 0; extra++) {
      if (store.acquire(List.of(Acquisition.of(WINDOW, KEY), Acquisition.of(BUCKET, KEY))).allowed()) {
        admitted.incrementAndGet();
      }
    }
    System.out.println("admitted=" + admitted.get() + " heldWindow=" + store.unitsHeld(WINDOW, KEY)
        + " heldBucket=" + store.unitsHeld(BUCKET, KEY) + " slices=" + store.slicesTaken()
        + " dishonest=" + dishonest.get());
    System.out.flush();
    if (crash) {
      Runtime.getRuntime().halt(0);
    }
    store.close();
  }
}
