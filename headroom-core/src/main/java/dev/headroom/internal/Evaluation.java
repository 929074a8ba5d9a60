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
  public final long resetNanos;
  public final long retryAfterNanos;

  public Evaluation(boolean allowed, Object state, long remaining, long resetNanos, long retryAfterNanos) {
    this.allowed = allowed;
    this.state = state;
    this.remaining = remaining;
    this.resetNanos = resetNanos;
    this.retryAfterNanos = retryAfterNanos;
  }
}
