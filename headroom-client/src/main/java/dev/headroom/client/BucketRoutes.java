package dev.headroom.client;

import dev.headroom.http.headers.RateLimitFields;
import dev.headroom.http.headers.ServiceLimitItem;
import dev.headroom.http.headers.VendorDialect;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * Which requests a named vendor bucket paces: the routes it answered for.
 *
 * <h2>How is this designed, and why?</h2>
 *
 * <p>Discord's {@code X-RateLimit-Bucket} names the budget of a route ("Rate Limits", section
 * "Header Format": routes that return the same bucket share one budget), and one origin has many
 * buckets, each a budget of its own. Kept as policies of the origin's scope, every bucket gated
 * every request: a route whose bucket was spent held the requests of every other route until its
 * reset. So a bucket's budget remembers the routes (method and path) whose answers named it, and
 * paces those: a request of a route some bucket answered for draws from that bucket only (and
 * from every budget not tied to routes); a route no bucket answered for yet draws from every
 * bucket, as before, since nothing says which it shares (its first answer says). A route answered
 * by another bucket later moves to it (Discord may remap a route). Worked numbers: {@code GET /a}
 * answered by bucket {@code A} with {@code remaining=0}, reset in 4 s, and {@code GET /b} by
 * {@code B} with {@code remaining=9}: the next {@code GET /b} goes at once, the next {@code GET /a}
 * in 4 s, a first {@code GET /c} in 4 s.
 *
 * <p>Memory is bounded: at most {@value #MAX_ROUTES} routes per bucket, the oldest forgotten first
 * (a forgotten route draws from every bucket again until its next answer). Not thread-safe: the
 * tracker's lock guards it.
 */
final class BucketRoutes {

  /** Most routes remembered per bucket. */
  static final int MAX_ROUTES = 256;

  private BucketRoutes() {}

  /** The route of a request: its method and raw path. */
  static String route(String method, String path) {
    return method + " " + path;
  }

  /** Ties the named buckets of an answer ({@code fields}) in scope {@code s} to the route it answered. */
  static void bind(ScopeState s, RateLimitFields fields, String route) {
    for (ServiceLimitItem limit : fields.limits()) {
      if (!limit.vendor().filter(v -> v == VendorDialect.DISCORD).isPresent() || limit.name().isEmpty()) {
        continue;
      }
      TrackedBudget bucket = s.entries.get(TrackedBudget.key(limit.name().get(), limit.partitionKey().orElse(null)));
      if (bucket == null) {
        continue;
      }
      for (TrackedBudget other : s.entries.values()) {
        if (other != bucket && other.routes != null) {
          other.routes.remove(route);
        }
      }
      if (bucket.routes == null) {
        bucket.routes = new LinkedHashSet<>();
      }
      bucket.routes.remove(route);
      bucket.routes.add(route);
      if (bucket.routes.size() > MAX_ROUTES) {
        Iterator<String> eldest = bucket.routes.iterator();
        eldest.next();
        eldest.remove();
      }
    }
  }

  /** Leaves out of {@code budgets} the buckets tied to other routes, when one of them is tied to {@code route}. */
  static void keepRoute(List<TrackedBudget> budgets, String route) {
    boolean known = false;
    for (TrackedBudget e : budgets) {
      known |= e.routes != null && e.routes.contains(route);
    }
    if (known) {
      budgets.removeIf(e -> e.routes != null && !e.routes.contains(route));
    }
  }
}
