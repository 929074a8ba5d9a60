package dev.headroom.client;

import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.ServiceLimitItem;
import dev.headroom.http.headers.QuotaPolicyItem;

/**
 * What a report's {@code t} names: the instant the quota is whole again, or the instant more quota
 * is available, or either.
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>draft-ietf-httpapi-ratelimit-headers-09 section 4.1.2 gives {@code t} as "the number of
 * seconds until the quota associated with the quota policy resets"; draft-10 and -11 section 4.1.2
 * give it as the time until more quota is available ("until additional quota is made available"),
 * and let a refusal's Retry-After be later than it (section 6); the editor's draft after -11 spells
 * the same {@code w}. For a fixed window the two name one instant, its end; for a token bucket of
 * 5 per 10 s after two requests, draft-09 says {@code r=3;t=4} (full again) and draft-10
 * {@code r=3;t=2} (its next token); for a sliding window draft-09 names the instant the estimate is
 * empty, draft-10 the instant it falls by one unit.
 *
 * <p>The wire does not always say which: draft-09, -10 and -11 write the same {@code RateLimit}
 * list ({@code r}, {@code t}), and headroom-http's parser reports all three as
 * {@link HeaderDialect#IETF}. So a reading is {@link #EITHER} there, and the client decides from the
 * readings themselves: a fixed window is recognised whatever {@code t} meant; a token bucket is
 * taken to say until full only once a report's {@code t} is longer than a refill rounded up, which
 * no draft-10 time until the next token can be ({@link ObservedAlgorithm}); a sliding window's
 * phases are checked under both meanings, and each stands while some phase fits every report under
 * it ({@link SlidingWindowModel}). Until then the client assumes the weaker promise of the two: at
 * {@code receipt + t} one unit more (which draft-09's whole quota includes), never the whole quota.
 *
 * <p>Every other source names the reset: the -03 to -07 fields, {@code X-RateLimit-Reset}, the
 * vendors' own fields, the vend extension's {@code resets_in}, a caller's
 * {@link Budgets#observe}, a discovery plan's window. A vendor's reading that states neither a reset
 * nor a window (Azure Resource Manager's {@code x-ms-ratelimit-remaining-*}, which state only what
 * remains) names none ({@link #UNSTATED}).
 */
enum ResetMeaning {
  /** Until the quota resets, whole again (draft-09 section 4.1.2 and every older form). */
  UNTIL_RESET,
  /** Until more quota is available (draft-10 and -11 section 4.1.2; the editor's draft's {@code w}). */
  UNTIL_MORE,
  /** A {@code RateLimit} list field's {@code t}: draft-09's meaning or draft-10's, not told apart on the wire. */
  EITHER,
  /**
   * Nothing says when quota returns: Azure Resource Manager states only what remains
   * ({@code x-ms-ratelimit-remaining-*}), which headroom-http reads with an empty reset and no
   * window. The units stated are spent at once; once they are, requests go one at a time, each
   * alone, and each answer (its remaining count, or a refusal's Retry-After) decides the next, as
   * a reset beyond {@link Ceilings#maxReset()} is probed. No reset is waited for, nor invented.
   */
  UNSTATED;

  /** What {@code t} of {@code limit} names: by the dialect it was read in, and whether a vendor's reading states a reset or a window at all. */
  static ResetMeaning of(ServiceLimitItem limit, QuotaPolicyItem policy) {
    if (limit.vendor().isPresent()) {
      boolean windowStated = policy != null && policy.window().isPresent();
      return limit.reset().isEmpty() && !windowStated ? UNSTATED : UNTIL_RESET;
    }
    if (limit.dialect() == HeaderDialect.IETF_NEXT) {
      return UNTIL_MORE;
    }
    return limit.dialect() == HeaderDialect.IETF ? EITHER : UNTIL_RESET;
  }
}
