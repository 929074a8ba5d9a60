package dev.headroom.http.headers;

import dev.headroom.http.headers.Diagnostic.Kind;
import java.util.OptionalLong;

/**
 * Discord's fields, as "Rate Limits", section "Header Format", documents them
 * (https://discord.com/developers/docs/topics/rate-limits): {@code X-RateLimit-Limit},
 * {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset} (epoch seconds with a fraction,
 * {@code 1470173023.123}), {@code X-RateLimit-Reset-After} (seconds with a fraction, {@code 1.234};
 * read first, being relative), {@code X-RateLimit-Bucket} (routes that return the same bucket share
 * one budget: the bucket names it), and on a 429 {@code X-RateLimit-Global} (the limit is global,
 * not the route's) and {@code X-RateLimit-Scope} ({@code user}, {@code global} or {@code shared}),
 * both noted. Recognised by {@code X-RateLimit-Bucket}, {@code -Reset-After}, {@code -Global} or
 * {@code -Scope}, which no other dialect sends. The 429 body's {@code retry_after} restates
 * Retry-After.
 */
final class DiscordReader implements VendorReader {

  static final String BUCKET = "x-ratelimit-bucket";
  static final String RESET_AFTER = "x-ratelimit-reset-after";
  static final String GLOBAL = "x-ratelimit-global";
  static final String SCOPE = "x-ratelimit-scope";

  @Override
  public VendorDialect dialect() {
    return VendorDialect.DISCORD;
  }

  @Override
  public boolean read(VendorFields f) {
    String bucket = f.value(BUCKET);
    String global = f.value(GLOBAL);
    String scope = f.value(SCOPE);
    if (bucket == null && f.value(RESET_AFTER) == null && global == null && scope == null) {
      return false;
    }
    f.claim(GitHubReader.LIMIT, GitHubReader.REMAINING, GitHubReader.RESET, BUCKET, RESET_AFTER, GLOBAL, SCOPE);
    OptionalLong reset = f.read(RESET_AFTER, VendorValues::seconds, "seconds such as 1.234")
        .map(d -> OptionalLong.of(VendorValues.wholeSeconds(d)))
        .orElseGet(() -> f.secondsUntil(f.read(GitHubReader.RESET, VendorValues::epochSeconds,
            "epoch seconds such as 1470173023.123")));
    if (global != null || scope != null) {
      f.note(Kind.UNKNOWN_PARAMETER, scope != null ? SCOPE : GLOBAL, "scope " + (scope == null ? "global" : scope)
          + (global == null ? "" : ", global " + global) + " (Discord)");
    }
    f.budget(dialect(), bucket == null ? null : bucket.strip()).limit(f.count(GitHubReader.LIMIT))
        .remaining(f.count(GitHubReader.REMAINING)).resetSeconds(reset).add();
    return true;
  }
}
