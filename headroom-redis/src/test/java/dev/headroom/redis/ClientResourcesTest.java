package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Acquisition;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code RedisStore.Builder.clientResources}: the store's own client runs on the caller's Lettuce
 * resources (an event-driven server's loops, headroom-redis/README.md "On the caller's event
 * loops"), leaves them running when it closes, and is refused, naming the field, where the caller
 * already brings a client or connection.
 */
class ClientResourcesTest {

  @Test
  void theStoreDecidesOnTheCallersResourcesAndLeavesThemRunning() throws Exception {
    QuotaPolicy two = QuotaPolicy.builder("two").quota(2).window(Duration.ofMinutes(1)).build();
    ClientResources resources = ClientResources.builder().ioThreadPoolSize(1).computationThreadPoolSize(1).build();
    try {
      String prefix = "resources-" + UUID.randomUUID() + ":";
      PartitionKey key = PartitionKey.of("c1");
      try (RedisStore store = RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix).clientResources(resources)
          .decisionDeadline(Duration.ofSeconds(5)).build()) {
        QuotaLimiter limiter = QuotaLimiter.of(store);
        assertThat(limiter.acquireAsync(List.of(Acquisition.of(two, key, 1))).toCompletableFuture()
            .get(30, TimeUnit.SECONDS).allowed()).isTrue();
      }
      assertThat(resources.eventExecutorGroup().isShuttingDown()).isFalse();
      // a second store on the same resources sees the first one's count
      try (RedisStore store = RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix).clientResources(resources)
          .decisionDeadline(Duration.ofSeconds(5)).build()) {
        QuotaLimiter limiter = QuotaLimiter.of(store);
        assertThat(limiter.acquire(two, key).outcomes().get(0).remaining()).isZero();
        assertThat(limiter.acquire(two, key).allowed()).isFalse();
      }
    } finally {
      resources.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void resourcesWithAClientOrConnectionOfTheCallersAreRefused() {
    ClientResources resources = ClientResources.builder().ioThreadPoolSize(1).computationThreadPoolSize(1).build();
    RedisClient client = RedisClient.create(LocalRedis.URI);
    try (var connection = client.connect(ByteArrayCodec.INSTANCE)) {
      assertThatThrownBy(() -> RedisStore.builder().connection(connection).clientResources(resources).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("clientResources")
          .hasMessageContaining("uri or clusterUris");
      assertThatThrownBy(() -> RedisStore.builder().client(client).clientResources(resources).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("clientResources");
    } finally {
      client.shutdown();
      resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }
}
