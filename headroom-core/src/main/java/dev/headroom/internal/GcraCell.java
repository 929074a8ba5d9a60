package dev.headroom.internal;

import dev.headroom.QuotaPolicy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A {@link Gcra} key: one {@code long}, the theoretical arrival time, updated by CAS with volatile
 * semantics (a decision happens-after every decision it observed).
 */
final class GcraCell extends Cell {
  private static final long RETIRED = Long.MIN_VALUE;
  private static final VarHandle TAT;

  static {
    try {
      TAT = MethodHandles.lookup().findVarHandle(GcraCell.class, "tat", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // accessed through TAT
  private volatile long tat = Long.MIN_VALUE + 1;

  @Override
  Evaluation peek(QuotaPolicy policy, long now, long cost) {
    return evaluate(policy, (long) TAT.getVolatile(this), now, cost);
  }

  private static Evaluation evaluate(QuotaPolicy p, long current, long now, long cost) {
    long interval = Gcra.emissionInterval(p);
    long tolerance = p.quota() * interval;
    long next = cost > p.quota() ? Long.MIN_VALUE : Gcra.tryAcquire(current, now, cost, interval, tolerance);
    if (next != Long.MIN_VALUE) {
      return new Evaluation(true, null, Gcra.remaining(next, now, p.quota(), interval, tolerance),
          Gcra.resetNanos(next, now), 0);
    }
    long retry = cost > p.quota() ? p.window().toNanos() : Gcra.retryAfterNanos(current, now, cost, interval, tolerance);
    return new Evaluation(false, null, Gcra.remaining(current, now, p.quota(), interval, tolerance),
        Gcra.resetNanos(current, now), retry);
  }

  @Override
  Evaluation commit(QuotaPolicy p, long now, long cost, long leaseId) {
    long interval = Gcra.emissionInterval(p);
    long tolerance = p.quota() * interval;
    for (;;) {
      long current = (long) TAT.getVolatile(this);
      if (current == RETIRED) {
        return null;
      }
      long next = cost > p.quota() ? Long.MIN_VALUE : Gcra.tryAcquire(current, now, cost, interval, tolerance);
      if (next == Long.MIN_VALUE) {
        return evaluate(p, current, now, cost);
      }
      if (next == current || TAT.compareAndSet(this, current, next)) {
        return new Evaluation(true, null, Gcra.remaining(next, now, p.quota(), interval, tolerance),
            Gcra.resetNanos(next, now), 0);
      }
    }
  }

  @Override
  boolean charge(QuotaPolicy p, long now, long cost) {
    long interval = Gcra.emissionInterval(p);
    for (;;) {
      long current = (long) TAT.getVolatile(this);
      if (current == RETIRED) {
        return false;
      }
      if (TAT.compareAndSet(this, current, Gcra.charge(current, now, cost, interval))) {
        return true;
      }
    }
  }

  @Override
  boolean refund(QuotaPolicy p, long now, long cost) {
    long interval = Gcra.emissionInterval(p);
    for (;;) {
      long current = (long) TAT.getVolatile(this);
      if (current == RETIRED) {
        return false;
      }
      if (TAT.compareAndSet(this, current, Gcra.refund(current, now, cost, interval))) {
        return true;
      }
    }
  }

  @Override
  long expiresAt(QuotaPolicy policy) {
    return Gcra.expiresAt((long) TAT.getVolatile(this));
  }

  @Override
  boolean retire(QuotaPolicy policy, long now, boolean force) {
    for (;;) {
      long current = (long) TAT.getVolatile(this);
      if (current == RETIRED) {
        return true;
      }
      if (!force && current > now) {
        return false;
      }
      if (TAT.compareAndSet(this, current, RETIRED)) {
        return true;
      }
    }
  }
}
