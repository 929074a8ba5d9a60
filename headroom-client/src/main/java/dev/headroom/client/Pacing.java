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
   * server needs.
   */
  BURST,
  /**
   * Spread the remaining units until the reset, crediting the refill the policy implies. After an
   * admission at {@code a}, the next one waits {@code 1 / rate} with {@code H = reset - a} and
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
   * approaching quota limits", section 7). The default.
   */
  EVEN
}
