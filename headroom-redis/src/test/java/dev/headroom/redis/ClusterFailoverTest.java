package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Redis Cluster failover and resharding under load: three masters with one replica each on
 * loopback ports of the test's own. Fail-closed decisions spanning two slots run from several
 * threads while {@code redis-cli --cluster reshard} moves the slots of half their keys to another
 * master (MOVED and ASK), and then while that master is killed and its replica promoted. The test
 * measures, and logs, the time until Redis decides again, the refusals meanwhile and the
 * admissions the promoted replica does not count; it asserts that nothing hangs, that every
 * decision either succeeds or follows the failure policy, and that all or nothing holds across
 * slots through the resharding (both keys of every admitted request counted, none of a refused one).
 */
class ClusterFailoverTest {

  static final long Q = 1_000_000_000_000L;
  static final QuotaPolicy A = QuotaPolicy.builder("a").quota(Q).window(Duration.ofHours(1))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  static final QuotaPolicy B = QuotaPolicy.builder("b").quota(Q).window(Duration.ofHours(1))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  static final Duration DEADLINE = Duration.ofMillis(150);
  /** Slots moved by the resharding: the first ones of the first master, 0 to MOVED - 1. */
  static final int MOVED = 400;

  @Test
  void reshardAndMasterKilledMidLoad_decisionsKeepFlowing_allOrNothingHoldsWhileResharding() throws Exception {
    List<RedisServer> nodes = new ArrayList<>();
    try {
      List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
      for (int i = 0; i < 6; i++) {
        RedisServer node = RedisServer.launch("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", "1000",
            // A replica whose link to its master was busy with the load may otherwise judge its
            // data too old to take over (the default factor 10 times the node timeout).
            "--cluster-replica-validity-factor", "0");
        nodes.add(node);
        create.add("127.0.0.1:" + node.port);
      }
      create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
      Process p = new ProcessBuilder(create).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as(out).isZero();
      long created = System.nanoTime();
      SentinelFailoverTest.awaitTrue("cluster ok", 30, () -> nodes.stream()
          .allMatch(n -> Cli.run(n.port, "cluster", "info").contains("cluster_state:ok")));
      // Every replica holds its master's data before the load starts. A replica's first full sync
      // waits repl-diskless-sync-delay (5 s by default) before its master forks; until it has
      // loaded that copy it holds nothing, and with cluster-replica-validity-factor 0 it may still
      // be promoted, empty: a failover then loses every write of its master, in any deployment. On
      // a quiet machine the test used to reach the kill within those seconds, and the promoted
      // replica counted none of the admissions before it.
      SentinelFailoverTest.awaitTrue("every replica in sync", 60, () -> nodes.stream().allMatch(n -> {
        String info = Cli.info(n.port, "replication");
        return !info.contains("role:slave")
            || info.contains("master_link_status:up") && info.contains("master_sync_in_progress:0");
      }));
      System.out.println("[cluster] replicas in sync " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - created)
          + " ms after the cluster was created");
      RedisServer first = ownerOf(nodes, 0);
      RedisServer second = ownerOf(nodes, 16383);
      // Keys of policy a in the slots the resharding moves; policy b's key elsewhere.
      List<PartitionKey> movedKeys = new ArrayList<>();
      for (int i = 0; movedKeys.size() < 16; i++) {
        if (SlotHash.getSlot("m" + i) < MOVED) {
          movedKeys.add(PartitionKey.of("m" + i));
        }
      }
      PartitionKey other = null;
      for (int i = 0; other == null; i++) {
        if (SlotHash.getSlot("o" + i) > 6000 && SlotHash.getSlot("o" + i) < 10000) {
          other = PartitionKey.of("o" + i);
        }
      }
      List<RedisURI> uris = nodes.stream().map(n -> RedisURI.create(n.uri())).toList();

      // Phase 1: resharding mid-load.
      try (RedisStore store = RedisStore.builder().clusterUris(uris).keyPrefix("r:")
          .failurePolicy(FailurePolicy.FAIL_CLOSED).decisionDeadline(DEADLINE).build()) {
        Load load = new Load(store, movedKeys, other);
        load.start();
        try {
          SentinelFailoverTest.awaitTrue("load on the cluster", 20, () -> load.admitted.get() > 300);
          String reshard = runCli("--cluster", "reshard", "127.0.0.1:" + first.port,
              "--cluster-from", Cli.run(first.port, "cluster", "myid"),
              "--cluster-to", Cli.run(second.port, "cluster", "myid"),
              "--cluster-slots", Integer.toString(MOVED), "--cluster-yes");
          assertThat(ownerOf(nodes, 0)).as(reshard).isSameAs(second);
          long mark = load.admitted.get();
          SentinelFailoverTest.awaitTrue("decisions after the resharding", 30, () -> load.admitted.get() > mark + 300);
        } finally {
          load.stop();
        }
        System.out.println("[cluster reshard] admitted=" + load.admitted + " refused=" + load.refused
            + " slowestMs=" + load.slowest);
        assertThat(load.escaped.get()).as("no unexpected exception").isNull();
        assertThat(load.slowest.get()).as("slowest decision, ms").isLessThan(10_000);
        // All or nothing across slots, and nothing lost by the migration: each admitted request
        // counted once on both keys, no refused one on either.
        long countedA = 0;
        for (PartitionKey k : movedKeys) {
          countedA += counted(store, A, k);
        }
        assertThat(countedA).as("policy a, over the moved slots").isEqualTo(load.admitted.get());
        assertThat(counted(store, B, other)).as("policy b").isEqualTo(load.admitted.get());
      }

      // Phase 2: the master now owning the moved slots is killed mid-load.
      try (RedisStore store = RedisStore.builder().clusterUris(uris).keyPrefix("f:")
          .failurePolicy(FailurePolicy.FAIL_CLOSED).decisionDeadline(DEADLINE).build()) {
        Load load = new Load(store, movedKeys, other);
        load.start();
        long gap;
        try {
          SentinelFailoverTest.awaitTrue("load on the cluster", 20, () -> load.admitted.get() > 300);
          String secondId = Cli.run(second.port, "cluster", "myid").trim();
          load.killedAt.set(System.nanoTime());
          second.kill();
          try {
            try {
              SentinelFailoverTest.awaitTrue("a decision by Redis after the kill", 25, () -> load.afterKill.get() > 0);
            } catch (AssertionError notYet) {
              // Redis's own election, not Headroom, has stalled (it happened about once in eight
              // runs on a loaded machine): take over by hand, as an operator would, and say so,
              // so that the rest of the test still measures Headroom through the topology change.
              RedisServer replica = replicaOf(nodes, secondId);
              System.out.println("[cluster failover] no replica promoted within 25 s of the kill; "
                  + "CLUSTER FAILOVER TAKEOVER on " + replica.port + "\n" + logTails(nodes));
              Cli.run(replica.port, "cluster", "failover", "takeover");
              SentinelFailoverTest.awaitTrue("a decision by Redis after the kill", 50, () -> load.afterKill.get() > 0);
            }
          } catch (AssertionError e) {
            RedisServer alive = nodes.stream().filter(RedisServer::alive).findFirst().orElseThrow();
            throw new AssertionError(e.getMessage() + "; refusals by cause " + load.causes + "; cluster nodes:\n"
                + Cli.run(alive.port, "cluster", "nodes") + "\nlogs of the nodes:\n" + logTails(nodes), e);
          }
          long mark = load.afterKill.get();
          SentinelFailoverTest.awaitTrue("decisions flowing after the failover", 30,
              () -> load.afterKill.get() > mark + 300);
          gap = TimeUnit.NANOSECONDS.toMillis(load.firstAfterKill.get() - load.killedAt.get());
        } finally {
          load.stop();
        }
        long countedA = 0;
        for (PartitionKey k : movedKeys) {
          countedA += counted(store, A, k);
        }
        long countedB = counted(store, B, other);
        System.out.println("[cluster failover] gapMs=" + gap + " admitted=" + load.admitted
            + " refused=" + load.refused + " countedOnPromotedReplica=" + countedA
            + " lostAdmissions=" + (load.admitted.get() - countedA) + " countedOnOtherMaster=" + countedB
            + " slowestMs=" + load.slowest + " givenBackLate=" + store.givenBackLate() + " failures=" + store.failures()
            + " byCause=" + load.causes);
        assertThat(load.escaped.get()).as("no unexpected exception").isNull();
        assertThat(load.refused.get()).as("fail-closed refusals while the slots had no master").isPositive();
        assertThat(gap).as("kill to first Redis decision, ms").isLessThan(60_000);
        assertThat(load.slowest.get()).as("slowest decision, ms").isLessThan(10_000);
        // Admissions the promoted replica lost (asynchronous replication) make Redis count fewer
        // than were admitted; refused decisions whose commands Redis applied anyway, and that were
        // not given back, make it count more (README, "Sentinel and Cluster failover"), at most the
        // refused decisions.
        // With the replica in sync, what asynchronous replication can lose is what the master
        // admitted in the last moments before the kill (0 in every run so far): far below the
        // hundreds admitted before it, all of which a replica promoted before its first sync loses.
        assertThat(load.admitted.get() - countedA).as("lost admissions on the failed slots")
            .isLessThanOrEqualTo(100).isGreaterThanOrEqualTo(-load.refused.get());
        // The other slot's master never failed, and a reservation there that a refused request
        // did not use is given back, even when the give-back first meets CLUSTERDOWN (every node
        // refuses commands until the failed slots have an owner again): its count is every
        // admission, exactly.
        assertThat(countedB).as("policy b: admissions on the live master").isEqualTo(load.admitted.get());
      }
    } finally {
      for (RedisServer n : nodes) {
        n.close();
      }
    }
  }

  /**
   * Units of {@code policy} Redis counts on {@code key} (one probe adds and refunds one; a probe
   * that missed the deadline on a loaded machine is given back by the store, and tried again).
   */
  static long counted(RedisStore store, QuotaPolicy policy, PartitionKey key) throws InterruptedException {
    for (int attempt = 1; ; attempt++) {
      try {
        Decision d = store.acquire(List.of(Acquisition.of(policy, key)));
        store.refund(Acquisition.of(policy, key));
        return Q - d.outcomes().get(0).remaining() - 1;
      } catch (RedisUnavailableException e) {
        if (attempt == 20) {
          throw e;
        }
        Thread.sleep(250);
      }
    }
  }

  static RedisServer ownerOf(List<RedisServer> nodes, int slot) {
    String any = Cli.run(nodes.stream().filter(RedisServer::alive).findFirst().orElseThrow().port, "cluster", "nodes");
    for (String line : any.split("\n")) {
      String[] f = line.trim().split(" ");
      if (!f[2].contains("master") || f[2].contains("fail")) {
        continue;
      }
      for (int i = 8; i < f.length; i++) {
        String[] range = f[i].split("-");
        if (range[0].startsWith("[")) {
          continue;
        }
        int lo = Integer.parseInt(range[0]);
        int hi = range.length > 1 ? Integer.parseInt(range[1]) : lo;
        if (slot >= lo && slot <= hi) {
          int port = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
          return nodes.stream().filter(n -> n.port == port).findFirst().orElseThrow();
        }
      }
    }
    throw new AssertionError("no master for slot " + slot + ": " + any);
  }

  /** The live node replicating the master {@code masterId}. */
  static RedisServer replicaOf(List<RedisServer> nodes, String masterId) {
    for (RedisServer n : nodes) {
      if (n.alive() && Cli.run(n.port, "cluster", "nodes").lines()
          .anyMatch(l -> l.contains("myself,slave") && l.contains(masterId))) {
        return n;
      }
    }
    throw new AssertionError("no live replica of " + masterId);
  }

  /** The last lines of each node's log, for a failure message. */
  static String logTails(List<RedisServer> nodes) {
    StringBuilder b = new StringBuilder();
    for (RedisServer n : nodes) {
      try {
        List<String> lines = java.nio.file.Files.readAllLines(n.dir.resolve("redis.log"));
        b.append("-- ").append(n.port).append('\n');
        lines.subList(Math.max(0, lines.size() - 15), lines.size()).forEach(l -> b.append(l).append('\n'));
      } catch (java.io.IOException e) {
        b.append("-- ").append(n.port).append(": ").append(e).append('\n');
      }
    }
    return b.toString();
  }

  static String runCli(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("redis-cli"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(90, TimeUnit.SECONDS)).as(out).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  /** Fail-closed decisions on four threads, each on one moved key and the other slot's key. */
  static final class Load {
    final AtomicLong admitted = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    final AtomicLong slowest = new AtomicLong();
    final AtomicLong killedAt = new AtomicLong(Long.MAX_VALUE);
    final AtomicLong firstAfterKill = new AtomicLong(Long.MAX_VALUE);
    final AtomicLong afterKill = new AtomicLong();
    final AtomicReference<Throwable> escaped = new AtomicReference<>();
    private final List<Thread> threads = new ArrayList<>();
    final java.util.concurrent.ConcurrentHashMap<String, Integer> causes = new java.util.concurrent.ConcurrentHashMap<>();
    /**
     * Stops the threads between decisions: an interrupted decision is refused at once and what
     * Redis applied for it is given back when its reply comes, possibly after the counts are read.
     */
    private volatile boolean stopped;

    Load(RedisStore store, List<PartitionKey> keys, PartitionKey other) {
      long stopAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(100);
      for (int t = 0; t < 4; t++) {
        threads.add(new Thread(() -> {
          while (!stopped && System.nanoTime() < stopAt) {
            PartitionKey k = keys.get(ThreadLocalRandom.current().nextInt(keys.size()));
            long t0 = System.nanoTime();
            try {
              Decision d = store.acquire(List.of(Acquisition.of(A, k), Acquisition.of(B, other)));
              if (!d.allowed()) {
                throw new AssertionError("refused by Redis: " + d);
              }
              admitted.incrementAndGet();
              if (t0 > killedAt.get()) {
                firstAfterKill.accumulateAndGet(System.nanoTime(), Math::min);
                afterKill.incrementAndGet();
              }
            } catch (RedisUnavailableException | StoreOverloadedException e) {
              // Redis down (the failure policy refuses), or this process too loaded to get the
              // command written within the store's write timeout (refused whatever the policy:
              // StoreOverloadedException), as a shared CI machine can be while Redis reshards.
              refused.incrementAndGet();
              causes.merge(e instanceof StoreOverloadedException ? "overloaded"
                  : String.valueOf(e.getCause()).replaceAll("[0-9]+", "N"), 1, Integer::sum);
              // A refused caller comes back a millisecond later, as a client would, rather than
              // spinning: four threads retrying a refusal that takes microseconds leave the
              // Redis nodes on two cores too little time to elect the new master.
              LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            } catch (Throwable e) {
              escaped.compareAndSet(null, e);
            }
            slowest.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), Math::max);
          }
        }));
      }
    }

    void start() {
      threads.forEach(Thread::start);
    }

    void stop() throws InterruptedException {
      stopped = true;
      for (Thread t : threads) {
        t.join(15_000);
      }
    }
  }
}
