package dev.headroom.client;

/**
 * How the client spends the remaining quota a server reports.
 *
 * <p>What both promise (draft-ietf-httpapi-ratelimit-headers-09 section 7):
 * <ul>
 *   <li>Never more than {@code r} units before the reset: "A client SHOULD NOT exceed the quota
 *       units conveyed by the remaining parameter before the time window expressed in the reset
 *       parameter". The budget is counted down locally as requests go and re-synced on every
 *       response that carries fields; no request goes while it says zero.
 *   <li>Retry-After wins: when a response carries both, Retry-After holds every request of the scope
 *       and becomes the reset of every limit reported with it.
 *   <li>Malformed fields are ignored; responses from a cache are ignored; the client does not assume
 *       later responses carry the same fields (the last budget counts down until its reset).
 *   <li>RateLimit-Policy is informative: it only ever changes <em>when</em> units are spent, never
 *       how many.
 * </ul>
 * They differ in when within the window the units go.
 */
public enum Pacing {
  /**
   * Send while {@code r > 0}, then wait for the reset: lowest latency while quota lasts, a stall
   * afterwards ("consuming all the quota according to the exposed limits and then wait", section 7).
   * {@code t} is whole seconds rounded up, so each stall can be up to a second longer than the
   * server needs, less what the reports of a recognised fixed window narrow it to; a recognised
   * token bucket's refill is credited between reports, one unit per {@code w / q}.
   */
  BURST,
  /**
   * Spread the remaining units until the reset, crediting the refill the policy implies. After an
   * admission at {@code a}, the next one waits {@code 1 / rate} with {@code H = L - a}, {@code L}
   * the last instant a unit surely counts in the window ({@code reset - 1 s}, as {@code t} is
   * rounded up, or the lower bound learnt for a fixed window: the last unit is spent within the
   * window, not at its reset), and
   * <pre>
   *   rate = r / H                                       (no policy known)
   *   rate = max(r / H, (r - 2) / H + q / w)             (RateLimit-Policy says q per w)
   * </pre>
   * Without a policy the units are spent evenly and exactly by the reset. With one, a token bucket
   * refills at {@code q / w} meanwhile, so the units above a reserve of two are spent by the reset on
   * top of the refill: against a token bucket the work takes about the least time the server allows,
   * {@code (n - q) * w / q} plus two refills, with no stall. The reserve keeps the reported {@code r}
   * off zero (a token bucket at zero says {@code t} until it is full again, a whole window). Against
   * a fixed window the credit only makes the units go sooner within the window; how many go is still
   * {@code r}. The spacing also slows down as {@code r} approaches zero ("slowing down ... when
   * approaching quota limits", section 7).
   */
  EVEN,
  /**
   * Spend as the server's algorithm, recognised from its reports ({@code ObservedAlgorithm}), lets
   * the work finish soonest: against a fixed window (whose {@code r} jumps back up past the reset
   * and never before) as {@link #BURST}, every unit as soon as asked for, the reset learnt to within
   * the latency from reports decided at different fractions of a second; against a token bucket
   * (which refills between reports, {@code t} its time until full) as {@link #BURST} with the refill
   * credited, so that after the burst requests follow the refill, one per {@code w / q}; against
   * anything else, and until the algorithm is recognised, as {@link #EVEN}. The first request after
   * a reset the client restarted a window at goes alone, and its answer confirms the new window.
   * The default.
   */
  ADAPTIVE
}
