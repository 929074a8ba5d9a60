package dev.headroom.client;

/**
 * What a scope told nothing but refusals learns of its window: a server that sends no budget
 * fields, only a {@code Retry-After} on each refusal (RFC 9110 section 10.2.3; the
 * {@code retry-after} form of {@link Pacing#ADAPTIVE}'s benchmarks), answers "wait until then" and
 * never "how many". Without this, every window after the first costs as many refusals as callers
 * were sending when its quota ran out: each sees its own 429 before the first one's Retry-After
 * holds the rest.
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>State, per scope: the window's start {@code s} on the client's clock (the instant the last
 * Retry-After named, read through {@link ServerClock} when it is an HTTP-date), the requests sent
 * since {@code s} and the answers to them that were not refused; from those, two things learnt from
 * refusals: {@code quota}, the requests served between a window's start and its refusal (the window
 * the server counts, as a fixed window would: draft-ietf-httpapi-ratelimit-headers-09 section 4.1's
 * {@code q}), and {@code window}, the time between two consecutive refusals' named instants (its
 * {@code w}). Here {@code r} is {@code quota - sent} and {@code t} is {@code s + window - now}.
 *
 * <p>Until a refusal teaches {@code quota}, nothing changes. Once it has, the window's first
 * {@code quota} requests go as they come; the next goes alone (one refusal at most, which names the
 * next start) while {@code window} is unknown, and once it is known waits for {@code s + window}
 * instead, where the next window starts; a start put there by {@code window} rather than named by
 * a refusal is confirmed by one request alone before the rest go (the instants a refusal names are
 * read through a clock still being learnt, so a window measured between two of them can come out
 * short by what was learnt meanwhile). Every refusal teaches {@code quota} again, and one of a
 * guessed window forgets {@code window}, so a server that changes its quota or window, or an
 * estimate that was wrong, costs one refusal. A server that never
 * refused (a caller slower than the quota) is never held: {@code quota} stays unknown. Every
 * number is bounded by the {@link Ceilings} that clamp the Retry-After it came from, and sums
 * saturate. Not thread-safe: the tracker's lock guards it.
 */
final class RefusalWindow {

  /** {@link #decide}: the request goes alone, and its answer decides the next. */
  static final long ALONE = -1;

  private long start = Long.MIN_VALUE;
  /** The start a refusal named, once the client's clock reaches it. */
  private long nextStart = Long.MIN_VALUE;
  private long sent;
  private long served;
  private long quota = -1;
  private long window = -1;
  /** The current window's start was put there by {@link #window}, not named by a refusal. */
  private boolean guessed;

  /** 0 to go now, {@link #ALONE}, or the nanoseconds to wait, for a request of the scope at {@code now}. */
  long decide(long now) {
    if (nextStart != Long.MIN_VALUE && now >= nextStart) {
      restart(nextStart);
      nextStart = Long.MIN_VALUE;
      guessed = false;
    } else if (window > 0 && start != Long.MIN_VALUE && nextStart == Long.MIN_VALUE
        && now >= Ceilings.saturatingAdd(start, window)) {
      long periods = (now - start) / window;
      restart(Ceilings.saturatingAdd(start, Ceilings.saturatingMultiply(periods, window)));
      guessed = true;
    }
    if (quota <= 0) {
      return 0;
    }
    if (guessed && served == 0) {
      // A start the window's length put here, not a refusal: its first request confirms it alone.
      return ALONE;
    }
    if (sent < quota) {
      return 0;
    }
    if (window > 0 && start != Long.MIN_VALUE && nextStart == Long.MIN_VALUE) {
      return Math.max(1, Ceilings.saturatingAdd(start, window) - now);
    }
    return ALONE;
  }

  private void restart(long at) {
    start = at;
    sent = 0;
    served = 0;
  }

  /** A request of the scope was admitted. */
  void admitted() {
    sent = Ceilings.saturatingAdd(sent, 1);
  }

  /** A request admitted at {@code admittedAt} was answered; {@code refused}: with a refusal. */
  void answered(long admittedAt, boolean refused) {
    if (!refused && (start == Long.MIN_VALUE || admittedAt >= start)) {
      served = Ceilings.saturatingAdd(served, 1);
    }
  }

  /**
   * A request admitted at {@code admittedAt} was refused (429) with a Retry-After that holds the
   * scope until {@code until}: the window it was sent in served what it served, and the next starts
   * then. A window learnt longer than {@code maxWindow} is not kept.
   */
  void refused(long admittedAt, long until, long maxWindow) {
    if (start != Long.MIN_VALUE && admittedAt < start) {
      return;
    }
    if (served > 0) {
      quota = served;
    }
    if (guessed) {
      // The window's length put its start too early: learn it again from the next two refusals.
      window = -1;
    } else if (start != Long.MIN_VALUE && until > start && nextStart == Long.MIN_VALUE) {
      // A window longer than the client ever waits (Ceilings#maxReset) is not waited for: the
      // request after the quota goes alone instead, as while the window is unknown.
      window = until - start <= maxWindow ? until - start : -1;
    }
    if (nextStart == Long.MIN_VALUE || until > nextStart) {
      nextStart = until;
    }
  }

  @Override
  public String toString() {
    return "RefusalWindow[quota=" + quota + ", window=" + window + ", sent=" + sent + ", served=" + served + "]";
  }
}
