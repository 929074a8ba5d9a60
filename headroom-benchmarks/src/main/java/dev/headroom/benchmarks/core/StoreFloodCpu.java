package dev.headroom.benchmarks.core;

import com.sun.management.OperatingSystemMXBean;
import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;

/**
 * The calls of {@link StoreFloodBenchmark}, measured in CPU time rather than wall time: on a
 * machine shared with other work, a thread's CPU time counts what a call costs whatever the
 * scheduler does, where JMH's throughput counts the time the thread waited for a core too.
 *
 * <p>Prints, per round, the calling threads' CPU time per call (the store's own work) and the
 * process's CPU time per call (that work plus the collector's and the JIT's: for a flood, mostly the
 * garbage collector's cost of keeping each new key's string). Same store, prefill, policy and key
 * sequences as the JMH benchmark.
 *
 * <pre>
 * java -cp headroom-benchmarks/target/benchmarks.jar dev.headroom.benchmarks.core.StoreFloodCpu \
 *     TOKEN_BUCKET flood 400000 2
 * </pre>
 * Arguments: algorithm, traffic ({@code none}, {@code mixed}, {@code flood}), calls per thread
 * per round, threads.
 */
public final class StoreFloodCpu {

  /** Measured rounds; the first one includes the JIT's warm-up. */
  static final int ROUNDS = 3;

  private StoreFloodCpu() {}

  public static void main(String[] args) throws InterruptedException {
    Algorithm algorithm = Algorithm.valueOf(args[0]);
    String traffic = args[1];
    int calls = Integer.parseInt(args[2]);
    int threads = Integer.parseInt(args[3]);
    InMemoryStore store = InMemoryStore.builder().maxKeys(StoreFloodBenchmark.MAX_KEYS).build();
    QuotaLimiter limiter = QuotaLimiter.of(store);
    QuotaPolicy policy = QuotaPolicy.builder("flood").quota(50).window(Duration.ofHours(1)).algorithm(algorithm).build();
    for (int i = 0; i < StoreFloodBenchmark.PREFILL; i++) {
      limiter.tryAcquire(policy, PartitionKey.of("p-" + i));
    }
    boolean flood = traffic.equals("flood");
    boolean mixed = traffic.equals("mixed");
    int span = Workload.KEY_COUNT;
    ThreadMXBean threadBean = ManagementFactory.getThreadMXBean();
    OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    for (int round = 0; round < ROUNDS; round++) {
      long[] cpu = new long[threads];
      Thread[] workers = new Thread[threads];
      int floodBase = round * calls * threads;
      long process = os.getProcessCpuTime();
      long wall = System.nanoTime();
      for (int t = 0; t < threads; t++) {
        int id = t;
        workers[t] = new Thread(() -> {
          long start = threadBean.getCurrentThreadCpuTime();
          int next = id * (span / threads);
          int f = floodBase + id * calls;
          for (int c = 1; c <= calls; c++) {
            if (flood || mixed && c % 10 == 0) {
              limiter.tryAcquire(policy, PartitionKey.of("x-" + f++));
            } else {
              int n = next;
              next = n + 1 == span ? 0 : n + 1;
              limiter.tryAcquire(policy, PartitionKey.of("f-" + n));
            }
          }
          cpu[id] = threadBean.getCurrentThreadCpuTime() - start;
        });
        workers[t].start();
      }
      for (Thread w : workers) {
        w.join();
      }
      wall = System.nanoTime() - wall;
      process = os.getProcessCpuTime() - process;
      long callers = 0;
      for (long c : cpu) {
        callers += c;
      }
      double n = (double) calls * threads;
      System.out.printf("%s %s round %d: callers' CPU %.0f ns/call, process CPU %.0f ns/call, wall %.0f ns/call%n",
          algorithm, traffic, round, callers / n, process / n, wall * threads / n);
    }
  }
}
