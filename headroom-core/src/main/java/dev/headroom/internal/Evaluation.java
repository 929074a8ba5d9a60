package dev.headroom.internal;

/**
 * What an algorithm says of one request against one stored state: allowed or not, the state to
 * store if the request is committed, and the service limit to report. Immutable.
 */
public final class Evaluation {
  public final boolean allowed;
  /** The state after the request when allowed; the (rolled-over) current state when refused. */
  public final Object state;
  public final long remaining;
  /** Until the quota is whole again: draft-ietf-httpapi-ratelimit-headers-09's {@code t}. */
  public final long resetNanos;
  /** Until more quota is available: the {@code t} of draft-10 and later; at most {@link #resetNanos}. */
  public final long nextQuotaNanos;
  public final long retryAfterNanos;

  public Evaluation(boolean allowed, Object state, long remaining, long resetNanos, long nextQuotaNanos,
      long retryAfterNanos) {
    this.allowed = allowed;
    this.state = state;
    this.remaining = remaining;
    this.resetNanos = resetNanos;
    this.nextQuotaNanos = Math.min(nextQuotaNanos, resetNanos);
    this.retryAfterNanos = retryAfterNanos;
  }
}
