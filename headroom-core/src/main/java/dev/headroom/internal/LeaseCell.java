package dev.headroom.internal;

import dev.headroom.QuotaPolicy;
import java.util.concurrent.atomic.AtomicReference;

/** A {@link Concurrency} key: immutable {@link Concurrency.Leases} swapped by CAS ({@code null} once retired). */
final class LeaseCell extends Cell {
  private final AtomicReference<Concurrency.Leases> state = new AtomicReference<>(Concurrency.Leases.EMPTY);

  @Override
  Evaluation peek(QuotaPolicy p, long now, long cost) {
    Concurrency.Leases s = state.get();
    return Concurrency.evaluate(p, s == null ? Concurrency.Leases.EMPTY : s, now, cost, 0);
  }

  @Override
  Evaluation commit(QuotaPolicy p, long now, long cost, long leaseId) {
    for (;;) {
      Concurrency.Leases s = state.get();
      if (s == null) {
        return null;
      }
      Evaluation e = Concurrency.evaluate(p, s, now, cost, leaseId);
      if (!e.allowed || e.state == s || state.compareAndSet(s, (Concurrency.Leases) e.state)) {
        return e;
      }
    }
  }

  @Override
  boolean charge(QuotaPolicy p, long now, long cost) {
    // A concurrency quota is held, not spent: there is nothing to charge after the fact.
    return state.get() != null;
  }

  @Override
  boolean refund(QuotaPolicy p, long now, long cost) {
    return state.get() != null;
  }

  @Override
  boolean release(long leaseId, long now) {
    for (;;) {
      Concurrency.Leases s = state.get();
      if (s == null) {
        return false;
      }
      Concurrency.Leases next = s.without(leaseId).prune(now);
      if (next == s || state.compareAndSet(s, next)) {
        return true;
      }
    }
  }

  @Override
  long expiresAt(QuotaPolicy p) {
    Concurrency.Leases s = state.get();
    return s == null ? Long.MIN_VALUE : Concurrency.expiresAt(s);
  }

  @Override
  boolean retire(QuotaPolicy p, long now, boolean force) {
    for (;;) {
      Concurrency.Leases s = state.get();
      if (s == null) {
        return true;
      }
      if (!force && Concurrency.expiresAt(s) > now) {
        return false;
      }
      if (state.compareAndSet(s, null)) {
        return true;
      }
    }
  }
}
