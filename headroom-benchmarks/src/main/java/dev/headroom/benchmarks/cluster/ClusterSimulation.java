package dev.headroom.benchmarks.cluster;

import dev.headroom.redis.Leasing;
import dev.headroom.redis.internal.SliceSize;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Planning past one machine: a discrete-event simulation of 100 to 1,000 gateway nodes sharing a
 * Redis Cluster, with and without quota leasing ({@code dev.headroom.redis.LeasingStore}).
 *
 * <h2>Model</h2>
 * Requests arrive as one Poisson process of {@code rate} per second for {@code seconds}; each goes
 * to a node chosen uniformly among the live ones (a load balancer) and asks one key drawn from a
 * Zipf distribution (exponent {@code s}) over {@code keys} keys. Every key has the same fixed-window
 * policy ({@code q} per second). Redis applies each command atomically at the instant it is sent;
 * network latency is not modelled (slices are therefore never in flight, which flatters neither
 * mode: both are charged commands, not time). Halfway through, node 0 crashes: the slices it holds
 * are lost and its traffic moves to the other nodes.
 *
 * <p>Without leasing every request is one command. With leasing each node follows the rules of
 * {@code LeasingStore}: the first request of a key on a node is central; then a slice of
 * {@link SliceSize#of} units (the same function the store calls, with the store's defaults:
 * target 100 ms, max fraction 0.05) is taken when larger than 1; a slice expires at its window's end
 * or after maxHold (1 s); keys quiet for 500 ms return their slice (swept every 250 ms); a returned
 * rest within 0.5 s of the window's end is dropped instead; a central refusal is repeated locally
 * until the window ends. Every take, central decision and return is one Redis command.
 *
 * <h2>Reported</h2>
 * Redis commands per second and per 1,000 decisions; over-admission (admissions beyond {@code q}
 * in any key's window, which must be 0 for a fixed window); admitted against the ideal
 * {@code sum over key-windows of min(demand, q)}; fairness on the hottest key as Jain's index of
 * each node's admitted share of its demand, {@code (sum x)^2 / (n sum x^2)} with {@code x_i =
 * admitted_i / demanded_i} (1 is perfectly fair); units lost in the crash; and the shards the
 * command rate needs: keys are placed on shards by a hash (as Cluster's CRC16 slots are), and the
 * count is the smallest whose busiest shard stays under {@link #SHARD_CAPACITY} commands per second.
 *
 * <p>Run: {@code java -cp headroom-benchmarks/target/benchmarks.jar
 * dev.headroom.benchmarks.cluster.ClusterSimulation [outputDir]}; deterministic for a seed.
 */
public final class ClusterSimulation {

  /**
   * Commands per second one Redis shard (one core) serves: 1 / 7.2 µs, the server CPU of one
   * token-bucket {@code FCALL} measured in benchmarks/HISTORY.md ("Redis store", "What changed").
   */
  static final double SHARD_CAPACITY = 1e6 / 7.2;

  static final long SEED = 17;
  static final double RATE = 1_000_000;
  static final double SECONDS = 3;
  static final int KEYS = 100_000;
  static final double ZIPF_S = 1.0;
  static final long QUOTA = 2_000;
  static final long WINDOW_NANOS = 1_000_000_000L;
  static final long TARGET_NANOS = Leasing.DEFAULT_TARGET_INTERVAL.toNanos();
  static final double MAX_FRACTION = Leasing.DEFAULT_MAX_FRACTION;
  static final long MAX_HOLD_NANOS = Leasing.DEFAULT_MAX_HOLD.toNanos();
  static final long IDLE_NANOS = Leasing.DEFAULT_IDLE_RETURN.toNanos();
  static final long SWEEP_NANOS = Math.min(IDLE_NANOS, MAX_HOLD_NANOS) / 2;
  static final long RETURN_GUARD_NANOS = 500_000_000L;
  static final int MAX_KEYS_PER_NODE = Leasing.DEFAULT_MAX_KEYS;

  private ClusterSimulation() {}

  /** One run's figures. */
  record Result(int nodes, boolean leasing, long decisions, long commands, long admitted, long ideal,
      long overAdmitted, double jainHot, long lostInCrash, int shards, double hottestKeyCommands) {
    double commandsPerSecond() {
      return commands / SECONDS;
    }
  }

  /** What one node keeps for one key (mirrors {@code LeasingStore}'s per-partition state). */
  static final class NodeKey {
    long unspent;
    boolean seen;
    long global;
    long knownAt;
    long windowEnd;
    long expiresAt = Long.MIN_VALUE;
    long heldWindowEnd = Long.MIN_VALUE;
    long lastTakeAt;
    long askedSinceTake;
    double rate = Double.NaN;
    long lastUse;
    long refusedUntil = Long.MIN_VALUE;

    double estimatedRate(long now) {
      long elapsed = Math.max(1_000_000L, now - lastTakeAt); // LeasingStore.MIN_RATE_SPAN_NANOS
      double observed = askedSinceTake * 1e9 / elapsed;
      return Double.isNaN(rate) ? observed : (rate + observed) / 2;
    }

    long knownGlobal(long now) {
      return now >= windowEnd ? QUOTA : global;
    }

    void learn(long remaining, long now, long end) {
      if (!seen) {
        lastTakeAt = now;
      }
      seen = true;
      global = remaining;
      knownAt = now;
      windowEnd = end;
    }
  }

  /** The cluster's count for every key: current window index and units counted in it. */
  static final class Central {
    final long[] window = new long[KEYS];
    final long[] count = new long[KEYS];
    long commands;
    final long[] commandsPerKey = new long[KEYS];

    long remaining(int key, long now) {
      roll(key, now);
      return QUOTA - count[key];
    }

    private void roll(int key, long now) {
      long w = now / WINDOW_NANOS;
      if (window[key] != w) {
        window[key] = w;
        count[key] = 0;
      }
    }

    /** One command: take {@code n} units if they are all there. */
    boolean take(int key, long n, long now) {
      commands++;
      commandsPerKey[key]++;
      roll(key, now);
      if (count[key] + n > QUOTA) {
        return false;
      }
      count[key] += n;
      return true;
    }

    /** One command: give back units of the current window. */
    void giveBack(int key, long n, long now) {
      commands++;
      commandsPerKey[key]++;
      roll(key, now);
      count[key] = Math.max(0, count[key] - n);
    }
  }

  static Result run(int nodes, boolean leasing) {
    SplittableRandom random = new SplittableRandom(SEED);
    double[] cdf = zipfCdf(KEYS, ZIPF_S);
    Central central = new Central();
    List<Map<Integer, NodeKey>> state = new ArrayList<>(nodes);
    for (int i = 0; i < nodes; i++) {
      state.add(new HashMap<>());
    }
    boolean[] alive = new boolean[nodes];
    Arrays.fill(alive, true);
    long[] hotDemand = new long[nodes];
    long[] hotAdmitted = new long[nodes];
    // admissions and demand per key in the current window, for over-admission and the ideal
    long[] admittedWindow = new long[KEYS];
    long[] demandWindow = new long[KEYS];
    long[] windowOf = new long[KEYS];
    long ideal = 0;
    long admitted = 0;
    long overAdmitted = 0;
    long decisions = 0;
    long lost = 0;
    long end = (long) (SECONDS * 1e9);
    long crashAt = end / 2;
    boolean crashed = false;
    long nextSweep = SWEEP_NANOS;
    double meanGapNanos = 1e9 / RATE;
    long now = 0;
    while (true) {
      now += (long) Math.ceil(-Math.log(1 - random.nextDouble()) * meanGapNanos);
      if (now >= end) {
        break;
      }
      if (leasing) {
        while (nextSweep <= now) {
          for (int n = 0; n < nodes; n++) {
            sweep(state.get(n), central, nextSweep);
          }
          nextSweep += SWEEP_NANOS;
        }
      }
      if (!crashed && now >= crashAt) {
        crashed = true;
        alive[0] = false;
        for (NodeKey s : state.get(0).values()) {
          lost += s.unspent;
        }
        state.get(0).clear();
      }
      int node = crashed ? 1 + random.nextInt(nodes - 1) : random.nextInt(nodes);
      int key = zipf(cdf, random.nextDouble());
      long w = now / WINDOW_NANOS;
      if (windowOf[key] != w) {
        ideal += Math.min(demandWindow[key], QUOTA);
        windowOf[key] = w;
        demandWindow[key] = 0;
        admittedWindow[key] = 0;
      }
      demandWindow[key]++;
      decisions++;
      boolean ok = leasing ? leased(state.get(node), central, key, now) : central.take(key, 1, now);
      if (key == 0) {
        hotDemand[node]++;
        if (ok) {
          hotAdmitted[node]++;
        }
      }
      if (ok) {
        admitted++;
        if (++admittedWindow[key] > QUOTA) {
          overAdmitted++;
        }
      }
    }
    for (int k = 0; k < KEYS; k++) {
      ideal += Math.min(demandWindow[k], QUOTA);
    }
    double sum = 0;
    double sumSq = 0;
    int counted = 0;
    for (int n = 0; n < nodes; n++) {
      if (hotDemand[n] > 0) {
        double x = (double) hotAdmitted[n] / hotDemand[n];
        sum += x;
        sumSq += x * x;
        counted++;
      }
    }
    double jain = sumSq == 0 ? 1 : sum * sum / (counted * sumSq);
    long hottest = 0;
    for (long c : central.commandsPerKey) {
      hottest = Math.max(hottest, c);
    }
    return new Result(nodes, leasing, decisions, central.commands, admitted, ideal, overAdmitted, jain, lost,
        shardsNeeded(central.commandsPerKey, 1), hottest / SECONDS);
  }

  /** One decision on a node with leasing; true when admitted. */
  static boolean leased(Map<Integer, NodeKey> node, Central central, int key, long now) {
    NodeKey s = node.get(key);
    if (s == null) {
      if (node.size() >= MAX_KEYS_PER_NODE) {
        return central.take(key, 1, now);
      }
      s = new NodeKey();
      node.put(key, s);
    }
    s.lastUse = now;
    s.askedSinceTake++;
    if (s.unspent > 0 && now >= s.expiresAt) {
      if (now + RETURN_GUARD_NANOS < s.heldWindowEnd) {
        central.giveBack(key, s.unspent, now);
      }
      s.unspent = 0;
    }
    long windowEnd = (now / WINDOW_NANOS + 1) * WINDOW_NANOS;
    if (s.unspent >= 1) {
      s.unspent--;
      return true;
    }
    if (now < s.refusedUntil) {
      return false;
    }
    if (s.seen) {
      long slice = SliceSize.of(s.estimatedRate(now), TARGET_NANOS, QUOTA, MAX_FRACTION, s.knownGlobal(now));
      if (slice > 1) {
        s.rate = s.estimatedRate(now);
        s.lastTakeAt = now;
        s.askedSinceTake = 0;
        boolean taken = central.take(key, slice, now);
        s.learn(central.remaining(key, now), now, windowEnd);
        if (taken) {
          s.unspent = slice - 1;
          s.heldWindowEnd = windowEnd;
          s.expiresAt = Math.min(windowEnd, now + MAX_HOLD_NANOS);
          return true;
        }
      }
    }
    boolean ok = central.take(key, 1, now);
    s.learn(central.remaining(key, now), now, windowEnd);
    if (!ok) {
      s.refusedUntil = windowEnd;
    }
    return ok;
  }

  static void sweep(Map<Integer, NodeKey> node, Central central, long now) {
    Iterator<Map.Entry<Integer, NodeKey>> it = node.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<Integer, NodeKey> e = it.next();
      NodeKey s = e.getValue();
      boolean quiet = now - s.lastUse >= IDLE_NANOS;
      if (!quiet && now < s.expiresAt) {
        continue;
      }
      if (s.unspent > 0 && now + RETURN_GUARD_NANOS < s.heldWindowEnd) {
        central.giveBack(e.getKey(), s.unspent, now);
      }
      s.unspent = 0;
      if (quiet) {
        it.remove();
      }
    }
  }

  /**
   * The fewest shards whose busiest one stays under capacity, keys placed by a hash; 0 when the
   * hottest key alone exceeds one shard (no shard count helps).
   */
  static int shardsNeeded(long[] commandsPerKey, double scale) {
    double hottest = 0;
    double total = 0;
    for (long c : commandsPerKey) {
      hottest = Math.max(hottest, c * scale / SECONDS);
      total += c * scale / SECONDS;
    }
    if (hottest > SHARD_CAPACITY) {
      return 0;
    }
    for (int shards = Math.max(1, (int) Math.ceil(total / SHARD_CAPACITY)); ; shards++) {
      double[] load = new double[shards];
      double max = 0;
      for (int k = 0; k < commandsPerKey.length; k++) {
        int shard = Math.floorMod(mix(k), shards);
        load[shard] += commandsPerKey[k] * scale / SECONDS;
        max = Math.max(max, load[shard]);
      }
      if (max <= SHARD_CAPACITY) {
        return shards;
      }
    }
  }

  private static int mix(int k) {
    int h = k * 0x9E3779B9;
    return h ^ (h >>> 16);
  }

  static double[] zipfCdf(int n, double s) {
    double[] cdf = new double[n];
    double sum = 0;
    for (int i = 0; i < n; i++) {
      sum += 1 / Math.pow(i + 1, s);
      cdf[i] = sum;
    }
    for (int i = 0; i < n; i++) {
      cdf[i] /= sum;
    }
    return cdf;
  }

  static int zipf(double[] cdf, double u) {
    int lo = 0;
    int hi = cdf.length - 1;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (cdf[mid] < u) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  public static void main(String[] args) throws IOException {
    Path out = Path.of(args.length > 0 ? args[0] : "headroom-benchmarks");
    int[] sizes = {100, 200, 500, 1000};
    List<Result> results = new ArrayList<>();
    for (int nodes : sizes) {
      results.add(run(nodes, false));
      results.add(run(nodes, true));
    }
    StringBuilder md = new StringBuilder();
    md.append(String.format(Locale.ROOT, "Seed %d; %,.0f decisions/s for %.0f s; %,d keys, Zipf s = %.1f; fixed window "
        + "q = %,d per second per key; node 0 crashes at %.1f s; shard capacity %,.0f commands/s (7.2 µs per FCALL).%n%n",
        SEED, RATE, SECONDS, KEYS, ZIPF_S, QUOTA, SECONDS / 2, SHARD_CAPACITY));
    md.append("| nodes | leasing | Redis commands/s | commands per 1,000 decisions | hottest key commands/s "
        + "| shards needed | over-admitted | admitted / ideal | Jain (hot key) | units lost in crash |\n");
    md.append("|---|---|---|---|---|---|---|---|---|---|\n");
    for (Result r : results) {
      md.append(String.format(Locale.ROOT, "| %d | %s | %,.0f | %.1f | %,.0f | %s | %d | %.4f | %.4f | %d |%n",
          r.nodes(), r.leasing() ? "yes" : "no", r.commandsPerSecond(), 1000.0 * r.commands() / r.decisions(),
          r.hottestKeyCommands(), r.shards() == 0 ? "none suffices" : Integer.toString(r.shards()),
          r.overAdmitted(), (double) r.admitted() / r.ideal(), r.jainHot(), r.lostInCrash()));
    }
    System.out.print(md);
    Files.createDirectories(out);
    Files.writeString(out.resolve("cluster-simulation.md"), md.toString());
    chart(results, sizes, out.resolve("cluster-simulation.png"));
  }

  private static void chart(List<Result> results, int[] sizes, Path file) throws IOException {
    XYChart chart = new XYChartBuilder().width(900).height(560)
        .title(String.format(Locale.ROOT, "Redis commands/s for %,.0f decisions/s (Zipf keys, q = %,d/s)", RATE, QUOTA))
        .xAxisTitle("gateway nodes").yAxisTitle("Redis commands per second").build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
    chart.getStyler().setYAxisMin(0.0);
    chart.getStyler().setYAxisDecimalPattern("#,###");
    chart.getStyler().setMarkerSize(8);
    double[] x = new double[sizes.length];
    double[] without = new double[sizes.length];
    double[] with = new double[sizes.length];
    double[] capacity = new double[sizes.length];
    for (int i = 0; i < sizes.length; i++) {
      x[i] = sizes[i];
      capacity[i] = SHARD_CAPACITY;
      for (Result r : results) {
        if (r.nodes() == sizes[i]) {
          if (r.leasing()) {
            with[i] = r.commandsPerSecond();
          } else {
            without[i] = r.commandsPerSecond();
          }
        }
      }
    }
    chart.addSeries("without leasing", x, without).setMarker(SeriesMarkers.CIRCLE);
    chart.addSeries("with leasing", x, with).setMarker(SeriesMarkers.DIAMOND);
    chart.addSeries("one shard's capacity", x, capacity).setMarker(SeriesMarkers.NONE);

    XYChart shards = new XYChartBuilder().width(900).height(560)
        .title("Shards needed (busiest shard under one core) and hot-key fairness")
        .xAxisTitle("gateway nodes").yAxisTitle("shards / Jain's index x 10").build();
    shards.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
    shards.getStyler().setMarkerSize(8);
    shards.getStyler().setYAxisMin(0.0);
    shards.getStyler().setYAxisMax(18.0);
    double[] shardsWithout = new double[sizes.length];
    double[] shardsWith = new double[sizes.length];
    double[] jainWithout = new double[sizes.length];
    double[] jainWith = new double[sizes.length];
    for (int i = 0; i < sizes.length; i++) {
      for (Result r : results) {
        if (r.nodes() == sizes[i]) {
          (r.leasing() ? shardsWith : shardsWithout)[i] = r.shards();
          (r.leasing() ? jainWith : jainWithout)[i] = 10 * r.jainHot();
        }
      }
    }
    shards.addSeries("shards, without leasing", x, shardsWithout).setMarker(SeriesMarkers.CIRCLE);
    shards.addSeries("shards, with leasing", x, shardsWith).setMarker(SeriesMarkers.DIAMOND);
    shards.addSeries("Jain x 10, without leasing", x, jainWithout).setMarker(SeriesMarkers.SQUARE);
    shards.addSeries("Jain x 10, with leasing", x, jainWith).setMarker(SeriesMarkers.TRIANGLE_UP);
    BitmapEncoder.saveBitmap(List.of(chart, shards), 1, 2, file.toString(), BitmapEncoder.BitmapFormat.PNG);
  }
}
