package dev.headroom.internal;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link FixedWindow} or {@link SlidingWindow} key: one immutable {@link WindowState} swapped by
 * CAS ({@code null} once retired).
 */
final class WindowCell extends Cell {
  private final AtomicReference<WindowState> state = new AtomicReference<>(WindowState.EMPTY);
  private final boolean sliding;

  WindowCell(Algorithm algorithm) {
    this.sliding = algorithm == Algorithm.SLIDING_WINDOW;
  }

  private Evaluation evaluate(QuotaPolicy p, WindowState s, long now, long cost) {
    return sliding ? SlidingWindow.evaluate(p, s, now, cost) : FixedWindow.evaluate(p, s, now, cost);
  }

  @Override
  Evaluation peek(QuotaPolicy p, long now, long cost) {
    WindowState s = state.get();
    return evaluate(p, s == null ? WindowState.EMPTY : s, now, cost);
  }

  @Override
  Evaluation commit(QuotaPolicy p, long now, long cost, long leaseId) {
    for (;;) {
      WindowState s = state.get();
      if (s == null) {
        return null;
      }
      Evaluation e = evaluate(p, s, now, cost);
      if (!e.allowed || state.compareAndSet(s, (WindowState) e.state)) {
        return e;
      }
    }
  }

  @Override
  boolean charge(QuotaPolicy p, long now, long cost) {
    for (;;) {
      WindowState s = state.get();
      if (s == null) {
        return false;
      }
      WindowState next = sliding ? SlidingWindow.charge(p, s, now, cost) : FixedWindow.charge(p, s, now, cost);
      if (state.compareAndSet(s, next)) {
        return true;
      }
    }
  }

  @Override
  boolean refund(QuotaPolicy p, long now, long cost) {
    for (;;) {
      WindowState s = state.get();
      if (s == null) {
        return false;
      }
      WindowState next = sliding ? SlidingWindow.refund(p, s, now, cost) : FixedWindow.refund(p, s, now, cost);
      if (state.compareAndSet(s, next)) {
        return true;
      }
    }
  }

  @Override
  long expiresAt(QuotaPolicy p) {
    WindowState s = state.get();
    if (s == null) {
      return Long.MIN_VALUE;
    }
    return sliding ? SlidingWindow.expiresAt(p, s) : FixedWindow.expiresAt(p, s);
  }

  @Override
  boolean retire(QuotaPolicy p, long now, boolean force) {
    for (;;) {
      WindowState s = state.get();
      if (s == null) {
        return true;
      }
      long expiry = sliding ? SlidingWindow.expiresAt(p, s) : FixedWindow.expiresAt(p, s);
      if (!force && expiry > now) {
        return false;
      }
      if (state.compareAndSet(s, null)) {
        return true;
      }
    }
  }
}
