package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.redis.internal.KeyLayout;
import dev.headroom.spec.AllOrNothingSpec;
import dev.headroom.spec.ConcurrencySpec;
import dev.headroom.spec.ConcurrentAccessSpec;
import dev.headroom.spec.CostAndDebtSpec;
import dev.headroom.spec.DecisionSpec;
import dev.headroom.spec.FixedWindowSpec;
import dev.headroom.spec.NextQuotaSpec;
import dev.headroom.spec.SlidingWindowSpec;
import dev.headroom.spec.StoreFixture;
import dev.headroom.spec.TokenBucketSpec;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.SlotHash;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Redis Cluster: three masters started by the test on free loopback ports (and stopped by it,
 * even on failure), the core's specification suite run unchanged through the Cluster store,
 * requests spanning slots kept all or nothing by reservation and refund, and a master restarted
 * under the store, which follows its failure policy meanwhile and goes back to Redis after.
 */
class ClusterTest {

  static final List<RedisServer> NODES = new ArrayList<>();

  @BeforeAll
  static void startCluster() throws Exception {
    try {
      List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
      for (int i = 0; i < 3; i++) {
        RedisServer node = RedisServer.launch("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", "2000");
        NODES.add(node);
        create.add("127.0.0.1:" + node.port);
      }
      create.add("--cluster-yes");
      Process p = new ProcessBuilder(create).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as(out).isZero();
      awaitClusterOk();
    } catch (Throwable e) {
      stopCluster();
      throw e;
    }
  }

  @AfterAll
  static void stopCluster() {
    for (RedisServer n : NODES) {
      n.close();
    }
    NODES.clear();
  }

  static void awaitClusterOk() throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    for (RedisServer n : NODES) {
      while (!cli(n, "cluster", "info").contains("cluster_state:ok")) {
        if (System.nanoTime() > until) {
          throw new AssertionError("cluster not ok: " + cli(n, "cluster", "info"));
        }
        Thread.sleep(50);
      }
    }
  }

  static String cli(RedisServer n, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(n.port)));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor(10, TimeUnit.SECONDS);
    return out;
  }

  static List<RedisURI> uris() {
    List<RedisURI> uris = new ArrayList<>();
    for (RedisServer n : NODES) {
      uris.add(RedisURI.create(n.uri()));
    }
    return uris;
  }

  static Store store(Ticker ticker) {
    return RedisStore.builder().clusterUris(uris()).ticker(ticker).keyPrefix(LocalRedis.uniquePrefix("cluster"))
        .decisionDeadline(Duration.ofSeconds(5)).build();
  }

  /** The node serving a slot. */
  static RedisServer nodeOf(int slot) throws Exception {
    for (RedisServer n : NODES) {
      String out = cli(n, "cluster", "countkeysinslot", Integer.toString(slot));
      String nodes = cli(n, "cluster", "nodes");
      for (String line : nodes.split("\n")) {
        if (line.contains("myself") && line.contains("master")) {
          String[] f = line.trim().split(" ");
          for (int i = 8; i < f.length; i++) {
            String[] range = f[i].split("-");
            int lo = Integer.parseInt(range[0]);
            int hi = range.length > 1 ? Integer.parseInt(range[1]) : lo;
            if (slot >= lo && slot <= hi) {
              return n;
            }
          }
        }
      }
      assertThat(out).isNotNull();
    }
    throw new AssertionError("no node serves slot " + slot);
  }

  /** Two partition values whose keys live on different masters. */
  static PartitionKey[] onTwoNodes(QuotaPolicy a, QuotaPolicy b) throws Exception {
    KeyLayout layout = new KeyLayout("headroom:");
    PartitionKey first = PartitionKey.of("x0");
    RedisServer firstNode = nodeOf(SlotHash.getSlot(layout.key(a, first)));
    for (int i = 1; i < 100; i++) {
      PartitionKey other = PartitionKey.of("x" + i);
      if (nodeOf(SlotHash.getSlot(layout.key(b, other))) != firstNode) {
        return new PartitionKey[] {first, other};
      }
    }
    throw new AssertionError("no two partitions on two nodes");
  }

  @Test
  void policiesOfOnePartitionShareASlot() {
    KeyLayout layout = new KeyLayout("headroom:");
    QuotaPolicy a = QuotaPolicy.builder("a").quota(1).window(Duration.ofSeconds(1)).build();
    QuotaPolicy b = QuotaPolicy.builder("b").quota(1).window(Duration.ofSeconds(1)).unit(QuotaUnit.CONCURRENT_REQUESTS).build();
    PartitionKey k = PartitionKey.of("client{7}%");
    Acquisition lease = Acquisition.of(b, k);
    assertThat(SlotHash.getSlot(layout.key(a, k))).isEqualTo(SlotHash.getSlot(layout.keys(lease)[0]))
        .isEqualTo(SlotHash.getSlot(layout.keys(lease)[1]));
  }

  @Test
  void acrossSlotsAllOrNothingByReservationAndRefund() throws Exception {
    QuotaPolicy wide = QuotaPolicy.builder("wide").quota(5).window(Duration.ofHours(1)).algorithm(Algorithm.FIXED_WINDOW).build();
    QuotaPolicy narrow = QuotaPolicy.builder("narrow").quota(1).window(Duration.ofHours(1)).build();
    QuotaPolicy inflight = QuotaPolicy.builder("inflight").quota(1).window(Duration.ofHours(1)).unit(QuotaUnit.CONCURRENT_REQUESTS).build();
    PartitionKey[] ks = onTwoNodes(wide, narrow);
    ManualTicker ticker = ManualTicker.atFixedInstant();
    try (RedisStore store = RedisStore.builder().clusterUris(uris()).ticker(ticker).keyPrefix("headroom:")
        .decisionDeadline(Duration.ofSeconds(5)).build()) {
      List<Acquisition> request = List.of(Acquisition.of(wide, ks[0]), Acquisition.of(inflight, ks[0]), Acquisition.of(narrow, ks[1]));
      Decision first = store.acquire(request);
      assertThat(first.allowed()).isTrue();
      assertThat(first.leases()).hasSize(1);
      store.release(first.leases().get(0));
      for (int i = 0; i < 3; i++) {
        Decision d = store.acquire(request);
        assertThat(d.allowed()).isFalse();
        assertThat(d.violated()).extracting(o -> o.policy().name()).containsExactly("narrow");
        // The reservation in the other slot was given back: the state before the request.
        assertThat(d.outcomes().get(0).allowed()).isTrue();
        assertThat(d.outcomes().get(0).remaining()).isEqualTo(4);
        assertThat(d.outcomes().get(1).remaining()).isEqualTo(1);
        assertThat(d.leases()).isEmpty();
      }
      // Nothing leaked: the wide policy still has 4, the lease is free.
      assertThat(store.acquire(List.of(Acquisition.of(wide, ks[0], 4))).allowed()).isTrue();
      assertThat(store.acquire(List.of(Acquisition.of(inflight, ks[0]))).allowed()).isTrue();
    } finally {
      for (RedisServer n : NODES) {
        cli(n, "flushall");
      }
    }
  }

  @Test
  void aMasterRestarts_storeFollowsItsPolicyThenRecovers() throws Exception {
    QuotaPolicy p = QuotaPolicy.builder("restart").quota(1_000_000).window(Duration.ofHours(1)).build();
    PartitionKey k = PartitionKey.of("r0");
    KeyLayout layout = new KeyLayout("headroom:");
    RedisServer node = nodeOf(SlotHash.getSlot(layout.key(p, k)));
    try (RedisStore closed = RedisStore.builder().clusterUris(uris()).failurePolicy(FailurePolicy.FAIL_CLOSED)
            .decisionDeadline(Duration.ofMillis(200)).build();
        RedisStore fallback = RedisStore.builder().clusterUris(uris()).failurePolicy(FailurePolicy.FALLBACK)
            .decisionDeadline(Duration.ofMillis(200)).build()) {
      assertThat(closed.acquire(List.of(Acquisition.of(p, k))).allowed()).isTrue();
      assertThat(fallback.acquire(List.of(Acquisition.of(p, k))).allowed()).isTrue();
      node.kill();
      for (int i = 0; i < 5; i++) {
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> closed.acquire(List.of(Acquisition.of(p, k)))).isInstanceOf(RedisUnavailableException.class);
        assertThat(fallback.acquire(List.of(Acquisition.of(p, k))).allowed()).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(2 * (200 + 300));
      }
      node.start();
      awaitClusterOk();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      boolean back = false;
      while (!back && System.nanoTime() < until) {
        try {
          back = closed.acquire(List.of(Acquisition.of(p, k))).allowed();
        } catch (RedisUnavailableException e) {
          Thread.sleep(50);
        }
      }
      assertThat(back).as("decisions go through the restarted master again").isTrue();
      long f = fallback.failures();
      while (System.nanoTime() < until) {
        long before = fallback.failures();
        fallback.acquire(List.of(Acquisition.of(p, k)));
        if (fallback.failures() == before) {
          break;
        }
        Thread.sleep(50);
      }
      assertThat(fallback.acquire(List.of(Acquisition.of(p, k))).outcomes().get(0).remaining()).isLessThan(1_000_000);
      assertThat(f).isGreaterThanOrEqualTo(5);
    }
  }

  @Nested
  class FixedWindow extends FixedWindowSpec {
    @Override
    protected StoreFixture fixture() {
      return ClusterTest::store;
    }
  }

  @Nested
  class SlidingWindow extends SlidingWindowSpec {
    @Override
    protected StoreFixture fixture() {
      return ClusterTest::store;
    }
  }

  @Nested
  class NextQuota extends NextQuotaSpec {
    @Override
    protected StoreFixture fixture() {
      return ClusterTest::store;
    }
  }

  @Nested
  class TokenBucket extends TokenBucketSpec {
    @Override
    protected StoreFixture fixture() {
      return ClusterTest::store;
    }
  }

  @Nested
  class Concurrency extends ConcurrencySpec {
    @Override
    protected StoreFixture fixture() {
      return ClusterTest::store;
    }
  }

  @Nested
  class CostAndDebt extends CostAndDebtSpec {
    @Override
    protected StoreFixture fixture() {
      return ClusterTest::store;
    }
  }

  @Nested
  class AllOrNothing extends AllOrNothingSpec {
    @Override
    protected StoreFixture fixture() {
      return ClusterTest::store;
    }
  }

  @Nested
  class Decisions extends DecisionSpec {
    @Override
    protected StoreFixture fixture() {
      return ClusterTest::store;
    }
  }

  @Nested
  class ConcurrentAccess extends ConcurrentAccessSpec {
    @Override
    protected StoreFixture fixture() {
      return ClusterTest::store;
    }

    @Override
    protected int attemptsPerThread() {
      return 2_500;
    }
  }
}
