package dev.headroom.benchmarks.core;

import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * A bounded {@link InMemoryStore} ({@link #MAX_KEYS} keys) under a flood of distinct partition
 * keys, against the same calls without a flood, in one run.
 *
 * <ul>
 *   <li>{@code none}: every call names one of {@link Workload#KEY_COUNT} keys in turn: the store
 *       holds them all and never evicts.
 *   <li>{@code flood}: every call names one of {@link #FLOOD_KEYS} keys in turn: 10x the bound, so
 *       each call brings a key the store does not hold. At the full store it is kept out and
 *       decided from the sketch (the admission filter, headroom-core {@code KeyAdmission}); before
 *       the filter, each one evicted a key to enter.
 *   <li>{@code mixed}: the calls of {@code none}, but every tenth names the next flood key instead:
 *       callers deciding while a flood of new keys goes on beside them.
 * </ul>
 * Before the trial the store is filled with {@link #PREFILL} keys, so that {@code none} holds all
 * its keys without evicting and the flood evicts from its first calls on. All three build the key's string on each call ({@code "f-" + n}), so the two differ only in what the
 * store does. The policy refuses after 50 per hour per key, as in the issue that asked for this
 * benchmark (project issue 14). Threads take disjoint stretches of the sequence.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class StoreFloodBenchmark {

  /** The store's bound. */
  static final long MAX_KEYS = 1_000_000;

  /** Keys put in the store before the trial: the bound less the keys of {@code none}, less 1%. */
  static final int PREFILL = (int) MAX_KEYS - Workload.KEY_COUNT - 10_000;

  /** Distinct keys of the flood: ten times the bound. */
  static final int FLOOD_KEYS = 10_000_000;

  @Param({"none", "mixed", "flood"})
  public String traffic;

  @Param({"TOKEN_BUCKET", "FIXED_WINDOW"})
  public String algorithm;

  InMemoryStore store;
  QuotaLimiter limiter;
  QuotaPolicy policy;
  int span;
  boolean mixed;
  final AtomicInteger threadIds = new AtomicInteger();

  @Setup(Level.Trial)
  public void setUp() {
    store = InMemoryStore.builder().maxKeys(MAX_KEYS).build();
    limiter = QuotaLimiter.of(store);
    policy = QuotaPolicy.builder("flood").quota(50).window(Duration.ofHours(1))
        .algorithm(Algorithm.valueOf(algorithm)).build();
    for (int i = 0; i < PREFILL; i++) {
      limiter.tryAcquire(policy, PartitionKey.of("p-" + i));
    }
    span = traffic.equals("flood") ? FLOOD_KEYS : Workload.KEY_COUNT;
    mixed = traffic.equals("mixed");
  }

  /** One benchmark thread's place in the key sequence. */
  @State(Scope.Thread)
  public static class Caller {
    int next;
    int calls;
    int flood;

    @Setup(Level.Trial)
    public void setUp(StoreFloodBenchmark b) {
      int id = b.threadIds.getAndIncrement();
      next = id * (b.span / 2);
      flood = id * (FLOOD_KEYS / 2);
    }
  }

  @Benchmark
  public boolean decide(Caller c) {
    if (mixed && ++c.calls % 10 == 0) {
      int f = c.flood;
      c.flood = f + 1 == FLOOD_KEYS ? 0 : f + 1;
      return limiter.tryAcquire(policy, PartitionKey.of("x-" + f));
    }
    int n = c.next;
    c.next = n + 1 == span ? 0 : n + 1;
    return limiter.tryAcquire(policy, PartitionKey.of("f-" + n));
  }
}
