package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Transports;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link ServingLoops}: a store built with its resources reads Redis's replies on the caller's
 * event loops (headroom-redis README, "On the caller's event loops"), and loops of another
 * transport leave Lettuce a loop of its own, the store deciding all the same.
 */
class ServingLoopsTest {

  private static final QuotaPolicy HOURLY = QuotaPolicy.builder("hourly").quota(100).window(Duration.ofHours(1)).build();

  @Test
  void repliesAreReadOnTheGivenLoops() throws Exception {
    // NIO: this module's class path has no native transport, so Lettuce uses NIO
    EventLoopGroup loops = new NioEventLoopGroup(2);
    assertThat(ServingLoops.serves(loops, Transports.eventLoopGroupClass())).isTrue();
    ClientResources resources = ServingLoops.clientResources(loops);
    String prefix = LocalRedis.uniquePrefix("serving-loops");
    try (RedisStore store = RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix).clientResources(resources).build()) {
      // A stage already complete when the callback is attached runs it on this thread: such a
      // decision tells nothing of where its reply was read. Every other runs it where the reply
      // completed the decision, which must be one of the given loops.
      Thread caller = Thread.currentThread();
      int seenOnLoops = 0;
      for (int i = 0; i < 20; i++) {
        CompletableFuture<String> where = store.acquireAsync(List.of(Acquisition.of(HOURLY, PartitionKey.of("k" + i))))
            .toCompletableFuture().thenApply(d -> !d.allowed() ? "refused"
                : onOneOf(loops) ? "loop" : Thread.currentThread() == caller ? "caller" : Thread.currentThread().getName());
        String w = where.get(10, TimeUnit.SECONDS);
        assertThat(w).as("decision %d admitted, its reply read on a given loop", i).isIn("loop", "caller");
        seenOnLoops += w.equals("loop") ? 1 : 0;
      }
      assertThat(seenOnLoops).as("decisions whose completion was seen, all on the given loops").isPositive();
    } finally {
      resources.shutdown(0, 2, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
      LocalRedis.deleteAll(prefix);
    }
    assertThat(loops.isShuttingDown()).as("the given loops stay the caller's").isFalse();
    loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).sync();
  }

  @Test
  void loopsOfAnotherTransportLeaveLettuceALoopOfItsOwn() throws Exception {
    EventLoopGroup loops = new DefaultEventLoopGroup(1); // runs no socket channel
    assertThat(ServingLoops.serves(loops, Transports.eventLoopGroupClass())).isFalse();
    ClientResources resources = ServingLoops.clientResources(loops);
    String prefix = LocalRedis.uniquePrefix("serving-loops-other");
    try (RedisStore store = RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix).clientResources(resources).build()) {
      Decision d = store.acquireAsync(List.of(Acquisition.of(HOURLY, PartitionKey.of("k")))).toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
      assertThat(d.allowed()).isTrue();
    } finally {
      resources.shutdown(0, 2, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
      LocalRedis.deleteAll(prefix);
    }
    assertThat(loops.isShuttingDown()).isFalse();
    loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).sync();
  }

  private static boolean onOneOf(EventLoopGroup loops) {
    for (EventExecutor e : loops) {
      if (e.inEventLoop()) {
        return true;
      }
    }
    return false;
  }
}
