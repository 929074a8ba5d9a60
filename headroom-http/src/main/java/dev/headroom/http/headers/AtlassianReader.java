package dev.headroom.http.headers;

import dev.headroom.http.HeaderNames;
import dev.headroom.http.headers.Diagnostic.Kind;
import java.time.Instant;
import java.util.Optional;

/**
 * Atlassian's fields (Jira and Confluence Cloud), as "Rate limiting", section "Rate limit
 * responses", documents them (https://developer.atlassian.com/cloud/jira/platform/rate-limiting/,
 * https://developer.atlassian.com/cloud/confluence/rate-limiting/): {@code X-RateLimit-Limit},
 * {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset} as an ISO 8601 instant
 * ({@code 2026-03-26T16:00Z}, read against the response's {@code Date}), {@code X-RateLimit-NearLimit:
 * true} (less than a fifth of the budget left) and {@code RateLimit-Reason} (which budget refused:
 * {@code jira-burst-based}, {@code jira-quota-tenant-based}, ...), both noted; and the IETF form
 * behind a prefix, {@code Beta-RateLimit-Policy: "tenant-app-quota";q=100100;w=3600} with
 * {@code Beta-RateLimit: "tenant-app-quota";r=17842;t=2107}, read by the IETF reader itself.
 *
 * <p>Recognised by an ISO 8601 reset or by any of the other fields, which no other dialect sends.
 * Before this reader, the ISO reset was malformed to the X-RateLimit reader, which left the
 * budget without a reset, and a client waited its longest (ten minutes) at the end of each one.
 */
final class AtlassianReader implements VendorReader {

  static final String NEAR_LIMIT = "X-RateLimit-NearLimit";
  static final String REASON = "RateLimit-Reason";
  static final String BETA = "Beta-";

  @Override
  public VendorDialect dialect() {
    return VendorDialect.ATLASSIAN;
  }

  @Override
  public boolean read(VendorFields f) {
    String reset = f.value(HeaderNames.X_RATELIMIT_RESET);
    Optional<Instant> instant = reset == null ? Optional.empty() : VendorValues.instant(reset);
    String nearLimit = f.value(NEAR_LIMIT);
    String reason = f.value(REASON);
    boolean beta = f.value(BETA + HeaderNames.RATELIMIT) != null || f.value(BETA + HeaderNames.RATELIMIT_POLICY) != null;
    if (instant.isEmpty() && nearLimit == null && reason == null && !beta) {
      return false;
    }
    f.claim(HeaderNames.X_RATELIMIT_LIMIT, HeaderNames.X_RATELIMIT_REMAINING, HeaderNames.X_RATELIMIT_RESET, NEAR_LIMIT,
        REASON);
    if (nearLimit != null || reason != null) {
      f.note(Kind.UNKNOWN_PARAMETER, reason != null ? REASON : NEAR_LIMIT,
          (reason == null ? "" : "reason " + reason) + (nearLimit == null ? "" : (reason == null ? "" : ", ")
              + "near limit " + nearLimit) + " (Atlassian)");
    }
    f.budget(dialect(), null).limit(f.count(HeaderNames.X_RATELIMIT_LIMIT))
        .remaining(f.count(HeaderNames.X_RATELIMIT_REMAINING))
        .resetSeconds(reset == null ? f.secondsUntil(Optional.empty())
            : f.secondsUntil(f.read(HeaderNames.X_RATELIMIT_RESET, VendorValues::instant, "an ISO 8601 instant")))
        .add();
    if (beta) {
      f.claim(BETA + HeaderNames.RATELIMIT, BETA + HeaderNames.RATELIMIT_POLICY);
      f.prefixed(BETA, dialect());
    }
    return true;
  }
}
