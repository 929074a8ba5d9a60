package dev.headroom.http.headers;

/**
 * Anthropic's fields, as "Rate limits", section "Response headers", documents them
 * (https://docs.anthropic.com/en/api/rate-limits): for each budget, {@code requests},
 * {@code tokens}, {@code input-tokens} and {@code output-tokens},
 * {@code anthropic-ratelimit-<budget>-limit}, {@code -remaining} and {@code -reset}, the instant
 * the budget is back to its limit in RFC 3339 ({@code 2026-11-28T10:00:30Z}), read against the
 * response's {@code Date}. A 429 carries {@code retry-after} in seconds (read as RFC 9110's).
 *
 * <p>Units: {@code requests}, {@code tokens}, {@code input-tokens}, {@code output-tokens} (the
 * input and output budgets are metered apart).
 */
final class AnthropicReader implements VendorReader {

  static final String PREFIX = "anthropic-ratelimit-";

  @Override
  public VendorDialect dialect() {
    return VendorDialect.ANTHROPIC;
  }

  @Override
  public boolean read(VendorFields f) {
    boolean seen = false;
    for (String budget : new String[] {"requests", "tokens", "input-tokens", "output-tokens"}) {
      String limit = PREFIX + budget + "-limit";
      String remaining = PREFIX + budget + "-remaining";
      String reset = PREFIX + budget + "-reset";
      if (f.value(limit) == null && f.value(remaining) == null && f.value(reset) == null) {
        continue;
      }
      f.claim(limit, remaining, reset);
      seen |= f.budget(dialect(), budget).unit(budget).limit(f.count(limit)).remaining(f.count(remaining))
          .resetSeconds(f.secondsUntil(f.read(reset, VendorValues::instant, "an RFC 3339 date-time"))).add();
    }
    return seen;
  }
}
