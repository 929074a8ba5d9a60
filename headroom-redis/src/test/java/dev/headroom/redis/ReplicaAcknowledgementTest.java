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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@code RedisStore.Builder.replicaAcknowledgements}: an admission is kept only once the master's
 * replicas acknowledged its write (Redis {@code WAIT}), which closes the over-admission of a
 * failover to a replica that lacked the last writes (headroom-redis README, "Sentinel and Cluster
 * failover"). A master and a replica ({@code --replicaof}) of the test's own on loopback.
 */
class ReplicaAcknowledgementTest {

  static final long Q = 1_000_000_000_000L;
  static final QuotaPolicy BIG = QuotaPolicy.builder("big").quota(Q).window(Duration.ofHours(1))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  static final QuotaPolicy ONE = QuotaPolicy.builder("one").quota(1).window(Duration.ofHours(1))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  static final PartitionKey K = PartitionKey.of("k");
  static final Duration TIMEOUT = Duration.ofMillis(50);
  static final Duration DEADLINE = Duration.ofMillis(500);

  private static RedisStore store(RedisServer master, String prefix, FailurePolicy policy) {
    return RedisStore.builder().uri(master.uri()).keyPrefix(prefix).failurePolicy(policy).decisionDeadline(DEADLINE)
        .replicaAcknowledgements(1, TIMEOUT).build();
  }

  /** The admissions a server counts on {@link #BIG} under a prefix: a probe of cost 0, which adds none. */
  static long counted(RedisServer server, String prefix) {
    try (RedisStore probe = RedisStore.builder().uri(server.uri()).keyPrefix(prefix).build()) {
      return Q - probe.acquire(List.of(Acquisition.of(BIG, K, 0))).outcomes().get(0).remaining();
    }
  }

  private static RedisServer replicaOf(RedisServer master) throws Exception {
    RedisServer replica = RedisServer.launch("--replicaof", "127.0.0.1", Integer.toString(master.port));
    SentinelFailoverTest.awaitTrue("replica in sync", 20,
        () -> Cli.info(replica.port, "replication").contains("master_link_status:up"));
    return replica;
  }

  /**
   * (a) Blocking and asynchronous callers on four threads, coalesced into batches; the master is
   * killed the moment the load stops, with no time for replication to catch up, and the replica,
   * promoted by hand, counts exactly the admissions the store kept.
   */
  @Test
  void everyAdmissionKept_isOnTheReplica_whenTheMasterDiesTheMomentTheLoadStops() throws Exception {
    try (RedisServer master = RedisServer.launch(); RedisServer replica = replicaOf(master)) {
      AtomicLong admitted = new AtomicLong();
      AtomicReference<Throwable> escaped = new AtomicReference<>();
      try (RedisStore store = store(master, "kept:", FailurePolicy.FAIL_CLOSED)) {
        List<Thread> load = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          boolean async = t % 2 == 1;
          load.add(new Thread(() -> {
            try {
              for (int i = 0; i < 300; i++) {
                Decision d;
                if (async) {
                  List<CompletableFuture<Decision>> some = new ArrayList<>();
                  for (int j = 0; j < 4; j++) {
                    some.add(store.acquireAsync(List.of(Acquisition.of(BIG, K))).toCompletableFuture());
                  }
                  for (CompletableFuture<Decision> f : some) {
                    if (f.join().allowed()) {
                      admitted.incrementAndGet();
                    }
                  }
                } else if ((d = store.acquire(List.of(Acquisition.of(BIG, K)))).allowed()) {
                  admitted.incrementAndGet();
                }
              }
            } catch (Throwable e) {
              escaped.compareAndSet(null, e);
            }
          }));
        }
        load.forEach(Thread::start);
        for (Thread t : load) {
          t.join(120_000);
        }
        master.kill();
        assertThat(escaped.get()).as("no decision failed").isNull();
        assertThat(store.replicaUnacknowledged()).as("admissions the replica did not acknowledge").isZero();
        assertThat(store.failures()).isZero();
      }
      assertThat(admitted.get()).isEqualTo(2 * 300 + 2 * 300 * 4);
      assertThat(Cli.run(replica.port, "replicaof", "no", "one")).isEqualTo("OK");
      assertThat(counted(replica, "kept:")).as("admissions the promoted replica counts").isEqualTo(admitted.get());
    }
  }

  /**
   * (b) The replica hangs (SIGSTOP): WAIT answers 0 after its 50 ms timeout, well within the
   * 500 ms decision deadline (no deadline passes), and each admission follows the failure policy:
   * fail-closed refuses it as a store failure, fail-open admits it as Redis decided, fallback asks
   * the local store; fail-closed and fallback give the master's write back. A refusal stands.
   */
  @Test
  void replicaHangs_admissionsFollowTheFailurePolicy_andAreCounted_refusalsStand() throws Exception {
    try (RedisServer master = RedisServer.launch(); RedisServer replica = replicaOf(master);
        RedisStore closed = store(master, "closed:", FailurePolicy.FAIL_CLOSED);
        RedisStore open = store(master, "open:", FailurePolicy.FAIL_OPEN);
        RedisStore fallback = store(master, "fallback:", FailurePolicy.FALLBACK)) {
      assertThat(closed.acquire(List.of(Acquisition.of(ONE, K))).allowed()).as("acknowledged while in sync").isTrue();
      replica.freeze();
      try {
        for (int i = 0; i < 5; i++) {
          assertThatThrownBy(() -> closed.acquire(List.of(Acquisition.of(BIG, K))))
              .isInstanceOf(RedisUnavailableException.class)
              .hasMessageContaining("acknowledged the admission's write 0 of 1 times within 50 ms")
              .hasMessageContaining("replicaAcknowledgements");
          Decision o = open.acquire(List.of(Acquisition.of(BIG, K)));
          assertThat(o.allowed()).isTrue();
          assertThat(o.outcomes().get(0).remaining()).as("Redis's own count, not r = q").isEqualTo(Q - 1 - i);
          Decision f = fallback.acquireAsync(List.of(Acquisition.of(BIG, K))).toCompletableFuture().join();
          assertThat(f.allowed()).isTrue();
          assertThat(f.outcomes().get(0).remaining()).as("the local store's count").isEqualTo(Q - 1 - i);
        }
        // Refused by Redis: nothing to lose in a failover, so the refusal stands.
        Decision refused = closed.acquire(List.of(Acquisition.of(ONE, K)));
        assertThat(refused.allowed()).isFalse();
        assertThat(closed.replicaUnacknowledged()).isEqualTo(5);
        assertThat(open.replicaUnacknowledged()).isEqualTo(5);
        assertThat(fallback.replicaUnacknowledged()).isEqualTo(5);
        for (RedisStore s : List.of(closed, open, fallback)) {
          assertThat(s.deadlinesPassed()).as("decided by WAIT's timeout, before the deadline").isZero();
        }
        // The master: fail-open's admissions counted, the others' given back (asynchronously).
        SentinelFailoverTest.awaitTrue("give-backs applied", 10,
            () -> counted(master, "closed:") == 0 && counted(master, "fallback:") == 0);
        assertThat(counted(master, "open:")).isEqualTo(5);
      } finally {
        replica.thaw();
      }
      // In sync again: admissions are kept.
      SentinelFailoverTest.awaitTrue("admissions acknowledged again", 20,
          () -> closed.acquireAsync(List.of(Acquisition.of(BIG, PartitionKey.of("again")))).toCompletableFuture()
              .handle((d, e) -> e == null && d.allowed()).join());
    }
  }

  /** (c) Cluster and bad values: refused when the store is built, naming the option. */
  @Test
  void cluster_isRefusedAtBuild_sayingWhyWaitIsNotSoundThere() {
    assertThatThrownBy(() -> RedisStore.builder().clusterUris(List.of(RedisURI.create("redis://127.0.0.1:1")))
        .replicaAcknowledgements(1, TIMEOUT).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("replicaAcknowledgements: not supported on Redis Cluster")
        .hasMessageContaining("WAIT has no key")
        .hasMessageContaining("counts that node's replicas");
  }

  @Test
  void badValues_areRefusedNamingTheFieldTheValueAndTheRange() {
    assertThatThrownBy(() -> RedisStore.builder().replicaAcknowledgements(0, TIMEOUT))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("replicaAcknowledgements.replicas: expected from 1 to 100, got 0");
    assertThatThrownBy(() -> RedisStore.builder().replicaAcknowledgements(1, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("replicaAcknowledgements.timeout: expected from 1 ms to 1 minute, got PT0S");
    assertThatThrownBy(() -> RedisStore.builder().uri("redis://127.0.0.1:1").replicaAcknowledgements(1,
        Duration.ofMillis(100)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("replicaAcknowledgements.timeout: expected less than the decision deadline (100 ms), which "
            + "counts the wait for the replicas too, got 100 ms");
  }
}
