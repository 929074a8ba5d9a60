package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Redis Sentinel: one master, one replica and three Sentinels on loopback ports of the test's
 * own; stores reach them by a {@code redis-sentinel://} URI (Lettuce's form). Decisions run from
 * several threads under each failure policy, the master is killed, and the test measures, and
 * logs, the time until Redis decides again, what each policy did meanwhile, and the admissions
 * Redis forgot because the replica had not received their writes (the over-admission bound of
 * headroom-redis/README.md, "Sentinel and Cluster failover"), and that a store asking for replica
 * acknowledgements ({@code replicaAcknowledgements}) loses none of the admissions it kept. Bounds
 * asserted are loose: the machine is shared.
 */
class SentinelFailoverTest {

  static final long Q = 1_000_000_000_000L;
  static final QuotaPolicy BIG = QuotaPolicy.builder("big").quota(Q).window(Duration.ofHours(1))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  static final PartitionKey K = PartitionKey.of("k");
  static final Duration DEADLINE = Duration.ofMillis(150);

  @Test
  void masterKilledMidLoad_sentinelPromotesReplica_decisionsReturnToRedis() throws Exception {
    List<RedisServer> servers = new ArrayList<>();
    try {
      RedisServer master = RedisServer.launch();
      servers.add(master);
      RedisServer replica = RedisServer.launch("--replicaof", "127.0.0.1", Integer.toString(master.port));
      servers.add(replica);
      List<RedisServer> sentinels = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        RedisServer s = RedisServer.sentinel("hr", master.port);
        servers.add(s);
        sentinels.add(s);
      }
      awaitTrue("replica in sync", 20, () -> Cli.info(replica.port, "replication").contains("master_link_status:up"));
      awaitTrue("sentinels see each other and the replica", 30, () -> sentinels.stream().allMatch(s ->
          Cli.run(s.port, "sentinel", "ckquorum", "hr").startsWith("OK 3")
              && Cli.run(s.port, "sentinel", "replicas", "hr").contains(Integer.toString(replica.port))));
      String uri = "redis-sentinel://" + String.join(",",
          sentinels.stream().map(s -> "127.0.0.1:" + s.port).toList()) + "/?sentinelMasterId=hr";

      Failover result = runThroughFailover(uri, master, replica, sentinels);
      System.out.println("[sentinel failover] " + result);
      assertThat(result.escaped).as("no unexpected exception").isNull();
      assertThat(result.gapMillis).as("kill to first Redis decision, ms").isPositive().isLessThan(60_000);
      assertThat(result.afterFailover).as("Redis decisions after the failover").isGreaterThan(100);
      assertThat(result.closedRefused).as("fail-closed refusals while no master").isPositive();
      assertThat(result.openAdmittedUncounted).as("fail-open admissions while no master").isPositive();
      assertThat(result.fallbackLocal).as("fallback decisions while no master").isPositive();
      // Fewer counted than admitted: admissions the replica had not received. More counted than
      // admitted: a fail-closed decision that missed its deadline (refused) while its command was
      // in flight, which Lettuce, delivering at least once across reconnects, sent again to the new
      // master (under-admission, bounded by the refusals; headroom-redis README, "Sentinel and
      // Cluster failover"). Seen once in CI: -1.
      assertThat(result.lostAdmissions).as("admissions the new master does not count")
          .isBetween(-result.closedRefused, 10_000L);
      assertThat(result.ackedKept).as("admissions kept with replica acknowledgements").isGreaterThan(100);
      assertThat(result.ackedKept - result.ackedCounted)
          .as("admissions kept with replica acknowledgements that the new master does not count").isLessThanOrEqualTo(0);
      assertThat(result.slowestMillis).as("slowest decision, ms").isLessThan(10_000);
    } finally {
      for (RedisServer s : servers) {
        s.close();
      }
    }
  }

  @Test
  void sentinelUriWithoutMasterName_isRefusedNamingTheFieldAndTheForm() {
    assertThatThrownBy(() -> RedisStore.builder().uri("redis-sentinel://127.0.0.1:26379,127.0.0.1:26380"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("uri: expected")
        .hasMessageContaining("sentinelMasterId")
        .hasMessageContaining("redis-sentinel://127.0.0.1:26379/?sentinelMasterId=");
    // Lettuce's builder makes such a URI without complaint; the store refuses it when given.
    RedisURI noName = RedisURI.builder().withSentinel("127.0.0.1", 26379).build();
    assertThatThrownBy(() -> RedisStore.builder().uri(noName))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("uri: expected the Sentinel master's name")
        .hasMessageContaining("without sentinelMasterId");
  }

  /** What one run through a failover measured. */
  record Failover(long gapMillis, long closedRefused, long openAdmittedUncounted, long fallbackLocal,
      long closedAdmitted, long countedByNewMaster, long lostAdmissions, long afterFailover, long slowestMillis,
      long ackedKept, long ackedCounted, long ackedUnacknowledged, Throwable escaped) {
  }

  static Failover runThroughFailover(String uri, RedisServer master, RedisServer replica,
      List<RedisServer> sentinels) throws Exception {
    RedisStore closed = RedisStore.builder().uri(uri).keyPrefix("closed:").failurePolicy(FailurePolicy.FAIL_CLOSED)
        .decisionDeadline(DEADLINE).build();
    RedisStore open = RedisStore.builder().uri(uri).keyPrefix("open:").failurePolicy(FailurePolicy.FAIL_OPEN)
        .decisionDeadline(DEADLINE).build();
    RedisStore fallback = RedisStore.builder().uri(uri).keyPrefix("fallback:").failurePolicy(FailurePolicy.FALLBACK)
        .decisionDeadline(DEADLINE).build();
    // Fail-closed, keeping only admissions the replica acknowledged: the promoted replica has
    // every one of them. (After the failover the new master has no replica: all are refused.)
    RedisStore acked = RedisStore.builder().uri(uri).keyPrefix("acked:").failurePolicy(FailurePolicy.FAIL_CLOSED)
        .decisionDeadline(DEADLINE).replicaAcknowledgements(1, Duration.ofMillis(50)).build();
    try {
      AtomicLong ackedKept = new AtomicLong();
      AtomicLong killedAt = new AtomicLong(Long.MAX_VALUE);
      AtomicLong firstRedisAfterKill = new AtomicLong(Long.MAX_VALUE);
      AtomicLong closedAdmitted = new AtomicLong();
      AtomicLong closedRefused = new AtomicLong();
      AtomicLong openUncounted = new AtomicLong();
      AtomicLong afterFailover = new AtomicLong();
      AtomicLong slowest = new AtomicLong();
      AtomicReference<Throwable> escaped = new AtomicReference<>();
      long stopAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      List<Thread> load = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        load.add(new Thread(() -> {
          while (!Thread.currentThread().isInterrupted() && System.nanoTime() < stopAt) {
            long t0 = System.nanoTime();
            try {
              closed.acquire(List.of(Acquisition.of(BIG, K)));
              closedAdmitted.incrementAndGet();
              if (t0 > killedAt.get()) {
                firstRedisAfterKill.accumulateAndGet(System.nanoTime(), Math::min);
                afterFailover.incrementAndGet();
              }
            } catch (RedisUnavailableException e) {
              closedRefused.incrementAndGet();
            } catch (Throwable e) {
              escaped.compareAndSet(null, e);
            }
            slowest.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), Math::max);
          }
        }));
        load.add(new Thread(() -> {
          while (!Thread.currentThread().isInterrupted() && System.nanoTime() < stopAt) {
            try {
              Decision d = open.acquire(List.of(Acquisition.of(BIG, K)));
              if (d.allowed() && d.outcomes().get(0).remaining() == Q) {
                openUncounted.incrementAndGet(); // r = q: admitted by the policy, not by Redis
              }
            } catch (Throwable e) {
              escaped.compareAndSet(null, e);
            }
          }
        }));
        load.add(new Thread(() -> {
          while (!Thread.currentThread().isInterrupted() && System.nanoTime() < stopAt) {
            try {
              if (acked.acquire(List.of(Acquisition.of(BIG, K))).allowed()) {
                ackedKept.incrementAndGet();
              }
            } catch (RedisUnavailableException e) {
              // not acknowledged, or no master: refused
            } catch (Throwable e) {
              escaped.compareAndSet(null, e);
            }
          }
        }));
        load.add(new Thread(() -> {
          while (!Thread.currentThread().isInterrupted() && System.nanoTime() < stopAt) {
            try {
              fallback.acquire(List.of(Acquisition.of(BIG, K)));
            } catch (Throwable e) {
              escaped.compareAndSet(null, e);
            }
          }
        }));
      }
      load.forEach(Thread::start);
      long fallbackFailuresBefore;
      try {
        awaitTrue("load on Redis", 20, () -> closedAdmitted.get() > 500 && ackedKept.get() > 100);
        fallbackFailuresBefore = fallback.failures();
        killedAt.set(System.nanoTime());
        master.kill();
        awaitTrue("a decision by Redis after the kill", 75, () -> afterFailover.get() > 0);
        long mark = afterFailover.get();
        awaitTrue("decisions flowing on the new master", 20, () -> afterFailover.get() > mark + 200);
      } finally {
        load.forEach(Thread::interrupt);
        for (Thread t : load) {
          t.join(15_000);
        }
      }
      String promoted = Cli.run(sentinels.get(0).port, "sentinel", "get-master-addr-by-name", "hr");
      assertThat(promoted).as("Sentinel promoted the replica").contains(Integer.toString(replica.port));
      // What the new master counts for the fail-closed store: every admission it acknowledged,
      // minus those whose writes never reached the replica; this probe adds one.
      Decision probe = closed.acquire(List.of(Acquisition.of(BIG, K)));
      long counted = Q - probe.outcomes().get(0).remaining() - 1;
      long gap = TimeUnit.NANOSECONDS.toMillis(firstRedisAfterKill.get() - killedAt.get());
      long ackedCounted;
      try (RedisStore reader = RedisStore.builder().uri(uri).keyPrefix("acked:").build()) {
        // cost 0: reads the count without adding to it
        ackedCounted = Q - reader.acquire(List.of(Acquisition.of(BIG, K, 0))).outcomes().get(0).remaining();
      }
      return new Failover(gap, closedRefused.get(), openUncounted.get(), fallback.failures() - fallbackFailuresBefore,
          closedAdmitted.get(), counted, closedAdmitted.get() - counted, afterFailover.get(), slowest.get(),
          ackedKept.get(), ackedCounted, acked.replicaUnacknowledged(), escaped.get());
    } finally {
      acked.close();
      closed.close();
      open.close();
      fallback.close();
    }
  }

  interface Check {
    boolean ok() throws Exception;
  }

  static void awaitTrue(String what, int seconds, Check check) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!check.ok()) {
      if (System.nanoTime() > until) {
        throw new AssertionError("not within " + seconds + " s: " + what);
      }
      Thread.sleep(50);
    }
  }
}
