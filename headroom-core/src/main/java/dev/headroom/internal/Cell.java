package dev.headroom.internal;

import dev.headroom.QuotaPolicy;

/**
 * The state of one policy in one partition, in the in-memory store. Each subclass keeps its
 * algorithm's state in one field swapped by compare-and-set (lock-free; the next state is computed
 * by a side-effect-free function of the previous one). A cell can be <em>retired</em> by the store's
 * evictor; a retired cell refuses every update ({@code null} / {@code false}) and the caller looks
 * the key up again, so no update is ever lost to an evicted cell.
 *
 * <p>Thread-safe.
 */
abstract class Cell {

  /** Evaluates without changing anything. */
  abstract Evaluation peek(QuotaPolicy policy, long now, long cost);

  /** Evaluates and, when allowed, stores the new state. {@code null} when the cell is retired. */
  abstract Evaluation commit(QuotaPolicy policy, long now, long cost, long leaseId);

  /** Adds {@code cost} unconditionally. {@code false} when the cell is retired. */
  abstract boolean charge(QuotaPolicy policy, long now, long cost);

  /** Gives back {@code cost}. {@code false} when the cell is retired. */
  abstract boolean refund(QuotaPolicy policy, long now, long cost);

  /** Gives back a lease. {@code false} when the cell is retired. */
  boolean release(long leaseId, long now) {
    return true;
  }

  /** When the state will equal an absent key's, or {@link Long#MIN_VALUE} once retired. */
  abstract long expiresAt(QuotaPolicy policy);

  /**
   * Retires the cell if its state has expired at {@code now}, or unconditionally when
   * {@code force}. Returns whether it is retired now.
   */
  abstract boolean retire(QuotaPolicy policy, long now, boolean force);
}
