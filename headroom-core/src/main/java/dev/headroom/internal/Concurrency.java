package dev.headroom.internal;

import dev.headroom.QuotaPolicy;
import java.util.Arrays;

/**
 * Concurrency leases: {@link dev.headroom.Algorithm#CONCURRENCY}, for {@code concurrent-requests}.
 *
 * <h2>How is this designed, and why?</h2>
 * A counter of requests in flight would be enough if every release arrived. Releases get lost
 * (a crashed worker, a dropped connection the server never noticed), and a lost release would leak
 * a unit for ever. So each admitted request takes a <em>lease</em>: an identifier, its units, and an
 * expiry {@code now + leaseTimeout}. The key keeps its live leases ({@link Leases}); expired leases
 * are dropped on every access, so a lost release costs capacity for at most the lease timeout.
 *
 * <pre>
 *   held    = sum of units of leases with expiry &gt; now
 *   allowed iff held + n &lt;= q        (then add lease {id, n, now + leaseTimeout})
 * </pre>
 * Worked numbers: {@code q = 2}, lease timeout 30 s. Two uploads hold both units; a third request
 * is refused. One upload finishes and releases its lease: the next request is allowed. Had the
 * finished upload's release been lost, its unit would come back 30 s after it was taken.
 *
 * <h2>What the service limit says</h2>
 * <ul>
 *   <li>{@code r} = {@code q - held}.
 *   <li>{@code t} = 0 when nothing is held; otherwise the shorter of {@link #HINT_NANOS} and the
 *       time until the earliest lease times out. Leases come back when requests complete, which no
 *       store can foresee, so {@code t} is a hint to look again soon, not a promise. The hint is the
 *       same in both meanings of {@code t}: draft-ietf-httpapi-ratelimit-headers-09's "until the
 *       quota resets" and draft-10's and -11's "until more quota is available" (section 4.1.2 of
 *       each), since the first lease to come back is both.
 *   <li>Retry-After when refused: the same hint.
 * </ul>
 */
public final class Concurrency {

  /** The longest {@code t} and Retry-After a concurrency policy reports: one second. */
  public static final long HINT_NANOS = 1_000_000_000L;

  private Concurrency() {}

  /** The live leases of one key. Immutable; arrays are never shared with callers that write. */
  public static final class Leases {
    public static final Leases EMPTY = new Leases(new long[0], new long[0], new long[0], 0);

    final long[] ids;
    final long[] units;
    final long[] expiries;
    public final long held;

    Leases(long[] ids, long[] units, long[] expiries, long held) {
      this.ids = ids;
      this.units = units;
      this.expiries = expiries;
      this.held = held;
    }

    public int size() {
      return ids.length;
    }

    /** The earliest expiry among the leases, or {@link Long#MAX_VALUE} when there are none. */
    public long earliestExpiry() {
      long min = Long.MAX_VALUE;
      for (long e : expiries) {
        min = Math.min(min, e);
      }
      return min;
    }

    /** The latest expiry among the leases, or {@link Long#MIN_VALUE} when there are none. */
    public long latestExpiry() {
      long max = Long.MIN_VALUE;
      for (long e : expiries) {
        max = Math.max(max, e);
      }
      return max;
    }

    /** These leases without the ones expired at {@code now}. */
    public Leases prune(long now) {
      int live = 0;
      for (long e : expiries) {
        if (e > now) {
          live++;
        }
      }
      if (live == ids.length) {
        return this;
      }
      long[] i2 = new long[live];
      long[] u2 = new long[live];
      long[] e2 = new long[live];
      long held2 = 0;
      int j = 0;
      for (int i = 0; i < ids.length; i++) {
        if (expiries[i] > now) {
          i2[j] = ids[i];
          u2[j] = units[i];
          e2[j] = expiries[i];
          held2 += units[i];
          j++;
        }
      }
      return new Leases(i2, u2, e2, held2);
    }

    /** These leases plus one more. */
    public Leases with(long id, long leaseUnits, long expiry) {
      int n = ids.length;
      long[] i2 = Arrays.copyOf(ids, n + 1);
      long[] u2 = Arrays.copyOf(units, n + 1);
      long[] e2 = Arrays.copyOf(expiries, n + 1);
      i2[n] = id;
      u2[n] = leaseUnits;
      e2[n] = expiry;
      return new Leases(i2, u2, e2, held + leaseUnits);
    }

    /** These leases without the one with the given id (unchanged if it is not there). */
    public Leases without(long id) {
      for (int i = 0; i < ids.length; i++) {
        if (ids[i] == id) {
          int n = ids.length;
          long[] i2 = new long[n - 1];
          long[] u2 = new long[n - 1];
          long[] e2 = new long[n - 1];
          System.arraycopy(ids, 0, i2, 0, i);
          System.arraycopy(ids, i + 1, i2, i, n - i - 1);
          System.arraycopy(units, 0, u2, 0, i);
          System.arraycopy(units, i + 1, u2, i, n - i - 1);
          System.arraycopy(expiries, 0, e2, 0, i);
          System.arraycopy(expiries, i + 1, e2, i, n - i - 1);
          return new Leases(i2, u2, e2, held - units[i]);
        }
      }
      return this;
    }
  }

  /**
   * Evaluates a request of {@code cost} units; when allowed, the new state holds a lease with the
   * given id.
   */
  public static Evaluation evaluate(QuotaPolicy policy, Leases state, long now, long cost, long leaseId) {
    long q = policy.quota();
    Leases live = state.prune(now);
    if (cost <= q && live.held + cost <= q) {
      Leases next = cost == 0 ? live : live.with(leaseId, cost, Saturating.add(now, policy.leaseTimeout().toNanos()));
      long h = hint(next, now);
      return new Evaluation(true, next, q - next.held, h, h, 0);
    }
    long hint = hint(live, now);
    return new Evaluation(false, live, q - live.held, hint, hint, cost > q ? policy.leaseTimeout().toNanos() : hint);
  }

  /** {@code t} and Retry-After: at most {@link #HINT_NANOS}, 0 when nothing is held. */
  public static long hint(Leases leases, long now) {
    if (leases.held == 0) {
      return 0;
    }
    return Math.max(1, Math.min(HINT_NANOS, leases.earliestExpiry() - now));
  }

  /** The instant after which the state equals an absent key's. */
  public static long expiresAt(Leases leases) {
    return leases.latestExpiry();
  }
}
