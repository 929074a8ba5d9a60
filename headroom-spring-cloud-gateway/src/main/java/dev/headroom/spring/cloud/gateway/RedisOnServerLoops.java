package dev.headroom.spring.cloud.gateway;

import dev.headroom.redis.ServingLoops;
import io.lettuce.core.resource.ClientResources;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.SmartLifecycle;

/**
 * The Redis store on the event loops of the gateway's own server
 * ({@code headroom.cloud-gateway.store.redis-event-loops: server}): Lettuce resources over Reactor
 * Netty's server loops (headroom-redis {@link ServingLoops}), so that a decision is written and its
 * reply read on a loop that is awake anyway ({@link ServerLoops}, by which
 * {@link HeadroomRateLimiter} resumes an exchange on the loop it came from).
 *
 * <p>Ownership: the loops are Reactor Netty's ({@code ReactorResourceFactory} ends them when it
 * stops, at phase 0). This object stops just before (phase {@value #PHASE}, after the web server,
 * so no request is still deciding): it closes the stores it was given, then shuts the Lettuce
 * resources down, so that the Redis connection's channel is closed while its loop still runs.
 * Closing again (the store bean's own destroy method, or a context whose refresh failed and that
 * was never started) does nothing more.
 *
 * <p>Thread-safe.
 */
final class RedisOnServerLoops implements SmartLifecycle, DisposableBean {
  private static final Logger LOG = LoggerFactory.getLogger(RedisOnServerLoops.class);
  /** Just above {@code ReactorResourceFactory}'s phase (0), which ends the loops: stopped before it. */
  static final int PHASE = 1;
  /** How long the Lettuce resources' shutdown may take. */
  private static final long CLOSE_WAIT_SECONDS = 2;

  private final ClientResources resources;
  private final List<AutoCloseable> closeFirst = new ArrayList<>();
  private boolean running;
  private boolean closed;

  RedisOnServerLoops(ServerLoops loops) {
    this.resources = ServingLoops.clientResources(loops.loops());
  }

  /** Lettuce resources over the server's loops, for the store. */
  ClientResources resources() {
    return resources;
  }

  /** Closes {@code store} before the resources are shut down. */
  synchronized void closeFirst(AutoCloseable store) {
    closeFirst.add(store);
  }

  @Override
  public synchronized void start() {
    running = true;
  }

  @Override
  public void stop() {
    close();
  }

  @Override
  public synchronized boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }

  @Override
  public void destroy() {
    close();
  }

  private synchronized void close() {
    running = false;
    if (closed) {
      return;
    }
    closed = true;
    for (AutoCloseable c : closeFirst) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.warn("closing the Headroom store on the server's event loops failed", e);
      }
    }
    if (!resources.shutdown(0, CLOSE_WAIT_SECONDS, TimeUnit.SECONDS).awaitUninterruptibly(CLOSE_WAIT_SECONDS + 1,
        TimeUnit.SECONDS)) {
      LOG.warn("the Headroom store's Lettuce resources still running after {} s", CLOSE_WAIT_SECONDS + 1);
    }
  }
}
