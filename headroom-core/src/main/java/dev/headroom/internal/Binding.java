package dev.headroom.internal;

import dev.headroom.QuotaPolicy;

/**
 * One version of a policy bound to its table in {@link LocalStore}, with its GCRA constants
 * computed once, and the evaluations of a state under it (the pure functions of {@link Gcra},
 * {@link FixedWindow}, {@link SlidingWindow} and {@link Concurrency}, with the figures a decision
 * reports). Immutable: only final fields, so a binding published by a racy write is safe.
 */
final class Binding {
  final QuotaPolicy policy;
  final PolicyPartitions table;
  /** The table's partitions, one indirection fewer on every decision. */
  final PartitionTable partitions;
  /** Whether the states are GCRA words (a token bucket). */
  final boolean words;
  final long quota;
  final long windowNanos;
  final long interval;
  final long tolerance;

  Binding(QuotaPolicy policy, PolicyPartitions table) {
    this.policy = policy;
    this.table = table;
    this.partitions = table.partitions;
    this.words = table.partitions.words;
    this.quota = policy.quota();
    this.windowNanos = policy.window().toNanos();
    this.interval = policy.emissionIntervalNanos();
    this.tolerance = policy.burstToleranceNanos();
  }

  /** The TAT after admitting {@code cost} units at {@code now}, or {@code Long.MIN_VALUE} when refused. */
  long tryTat(long tat, long now, long cost) {
    return cost > quota ? Long.MIN_VALUE : Gcra.tryAcquire(tat, now, cost, interval, tolerance);
  }

  Evaluation allowedTat(long next, long now) {
    return new Evaluation(true, null, Gcra.remaining(next, now, quota, interval, tolerance), Gcra.resetNanos(next, now),
        Gcra.nextQuotaNanos(next, now, quota, interval, tolerance), 0);
  }

  Evaluation evaluateTat(long tat, long now, long cost) {
    long next = tryTat(tat, now, cost);
    if (next != Long.MIN_VALUE) {
      return allowedTat(next, now);
    }
    long retry = cost > quota ? windowNanos : Gcra.retryAfterNanos(tat, now, cost, interval, tolerance);
    return new Evaluation(false, null, Gcra.remaining(tat, now, quota, interval, tolerance),
        Gcra.resetNanos(tat, now), Gcra.nextQuotaNanos(tat, now, quota, interval, tolerance), retry);
  }

  Evaluation evaluateRef(Object state, long now, long cost, long leaseId) {
    switch (table.algorithm) {
      case FIXED_WINDOW:
        return FixedWindow.evaluate(policy, (WindowState) state, now, cost);
      case SLIDING_WINDOW:
        return SlidingWindow.evaluate(policy, (WindowState) state, now, cost);
      default:
        return Concurrency.evaluate(policy, (Concurrency.Leases) state, now, cost, leaseId);
    }
  }
}
