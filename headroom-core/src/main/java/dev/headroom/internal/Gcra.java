package dev.headroom.internal;


/**
 * Token bucket as the Generic Cell Rate Algorithm: {@link dev.headroom.Algorithm#TOKEN_BUCKET}.
 *
 * <h2>How is this designed, and why?</h2>
 * A token bucket of capacity {@code q} refilled at {@code q} tokens per window {@code w} is usually
 * kept as two numbers (tokens, last refill). GCRA keeps one: the <em>theoretical arrival time</em>
 * {@code TAT}, the instant at which the bucket would be full again if nothing else arrived. Each
 * unit moves {@code TAT} forward by the emission interval {@code T = ceil(w / q)} nanoseconds; the
 * bucket may run {@code tau = q * T} ahead of now. Refill is lazy (no timer), the state is one
 * {@code long}, and the arithmetic is exact integers.
 *
 * <p>A request of cost {@code n} at time {@code now}:
 * <pre>
 *   base   = max(TAT, now)
 *   newTAT = base + n * T
 *   allowed  iff  newTAT - now &lt;= tau          (then TAT := newTAT)
 * </pre>
 * Worked numbers: {@code q = 10, w = 60 s} gives {@code T = 6 s}, {@code tau = 60 s}. Ten requests at
 * {@code now = 0} move TAT to 60 s: all allowed; the eleventh would need TAT = 66 s &gt; 0 + 60 s and
 * is refused, with Retry-After {@code newTAT - tau - now = 6 s}: one token's refill.
 *
 * <p>Rounding {@code T} up keeps the burst exactly {@code q} and the rate at most {@code q} per
 * {@code w} (it is below by less than one nanosecond per unit). Policies whose quota exceeds the
 * window in nanoseconds are refused by the policy ({@code QuotaPolicy}), which derives {@code T}
 * ({@code emissionIntervalNanos()}) and {@code tau} ({@code burstToleranceNanos()}): this class takes
 * them as plain numbers, so the algorithm depends on no policy type.
 *
 * <h2>What the service limit says</h2>
 * <ul>
 *   <li>{@code r} (remaining) = {@code floor((now + tau - TAT) / T)} clamped to {@code 0..q}: tokens
 *       in the bucket now.
 *   <li>{@code t} has two meanings, one per generation of the draft, and Headroom computes both
 *       ({@link dev.headroom.PolicyOutcome#reset()} and {@link dev.headroom.PolicyOutcome#nextQuota()}):
 *       <ul>
 *       <li>draft-ietf-httpapi-ratelimit-headers-09 section 4.1.2, "until the quota resets":
 *           {@code max(0, TAT - now)}, the time until the bucket is full again
 *           ({@link #resetNanos});
 *       <li>draft-10 and -11 section 4.1.2, "until additional quota is made available":
 *           {@code TAT + (r + 1) * T - tau - now}, the time until the next token drops in, the
 *           Retry-After of a request for {@code r + 1} tokens; 0 when the bucket is full, since no
 *           more quota can come ({@link #nextQuotaNanos}).
 *       </ul>
 *       Worked numbers: {@code q = 5, w = 10 s} ({@code T = 2 s}, {@code tau = 10 s}); two requests
 *       at {@code now = 0} leave TAT = 4 s and {@code r = 3}: draft-09 says {@code t = 4}, draft-10
 *       says {@code t = 2}. With {@code q = 2, w = 60 s} ({@code T = 30 s}) two requests leave
 *       {@code r = 0}: {@code t = 60} and {@code t = 30}; the third is refused with Retry-After
 *       30 s, which is one token's wait in both.
 *   <li>Retry-After when refused = {@code base + n*T - tau - now}: time until {@code n} tokens are
 *       there. Since a refused request asks for more than {@code r} tokens, it is never earlier
 *       than the draft-10 {@code t}, as draft-10 section 6 asks.
 * </ul>
 * Charging after the fact ({@link dev.headroom.Store#charge}) moves TAT with no check, so the bucket
 * can go into debt ({@code TAT} beyond {@code now + tau}); later requests are refused until time
 * catches up. A refund moves TAT back, never below {@code now} in effect (any TAT at or before now
 * means "full"). A key whose {@code TAT <= now} is full and indistinguishable from an absent key,
 * so it can be forgotten: {@link #expiresAt}.
 */
public final class Gcra {

  private Gcra() {}

  /** The TAT after admitting {@code cost} units, or {@link Long#MIN_VALUE} when refused. */
  public static long tryAcquire(long tat, long now, long cost, long interval, long tolerance) {
    long base = Math.max(tat, now);
    long newTat = Saturating.add(base, cost == 1 ? interval : Saturating.multiply(cost, interval));
    return newTat - now <= tolerance ? newTat : Long.MIN_VALUE;
  }

  /** The TAT after charging {@code cost} units unconditionally (debt allowed). */
  public static long charge(long tat, long now, long cost, long interval) {
    return Saturating.add(Math.max(tat, now), Saturating.multiply(cost, interval));
  }

  /** The TAT after giving back {@code cost} units. */
  public static long refund(long tat, long now, long cost, long interval) {
    if (tat <= now) {
      return tat;
    }
    return Math.max(now, tat - Saturating.multiply(cost, interval));
  }

  /** {@code r} for a given TAT. */
  public static long remaining(long tat, long now, long quota, long interval, long tolerance) {
    long headroom = now + tolerance - Math.max(tat, now);
    if (headroom <= 0) {
      return 0;
    }
    return Math.min(quota, headroom / interval);
  }

  /** {@code t} for a given TAT. */
  public static long resetNanos(long tat, long now) {
    return tat <= now ? 0 : tat - now; // an untouched key's TAT is near Long.MIN_VALUE: no wrap
  }

  /**
   * {@code t} as draft-10 and later mean it: the time until {@code r} grows by one token for a
   * given TAT, 0 when the bucket is full. {@code TAT - now} may be passed as {@code tat} with
   * {@code now = 0}: only the difference counts.
   */
  public static long nextQuotaNanos(long tat, long now, long quota, long interval, long tolerance) {
    if (tat <= now) {
      return 0;
    }
    long r = remaining(tat, now, quota, interval, tolerance);
    return r >= quota ? 0 : retryAfterNanos(tat, now, r + 1, interval, tolerance);
  }

  /** Retry-After for a refused request of {@code cost} units. */
  public static long retryAfterNanos(long tat, long now, long cost, long interval, long tolerance) {
    long base = Math.max(tat, now);
    return Saturating.add(base, Saturating.multiply(cost, interval)) - tolerance - now;
  }

  /** The instant after which the key's state equals an absent key's. */
  public static long expiresAt(long tat) {
    return tat;
  }
}
