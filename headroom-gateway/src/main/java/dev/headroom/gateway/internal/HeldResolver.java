package dev.headroom.gateway.internal;

import dev.headroom.enforcement.plan.PlanResolver;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A plan resolver and the requests that hold it, so that a reload that replaces it never closes it
 * under them: each request holds it while it waits for its plan (the gate's plan step), and the
 * configuration in force holds it too. A reload {@link #retire retires} it, giving up the
 * configuration's hold and naming its successor; it is closed when the last hold is given back,
 * that is once the requests that were resolving with it have their answers (or stopped waiting).
 * A request that comes to a retired resolver after the last hold is gone (it read the configuration
 * just before the reload) holds the successor instead, so it never uses a closed resolver.
 *
 * <p>State: the number of holds, one of them the configuration's, in an {@link AtomicLong}; 0
 * means closed, and a hold is only taken from a count above 0 (compare-and-set), so nothing holds
 * a closed resolver. The successor is written before the configuration's hold is given back
 * (volatile write, then the atomic decrement), so a request that sees 0 sees the successor.
 * Thread-safe.
 */
public final class HeldResolver {
  private static final Logger LOG = LoggerFactory.getLogger(HeldResolver.class);

  private final PlanResolver resolver;
  private final AtomicLong holds = new AtomicLong(1);
  private final AtomicBoolean retired = new AtomicBoolean();
  private volatile HeldResolver successor;

  HeldResolver(PlanResolver resolver) {
    this.resolver = resolver;
  }

  /** The resolver itself, to use while held. */
  public PlanResolver resolver() {
    return resolver;
  }

  /**
   * Holds the resolver to use now: this one while it is open, else its successor (or theirs).
   *
   * @return the one held, to {@link #release()} when done; null when every one is closed (the
   *     gateway is stopping, or the reload removed the plans)
   */
  public HeldResolver hold() {
    for (HeldResolver h = this; h != null; h = h.successor) {
      for (long n = h.holds.get(); n > 0; n = h.holds.get()) {
        if (h.holds.compareAndSet(n, n + 1)) {
          return h;
        }
      }
    }
    return null;
  }

  /** Gives back a hold; the last one closes the resolver. */
  public void release() {
    if (holds.decrementAndGet() == 0) {
      try {
        resolver.close();
      } catch (RuntimeException e) {
        LOG.warn("closing the plan resolver failed: {}", e.toString());
      }
    }
  }

  /**
   * The configuration no longer uses this resolver: requests still holding it finish with it, then
   * it closes; later requests go to {@code next} (null when there is none). Only the first call counts.
   */
  void retire(HeldResolver next) {
    successor = next;
    if (retired.compareAndSet(false, true)) {
      release();
    }
  }

  /** Whether the resolver is closed (retired, and no request holds it). */
  boolean closed() {
    return holds.get() == 0;
  }
}
