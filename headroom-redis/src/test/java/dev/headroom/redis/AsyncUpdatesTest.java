package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The store's non-blocking updates (issue 20, "Reactive front ends": an event-loop front end never
 * waits on Redis): {@code chargeAsync}, {@code refundAsync} and {@code releaseAsync} have the
 * effects of their blocking twins, through the public API against the real Redis, and with Redis
 * away they complete anyway (best effort), applied to the local store under FALLBACK.
 */
class AsyncUpdatesTest {

  private static final long WAIT_SECONDS = 30;

  private static RedisStore store(String prefix) {
    return RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix).decisionDeadline(Duration.ofSeconds(5)).build();
  }

  private static String prefix() {
    return "async-" + UUID.randomUUID() + ":";
  }

  @Test
  void chargeAsyncPutsThePartitionInDebt() throws Exception {
    QuotaPolicy bytes = QuotaPolicy.builder("bytes").quota(1000).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONTENT_BYTES).build();
    try (RedisStore store = store(prefix())) {
      QuotaLimiter limiter = QuotaLimiter.of(store);
      PartitionKey key = PartitionKey.of("c1");
      assertThat(await(limiter.acquireAsync(List.of(Acquisition.of(bytes, key, 0)))).allowed()).isTrue();
      limiter.chargeAsync(bytes, key, 5000).toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
      Decision after = await(limiter.acquireAsync(List.of(Acquisition.of(bytes, key, 0))));
      assertThat(after.allowed()).isFalse();
      assertThat(store.failures()).isZero();
    }
  }

  @Test
  void releaseAsyncHandsBackEveryLeaseOfADecision() throws Exception {
    QuotaPolicy inflight = QuotaPolicy.builder("inflight").quota(1).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).build();
    QuotaPolicy perNode = QuotaPolicy.builder("node").quota(1).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).build();
    try (RedisStore store = store(prefix())) {
      QuotaLimiter limiter = QuotaLimiter.of(store);
      List<Acquisition> request = List.of(Acquisition.of(inflight, PartitionKey.of("c1"), 1),
          Acquisition.of(perNode, PartitionKey.GLOBAL, 1));
      Decision first = await(limiter.acquireAsync(request));
      assertThat(first.allowed()).isTrue();
      assertThat(first.leases()).hasSize(2);
      assertThat(await(limiter.acquireAsync(request)).allowed()).isFalse();
      limiter.releaseAsync(first).toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertThat(await(limiter.acquireAsync(request)).allowed()).isTrue();
    }
  }

  @Test
  void refundAsyncGivesUnitsBack() throws Exception {
    QuotaPolicy perMinute = QuotaPolicy.builder("minute").quota(2).window(Duration.ofMinutes(1)).build();
    try (RedisStore store = store(prefix())) {
      PartitionKey key = PartitionKey.of("c1");
      Acquisition two = Acquisition.of(perMinute, key, 2);
      assertThat(await(store.acquireAsync(List.of(two))).allowed()).isTrue();
      assertThat(await(store.acquireAsync(List.of(Acquisition.of(perMinute, key, 1)))).allowed()).isFalse();
      store.refundAsync(two).toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertThat(await(store.acquireAsync(List.of(Acquisition.of(perMinute, key, 2)))).allowed()).isTrue();
    }
  }

  @Test
  void manyConcurrentDecisionsAndReleasesBalance() throws Exception {
    // Concurrent callers all go through the connection's event loop; every lease comes back.
    QuotaPolicy inflight = QuotaPolicy.builder("inflight").quota(100_000).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).build();
    QuotaPolicy perMinute = QuotaPolicy.builder("minute").quota(1_000_000).window(Duration.ofMinutes(1)).build();
    try (RedisStore store = store(prefix())) {
      QuotaLimiter limiter = QuotaLimiter.of(store);
      List<Acquisition> request = List.of(Acquisition.of(inflight, PartitionKey.of("hot"), 1),
          Acquisition.of(perMinute, PartitionKey.of("hot"), 1));
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (int i = 0; i < 2000; i++) {
        all.add(limiter.acquireAsync(request).thenCompose(d -> {
          assertThat(d.allowed()).isTrue();
          return limiter.releaseAsync(d);
        }).toCompletableFuture());
      }
      CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(WAIT_SECONDS, TimeUnit.SECONDS);
      Decision last = await(limiter.acquireAsync(request));
      // no lease left behind but this one
      assertThat(last.outcomes().get(0).remaining()).isEqualTo(100_000 - 1);
      assertThat(store.failures()).isZero();
    }
  }

  @Test
  void withRedisAwayUpdatesCompleteAndFallBackLocally() throws Exception {
    QuotaPolicy bytes = QuotaPolicy.builder("bytes").quota(1000).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONTENT_BYTES).build();
    RedisServer server = RedisServer.launch();
    try (RedisStore store = RedisStore.builder().uri(server.uri()).failurePolicy(FailurePolicy.FALLBACK)
        .decisionDeadline(Duration.ofMillis(200)).build()) {
      assertThat(store.acquire(List.of(Acquisition.of(bytes, PartitionKey.of("c1"), 0))).allowed()).isTrue();
      server.close();
      long before = store.failures();
      store.chargeAsync(Acquisition.of(bytes, PartitionKey.of("c1"), 5000)).toCompletableFuture()
          .get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertThat(store.failures()).isGreaterThan(before);
      Store local = store.fallback().orElseThrow();
      assertThat(local.acquire(List.of(Acquisition.of(bytes, PartitionKey.of("c1"), 0))).allowed()).isFalse();
    } finally {
      server.close();
    }
  }

  private static Decision await(CompletionStage<Decision> d) throws Exception {
    return d.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
  }
}
