package dev.headroom.redis;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.Lease;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.Store;
import io.netty.util.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local store that decides for {@link RedisStore} while Redis cannot
 * ({@link FailurePolicy#FALLBACK}), and the two things that go with it:
 *
 * <ul>
 *   <li><b>Its leases come back to it.</b> A lease it hands out carries its id negated, so that a
 *       release tells it from one of Redis's ({@link #decide}, {@link #release}).
 *   <li><b>It forgets an outage once that cannot matter.</b> An in-memory store sweeps keys at rest
 *       only as new keys enter, and none enter once Redis decides again, so the tables an outage
 *       filled would stay at that size. Once the longest window the fallback decided has passed
 *       with Redis deciding, every count it kept is at rest and every lease timed out, so the store
 *       {@link RedisStore} built forgets them all ({@link InMemoryStore#forgetAll}). Another outage
 *       before then finds them as they were: a caller refused in the first is still refused in the
 *       second. A store given to the builder is the application's own, and left alone.
 * </ul>
 *
 * <p>Thread-safe.
 */
final class Fallback {
  private static final Logger LOG = LoggerFactory.getLogger(RedisStore.class);

  private final Store store;
  /** The store {@link RedisStore} built, which it may forget; null for one the application gave. */
  private final InMemoryStore own;
  private final Timer timer;
  /** The longest window (or lease timeout) of a policy decided here since the last forget. */
  private final AtomicLong horizonNanos = new AtomicLong();

  Fallback(Store given, InMemoryStore own, Timer timer) {
    this.store = own != null ? own : given;
    this.own = own;
    this.timer = timer;
  }

  Store store() {
    return store;
  }

  /** The local decision, its lease ids negated so that a release finds its way back. */
  Decision decide(List<Acquisition> request) {
    if (own != null) {
      widenHorizon(request);
    }
    Decision d = store.acquire(request);
    if (d.leases().isEmpty()) {
      return d;
    }
    List<PolicyOutcome> outcomes = new ArrayList<>(d.outcomes().size());
    for (PolicyOutcome o : d.outcomes()) {
      Lease lease = o.lease().map(l -> new Lease(l.policy(), l.key(), -l.id(), l.units())).orElse(null);
      outcomes.add(new PolicyOutcome(o.policy(), o.key(), o.cost(), o.allowed(), o.remaining(),
          o.reset().toNanos(), o.nextQuota().toNanos(), o.retryAfter().toNanos(), lease));
    }
    return Decision.of(outcomes);
  }

  /** Gives a lease back here if it is one of this store's (a negative id); whether it was. */
  static boolean release(Fallback fallback, Lease lease) {
    if (lease.id() >= 0) {
      return false;
    }
    if (fallback != null) {
      fallback.store.release(new Lease(lease.policy(), lease.key(), -lease.id(), lease.units()));
    }
    return true;
  }

  void charge(Acquisition acquisition) {
    store.charge(acquisition);
  }

  void refund(Acquisition acquisition) {
    store.refund(acquisition);
  }

  /**
   * Redis decides again: plans the forget one horizon from now, carried out if
   * {@code stillDeciding} says Redis decided all along.
   */
  void redisReturned(BooleanSupplier stillDeciding) {
    long horizon = horizonNanos.get();
    if (own == null || horizon == 0) {
      return;
    }
    try {
      // a tick late at most: the wheel rounds up
      timer.newTimeout(t -> {
        if (stillDeciding.getAsBoolean()) {
          horizonNanos.set(0);
          own.forgetAll();
          LOG.debug("Headroom's Redis store forgot the keys its fallback kept during the last outage");
        }
      }, horizon, TimeUnit.NANOSECONDS);
    } catch (IllegalStateException closed) {
      // the store is closing: nothing to forget
    }
  }

  void close() {
    if (own != null) {
      own.close();
    }
  }

  private void widenHorizon(List<Acquisition> request) {
    long longest = 0;
    for (int i = 0, n = request.size(); i < n; i++) {
      QuotaPolicy p = request.get(i).policy();
      // a sliding window's count weighs on the next window; a bucket is full a window after its last use
      long matters = p.algorithm() == Algorithm.CONCURRENCY ? p.leaseTimeout().toNanos()
          : p.algorithm() == Algorithm.SLIDING_WINDOW ? 2 * p.window().toNanos() : p.window().toNanos();
      longest = Math.max(longest, matters);
    }
    // Read first: the horizon rarely moves, and every decision of an outage passes here.
    if (longest > horizonNanos.get()) {
      horizonNanos.accumulateAndGet(longest, Math::max);
    }
  }
}
