package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.Lease;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Redis store is the in-memory store, to the nanosecond: the same random sequences of
 * acquisitions, charges, refunds, releases and clock moves, on one ManualTicker, give identical
 * decisions (allowed, r, t in both meanings, Retry-After, leases) from both. Policies include
 * windows longer than 2^53 ns (104 days), quotas near 2^50, odd emission intervals and debt.
 */
class DifferentialTest {

  private String prefix;

  @AfterEach
  void clean() {
    if (prefix != null) {
      LocalRedis.deleteAll(prefix);
    }
  }

  static List<QuotaPolicy> policies(Random r) {
    List<QuotaPolicy> p = new ArrayList<>();
    long[] windows = {1, 7, 60, 3600, 86_400L * 200, 86_400L * 366};
    long[] quotas = {1, 3, 10, 7919, 1L << 40, QuotaPolicy.MAX_QUOTA};
    int n = 0;
    for (Algorithm a : new Algorithm[] {Algorithm.TOKEN_BUCKET, Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW}) {
      for (int i = 0; i < 4; i++) {
        long w = windows[r.nextInt(windows.length)];
        long q = quotas[r.nextInt(i < 2 ? 4 : quotas.length)];
        if (a == Algorithm.TOKEN_BUCKET && q > w * 1_000_000_000L) {
          q = w;
        }
        p.add(QuotaPolicy.builder("p" + (n++)).algorithm(a).quota(q).window(Duration.ofSeconds(w)).build());
      }
    }
    for (int i = 0; i < 3; i++) {
      p.add(QuotaPolicy.builder("c" + (n++)).unit(QuotaUnit.CONCURRENT_REQUESTS).quota(1 + r.nextInt(4))
          .window(Duration.ofSeconds(1 + r.nextInt(30)))
          .leaseTimeout(Duration.ofMillis(1 + r.nextInt(5000))).build());
    }
    return p;
  }

  static long cost(Random r, QuotaPolicy p) {
    switch (r.nextInt(6)) {
      case 0:
        return 0;
      case 1:
        return Math.min(QuotaPolicy.MAX_QUOTA, p.quota() + r.nextInt(3));
      case 2:
        return 1 + (long) (r.nextDouble() * Math.min(p.quota(), 1L << 52));
      default:
        return 1;
    }
  }

  private static long advance(Random r, List<QuotaPolicy> policies) {
    switch (r.nextInt(8)) {
      case 0:
        return 0;
      case 1:
        return r.nextInt(1000);
      case 2:
        return (long) (r.nextDouble() * 2_000_000_000L);
      case 3:
        return policies.get(r.nextInt(policies.size())).window().toNanos() / (1 + r.nextInt(8));
      case 4:
        return (long) (r.nextDouble() * 86_400L * 150 * 1_000_000_000L);
      default:
        return (long) (r.nextDouble() * 50_000_000L);
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
  void sameDecisionsAsTheInMemoryStore(long seed) {
    run(seed, false);
  }

  /** The script form (EVALSHA), which Redis before 7 runs, is the same code: a few seeds suffice. */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {13, 14})
  void scriptFormMakesTheSameDecisions(long seed) {
    run(seed, true);
  }

  private void run(long seed, boolean scriptsOnly) {
    Random r = new Random(seed);
    ManualTicker ticker = ManualTicker.atFixedInstant().advanceNanos((long) (r.nextDouble() * 1e15));
    prefix = LocalRedis.uniquePrefix("diff" + seed);
    List<QuotaPolicy> policies = policies(r);
    PartitionKey[] keys = {PartitionKey.GLOBAL, PartitionKey.of("a"), PartitionKey.of("b{c}%")};
    List<Lease[]> leases = new ArrayList<>();
    RedisStore.Builder builder = RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix).ticker(ticker)
        .decisionDeadline(Duration.ofSeconds(5));
    if (scriptsOnly) {
      builder.scriptsOnly();
    }
    try (InMemoryStore memory = InMemoryStore.builder().ticker(ticker).build();
        RedisStore redis = builder.build()) {
      for (int step = 0; step < 400; step++) {
        int op = r.nextInt(10);
        String where = "seed " + seed + " step " + step + " at " + ticker.read();
        if (op < 6) {
          int n = 1 + r.nextInt(3);
          List<Acquisition> request = new ArrayList<>();
          List<String> seen = new ArrayList<>();
          for (int i = 0; i < n; i++) {
            QuotaPolicy p = policies.get(r.nextInt(policies.size()));
            PartitionKey k = keys[r.nextInt(keys.length)];
            if (!seen.contains(p.name() + k)) {
              seen.add(p.name() + k);
              request.add(Acquisition.of(p, k, p.algorithm() == Algorithm.CONCURRENCY ? r.nextInt(3) : cost(r, p)));
            }
          }
          Decision m = memory.acquire(request);
          Decision d = redis.acquire(request);
          assertSame(where + " " + request, m, d);
          if (!m.leases().isEmpty()) {
            for (int i = 0; i < m.leases().size(); i++) {
              leases.add(new Lease[] {m.leases().get(i), d.leases().get(i)});
            }
          }
        } else if (op == 6) {
          QuotaPolicy p = policies.get(r.nextInt(policies.size()));
          Acquisition a = Acquisition.of(p, keys[r.nextInt(keys.length)], cost(r, p) * (1 + r.nextInt(3)) % (QuotaPolicy.MAX_QUOTA + 1));
          memory.charge(a);
          redis.charge(a);
        } else if (op == 7) {
          QuotaPolicy p = policies.get(r.nextInt(policies.size()));
          Acquisition a = Acquisition.of(p, keys[r.nextInt(keys.length)], cost(r, p));
          memory.refund(a);
          redis.refund(a);
        } else if (op == 8 && !leases.isEmpty()) {
          Lease[] pair = r.nextInt(4) == 0 ? leases.get(r.nextInt(leases.size())) : leases.remove(r.nextInt(leases.size()));
          memory.release(pair[0]);
          redis.release(pair[1]);
        } else {
          ticker.advanceNanos(advance(r, policies));
        }
      }
      assertThat(redis.failures()).isZero();
    }
  }

  static void assertSame(String where, Decision expected, Decision actual) {
    assertThat(actual.allowed()).as(where + " allowed").isEqualTo(expected.allowed());
    assertThat(actual.outcomes()).hasSameSizeAs(expected.outcomes());
    for (int i = 0; i < expected.outcomes().size(); i++) {
      PolicyOutcome e = expected.outcomes().get(i);
      PolicyOutcome a = actual.outcomes().get(i);
      String w = where + " outcome " + i + " " + e;
      assertThat(a.allowed()).as(w + " allowed").isEqualTo(e.allowed());
      assertThat(a.remaining()).as(w + " remaining").isEqualTo(e.remaining());
      assertThat(a.reset()).as(w + " reset").isEqualTo(e.reset());
      assertThat(a.nextQuota()).as(w + " next quota").isEqualTo(e.nextQuota());
      assertThat(a.retryAfter()).as(w + " retry-after").isEqualTo(e.retryAfter());
      assertThat(a.lease().isPresent()).as(w + " lease").isEqualTo(e.lease().isPresent());
      if (e.lease().isPresent()) {
        assertThat(a.lease().get().units()).isEqualTo(e.lease().get().units());
      }
    }
  }
}
