package dev.headroom.gateway.internal.admin;

import dev.headroom.PartitionKey;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the admin dashboard shows, kept in bounded memory: per-second samples of the last
 * {@value #SECONDS} seconds (decisions by policy and outcome, store decision latency), and the
 * heaviest partitions by refusals and by use.
 *
 * <p>State, and why:
 * <ul>
 *   <li>The request path adds nothing for the time series: the sampler reads the cumulative
 *       counters {@link GatewayMetrics} keeps for Prometheus anyway, once a second, and stores the
 *       differences. Samples are taken on the gateway's ticker (virtual time in tests); a ring of
 *       {@value #SECONDS} of them is kept.
 *   <li>Heavy hitters need the partition, which no meter has: each event-loop thread counts its
 *       own decisions in two {@link HeavyHitters} summaries ({@value #MONITORED} keys each, one by
 *       refusals, one by use), so the request path takes no lock another thread holds except while
 *       the board is read; reading merges the threads' summaries (a key's counts and errors add up,
 *       so the merged bounds stay bounds).
 *   <li>A partition is identified by policy name and key while counted, and shown only as the
 *       predictable {@code pk} hash a client can compute for itself
 *       (draft-ietf-httpapi-ratelimit-headers-09 section 3.1.4): never a raw credential.
 * </ul>
 * Thread-safe.
 */
final class UsageBoard {
  /** Seconds of history kept and shown. */
  static final int SECONDS = 120;
  /** Keys each thread's summary monitors. */
  static final int MONITORED = 64;

  /** A partition of a policy. */
  record Partition(String policy, PartitionKey key) {}

  /** A heavy hitter after merging the threads: {@code count - error <= true count <= count}. */
  record Hitter(Partition partition, long count, long error) {}

  /**
   * One second: decisions by policy and outcome in it, and the store's decision latency
   * distribution in it (bucket upper bounds in nanoseconds, and how many decisions fell in each).
   */
  record Sample(long epochMillis, Map<String, Map<String, Long>> decisions, long latencyCount,
      double latencyTotalNanos, double[] bucketBounds, long[] bucketCounts, Map<String, Queue> queues) {}

  /**
   * The cumulative readings a sample is the difference of; a queue's {@code waiting} is a reading
   * at the time, not cumulative.
   */
  record Totals(Map<String, Map<String, Long>> decisions, long latencyCount, double latencyTotalNanos,
      double[] bucketBounds, long[] cumulativeBuckets, Map<String, Queue> queues) {}

  /**
   * A policy's queue ({@code policies.NAME.queue}): requests waiting at the time, and requests
   * admitted and timed out after waiting (cumulative in {@link Totals}, in the second in a
   * {@link Sample}).
   */
  record Queue(long waiting, long admitted, long timeouts) {}

  private final class Shard {
    private final HeavyHitters<Partition> refused = new HeavyHitters<>(MONITORED);
    private final HeavyHitters<Partition> used = new HeavyHitters<>(MONITORED);

    synchronized void add(Partition p, boolean refusal) {
      used.add(p, 1);
      if (refusal) {
        refused.add(p, 1);
      }
    }

    synchronized void collect(Map<Partition, long[]> refusals, Map<Partition, long[]> uses) {
      merge(refused, refusals);
      merge(used, uses);
    }
  }

  private final List<Shard> shards = new CopyOnWriteArrayList<>();
  private final FastThreadLocal<Shard> local = new FastThreadLocal<>() {
    @Override
    protected Shard initialValue() {
      Shard s = new Shard();
      shards.add(s);
      return s;
    }
  };
  private final Deque<Sample> samples = new ArrayDeque<>(SECONDS);
  private Totals last;

  /** Counts one decision of {@code policy} for {@code key}; {@code refusal} when it was refused. */
  void decision(String policy, PartitionKey key, boolean refusal) {
    local.get().add(new Partition(policy, key), refusal);
  }

  /**
   * Takes a sample: the difference between {@code now} totals and the previous ones. The first
   * call only records the totals.
   */
  synchronized void sample(long epochMillis, Totals now) {
    Totals before = last;
    last = now;
    if (before == null) {
      return;
    }
    Map<String, Map<String, Long>> decisions = new TreeMap<>();
    now.decisions().forEach((policy, outcomes) -> {
      Map<String, Long> prior = before.decisions().getOrDefault(policy, Map.of());
      Map<String, Long> d = new TreeMap<>();
      outcomes.forEach((outcome, n) -> d.put(outcome, Math.max(0, n - prior.getOrDefault(outcome, 0L))));
      decisions.put(policy, d);
    });
    long[] buckets = new long[now.cumulativeBuckets().length];
    boolean sameBounds = Arrays.equals(now.bucketBounds(), before.bucketBounds());
    for (int i = 0; i < buckets.length; i++) {
      long cumulative = now.cumulativeBuckets()[i] - (sameBounds ? before.cumulativeBuckets()[i] : 0);
      long below = i == 0 ? 0 : now.cumulativeBuckets()[i - 1] - (sameBounds ? before.cumulativeBuckets()[i - 1] : 0);
      buckets[i] = Math.max(0, cumulative - below);
    }
    if (samples.size() == SECONDS) {
      samples.removeFirst();
    }
    Map<String, Queue> queues = new TreeMap<>();
    now.queues().forEach((policy, q) -> {
      Queue prior = before.queues().getOrDefault(policy, new Queue(0, 0, 0));
      queues.put(policy, new Queue(q.waiting(), Math.max(0, q.admitted() - prior.admitted()),
          Math.max(0, q.timeouts() - prior.timeouts())));
    });
    samples.addLast(new Sample(epochMillis, decisions, Math.max(0, now.latencyCount() - before.latencyCount()),
        Math.max(0, now.latencyTotalNanos() - before.latencyTotalNanos()), now.bucketBounds(), buckets, queues));
  }

  /** The samples kept, oldest first. */
  synchronized List<Sample> samples() {
    return List.copyOf(samples);
  }

  /** The {@code n} heaviest partitions by refusals, heaviest first. */
  List<Hitter> topRefused(int n) {
    Map<Partition, long[]> refusals = new HashMap<>();
    for (Shard s : shards) {
      s.collect(refusals, new HashMap<>());
    }
    return top(refusals, n);
  }

  /** The {@code n} heaviest partitions by use (every decision), heaviest first. */
  List<Hitter> topUsed(int n) {
    Map<Partition, long[]> uses = new HashMap<>();
    for (Shard s : shards) {
      s.collect(new HashMap<>(), uses);
    }
    return top(uses, n);
  }

  /**
   * The value below which {@code quantile} of a sample's latencies fall, as the upper bound of
   * the bucket that holds it (nanoseconds), or NaN for a second without decisions.
   */
  static double quantile(Sample s, double quantile) {
    long total = 0;
    for (long c : s.bucketCounts()) {
      total += c;
    }
    if (total == 0) {
      return Double.NaN;
    }
    long rank = (long) Math.ceil(quantile * total);
    long seen = 0;
    for (int i = 0; i < s.bucketCounts().length; i++) {
      seen += s.bucketCounts()[i];
      if (seen >= rank) {
        return s.bucketBounds()[i];
      }
    }
    return s.bucketBounds()[s.bucketBounds().length - 1];
  }

  private static void merge(HeavyHitters<Partition> from, Map<Partition, long[]> into) {
    for (HeavyHitters.Entry<Partition> e : from.entries()) {
      long[] ce = into.computeIfAbsent(e.key(), k -> new long[2]);
      ce[0] += e.count();
      ce[1] += e.error();
    }
  }

  private static List<Hitter> top(Map<Partition, long[]> merged, int n) {
    List<Hitter> all = new ArrayList<>(merged.size());
    merged.forEach((p, ce) -> all.add(new Hitter(p, ce[0], ce[1])));
    all.sort(Comparator.comparingLong(Hitter::count).reversed()
        .thenComparing(h -> h.partition().policy()).thenComparing(h -> h.partition().key()));
    return all.subList(0, Math.min(n, all.size()));
  }
}
