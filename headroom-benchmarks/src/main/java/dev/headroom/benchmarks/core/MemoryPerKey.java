package dev.headroom.benchmarks.core;

import dev.headroom.Algorithm;
import dev.headroom.InMemoryStore;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.local.SynchronizationStrategy;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import org.openjdk.jol.info.GraphLayout;
import org.openjdk.jol.vm.VM;

/**
 * Bytes per tracked key beyond the key itself, for 1,000,000 keys (or the count given as the first
 * argument): Headroom's in-memory store (token bucket and fixed window), Bucket4j local buckets in a
 * {@link ConcurrentHashMap} at its default ({@code LOCK_FREE}) and with {@code SYNCHRONIZED} (its
 * other thread-safe strategy), and the lean GCRA. Each structure is walked with JOL's
 * {@link GraphLayout}; the key strings (and their byte arrays), which every design must hold, are
 * subtracted. Each key was used once (one unit taken), so every lazily created state exists.
 *
 * <pre>java -Xmx6g -cp headroom-benchmarks/target/benchmarks.jar dev.headroom.benchmarks.core.MemoryPerKey</pre>
 */
public final class MemoryPerKey {

  private MemoryPerKey() {}

  public static void main(String[] args) {
    int count = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    System.out.println(VM.current().details());
    String[] names = Workload.keyNames(count);
    // Sizes, not addresses: objects move between walks, so the keys are subtracted by footprint.
    GraphLayout keyGraph = GraphLayout.parseInstance((Object[]) names); // each string is a root
    long keyBytes = keyGraph.totalSize();
    long keyObjects = keyGraph.totalCount();
    Keys keys = new Keys(keyBytes, keyObjects);
    System.out.printf("keys: %d strings, %.1f bytes each with their byte arrays%n", count, (double) keyBytes / count);

    Duration window = Duration.ofHours(1);
    for (Algorithm algorithm : new Algorithm[] {Algorithm.TOKEN_BUCKET, Algorithm.FIXED_WINDOW}) {
      InMemoryStore store = InMemoryStore.builder().maxKeys(count).build();
      QuotaLimiter limiter = QuotaLimiter.of(store);
      QuotaPolicy policy = QuotaPolicy.builder("memory").quota(10).window(window).algorithm(algorithm).build();
      for (String name : names) {
        limiter.tryAcquire(policy, PartitionKey.of(name));
      }
      report("Headroom " + algorithm.token(), store, keys, count, store.trackedKeys());
    }

    Bandwidth bandwidth = Bandwidth.builder().capacity(10).refillGreedy(10, window).build();
    for (SynchronizationStrategy strategy : new SynchronizationStrategy[] {SynchronizationStrategy.LOCK_FREE,
        SynchronizationStrategy.SYNCHRONIZED}) {
      ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
      for (String name : names) {
        buckets.computeIfAbsent(name, k -> Bucket.builder().addLimit(bandwidth).withSynchronizationStrategy(strategy)
            .build()).tryConsume(1);
      }
      report("Bucket4j " + strategy + " (ConcurrentHashMap of local buckets)", buckets, keys, count, buckets.size());
    }

    LeanGcra lean = new LeanGcra(10, window.toNanos());
    for (String name : names) {
      lean.tryAcquire(name, System.nanoTime());
    }
    report("lean GCRA (ConcurrentHashMap<String, AtomicLong>)", lean.map(), keys, count, lean.map().size());
  }

  /** The footprint of the key strings, which every design holds once. */
  private static final class Keys {
    final long bytes;
    final long objects;

    Keys(long bytes, long objects) {
      this.bytes = bytes;
      this.objects = objects;
    }
  }

  private static void report(String what, Object root, Keys keys, int count, long tracked) {
    GraphLayout all = GraphLayout.parseInstance(root);
    long bytes = all.totalSize() - keys.bytes;
    long objects = all.totalCount() - keys.objects;
    System.out.printf("%-52s %8.1f bytes/key beyond the key (%d keys tracked, %d other objects, %d bytes)%n",
        what, (double) bytes / count, tracked, objects, bytes);
    System.gc();
  }
}
