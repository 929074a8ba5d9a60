package dev.headroom.client;

import dev.headroom.http.headers.ServiceLimitItem;
import dev.headroom.http.headers.VendorDialect;
import java.util.Set;

/**
 * What a vendor documents of the algorithm behind a budget it reports, taken before the reports
 * show it ({@link ObservedAlgorithm}).
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>{@link Pacing#ADAPTIVE} spaces the units of a budget whose algorithm it has not recognised
 * evenly until its reset ({@link EvenSpacing}), and recognises a fixed window only once {@code r}
 * jumps back up past a reset. That costs nothing for a budget whose window is the one that binds,
 * but a long window beside a short one is never seen to reset within the work: Kong's
 * {@code X-RateLimit-Remaining-Minute: 119} beside a 5 s window of 10 spaced every request of the
 * short window by the minute's even spacing (about 0.2 s, {@code 117} units over the minute's
 * rest plus its refill credit), so a first window of one second took four requests, not ten,
 * and the work needed a window more (1.35x the ideal schedule at 4.0 s into the 5 s window).
 *
 * <p>Kong Gateway's rate-limiting plugin counts each named window ({@code Second} to {@code Year})
 * in a fixed window starting on the UTC second, minute, hour, day, month and year (its "Rate
 * Limiting" page; headroom-http's Kong reader names those budgets by the window, in lower case):
 * such a budget is a fixed window from its first report. A refill the reports show still makes it
 * refilling ({@link ObservedAlgorithm#kind}). Kong's own window sizes (rate-limiting-advanced,
 * sliding by default) and the {@code RateLimit-*} budget are learnt from their reports as any other.
 *
 * <p>Shopify's REST Admin API states only the requests in its bucket and its size
 * ({@code X-Shopify-Shop-Api-Call-Limit: 32/40}); the bucket leaks a twentieth of its size a second
 * by Shopify's documentation, not by the response, and headroom-http's reader computes {@code t}
 * (the time until empty) and the window from that rate. The client spends it as the token bucket
 * it then is, crediting the leak between reports, for as long as the answers bear the leak out.
 * When they contradict it (a refusal, which paced by a real leak it never gets, or a count that
 * did not drain: two answers to requests each alone on the wire, the second saying fewer units
 * than the leak since the first gave back, less the request itself and a unit of rounding), the
 * leak is not assumed again for that budget: its {@code t} is read as no reset at all
 * ({@link ResetMeaning#UNSTATED}, as Azure Resource Manager's budgets are): what remains is spent at
 * once, and once spent one request at a time asks, a refusal's Retry-After saying when quota
 * returns. Behind a fixed window of 10 per 5 s the leak credited a unit every two seconds that
 * the window never gave: a refusal in every window, and 1.16x the ideal schedule.
 */
final class DocumentedAlgorithm {

  /** The budgets headroom-http's Kong reader names by a window Kong counts as a fixed window. */
  static final Set<String> KONG_FIXED_WINDOWS = Set.of("second", "minute", "hour", "day", "month", "year");

  private DocumentedAlgorithm() {}

  /** Whether {@code limit}'s reset was computed from a leak the vendor documents and the response does not state. */
  static boolean assumesLeak(ServiceLimitItem limit) {
    return limit.vendor().orElse(null) == VendorDialect.SHOPIFY;
  }

  /**
   * Whether an answer contradicts the documented leak of budget {@code known} (null before its first
   * report): it is a refusal, or it reports {@code said} units left for request number {@code seq},
   * admitted at {@code admittedAt} and alone on the wire ({@code ordered}), right after the budget's
   * last report came from the request before it, also alone, and the leak of {@code quota} per
   * {@code window} since that report's receipt gave back more than {@code said} shows, less this
   * request and one unit of rounding (a count Shopify reports whole).
   */
  static boolean leakContradicted(TrackedBudget known, long said, long quota, long window, boolean refused, boolean ordered,
      long seq, long admittedAt) {
    if (known == null) {
      return false;
    }
    if (refused) {
      return true;
    }
    if (!ordered || known.leakSeq < 0 || seq != known.leakSeq + 1 || quota <= 0 || window <= 0 || admittedAt <= known.leakAt) {
      return false;
    }
    long drained = (long) Math.min(quota, (double) (admittedAt - known.leakAt) * quota / window);
    long expected = Math.min(quota, known.leakSaid + drained) - 1;
    return said < expected - 1;
  }

  /** Whether the vendor documents {@code limit}'s budget as a fixed window. */
  static boolean fixedWindow(ServiceLimitItem limit) {
    return limit.vendor().orElse(null) == VendorDialect.KONG && limit.name().map(KONG_FIXED_WINDOWS::contains).orElse(false);
  }
}
