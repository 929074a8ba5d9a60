package dev.headroom.spring.cloud.gateway;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.util.Objects;

/**
 * The event loops of the gateway's own Reactor Netty server, when the Redis store runs on them
 * ({@code headroom.cloud-gateway.store.redis-event-loops: server}; {@link RedisOnServerLoops}).
 * {@link HeadroomRateLimiter} resumes an exchange whose decision completed elsewhere on the loop
 * the exchange came from. Netty only (no Lettuce), so that the rate limiter can name it whatever
 * the class path. Immutable.
 */
final class ServerLoops {
  private final EventLoopGroup loops;

  ServerLoops(EventLoopGroup loops) {
    this.loops = Objects.requireNonNull(loops, "loops");
  }

  /** The server's loops. */
  EventLoopGroup loops() {
    return loops;
  }

  /** The loop of the calling thread when it is one of the server's, else null. */
  EventExecutor current() {
    for (EventExecutor e : loops) {
      if (e.inEventLoop()) {
        return e;
      }
    }
    return null;
  }
}
