package dev.headroom.http.headers;

/**
 * The {@code X-Rate-Limit-*} fields (a hyphen between Rate and Limit) of Okta, as "Rate limit best
 * practices" documents them (https://developer.okta.com/docs/reference/rl-best-practices/), and of
 * X, as "Rate limits" documents them (https://docs.x.com/x-api/fundamentals/rate-limits):
 * {@code X-Rate-Limit-Limit}, {@code X-Rate-Limit-Remaining} and {@code X-Rate-Limit-Reset}, the
 * reset in UTC epoch seconds (read by value: below {@value FieldParser#EPOCH_SECONDS_THRESHOLD},
 * delta seconds). One budget.
 */
final class XRateLimitReader implements VendorReader {

  static final String LIMIT = "X-Rate-Limit-Limit";
  static final String REMAINING = "X-Rate-Limit-Remaining";
  static final String RESET = "X-Rate-Limit-Reset";

  @Override
  public VendorDialect dialect() {
    return VendorDialect.X_RATE_LIMIT;
  }

  @Override
  public boolean read(VendorFields f) {
    if (f.value(LIMIT) == null && f.value(REMAINING) == null && f.value(RESET) == null) {
      return false;
    }
    f.claim(LIMIT, REMAINING, RESET);
    return f.budget(dialect(), null).limit(f.count(LIMIT)).remaining(f.count(REMAINING))
        .resetSeconds(GitHubReader.epochOrDelta(f, RESET)).add();
  }
}
