package dev.headroom.http.headers;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * GitHub's fields, as "Rate limits for the REST API", section "Checking the status of your rate
 * limit", documents them
 * (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api):
 * {@code x-ratelimit-limit}, {@code x-ratelimit-remaining}, {@code x-ratelimit-used},
 * {@code x-ratelimit-reset} (the reset in UTC epoch seconds) and {@code x-ratelimit-resource}, the
 * budget the request counted against ({@code core}, {@code search}, {@code graphql}, ...): one
 * budget per resource. Recognised by {@code x-ratelimit-resource} or {@code x-ratelimit-used},
 * which no other dialect sends. A refusal is a 403 or a 429 with {@code x-ratelimit-remaining: 0};
 * a secondary rate limit says {@code retry-after} (read as RFC 9110's).
 *
 * <p>The reset is read by value as the generic X-RateLimit reader does: from
 * {@value FieldParser#EPOCH_SECONDS_THRESHOLD} on it is epoch seconds, below it delta seconds.
 */
final class GitHubReader implements VendorReader {

  static final String LIMIT = "x-ratelimit-limit";
  static final String REMAINING = "x-ratelimit-remaining";
  static final String USED = "x-ratelimit-used";
  static final String RESET = "x-ratelimit-reset";
  static final String RESOURCE = "x-ratelimit-resource";

  @Override
  public VendorDialect dialect() {
    return VendorDialect.GITHUB;
  }

  @Override
  public boolean read(VendorFields f) {
    String resource = f.value(RESOURCE);
    if (resource == null && f.value(USED) == null) {
      return false;
    }
    f.claim(LIMIT, REMAINING, USED, RESET, RESOURCE);
    OptionalLong limit = f.count(LIMIT);
    OptionalLong remaining = f.count(REMAINING);
    OptionalLong used = f.count(USED);
    if (remaining.isEmpty() && limit.isPresent() && used.isPresent()) {
      remaining = OptionalLong.of(Math.max(0, limit.getAsLong() - used.getAsLong()));
    }
    OptionalLong reset = epochOrDelta(f, RESET);
    return f.budget(dialect(), resource == null ? null : resource.strip()).limit(limit).remaining(remaining)
        .resetSeconds(reset).add();
  }

  /** Seconds until a reset sent as epoch seconds or, below the epoch threshold, as delta seconds. */
  static OptionalLong epochOrDelta(VendorFields f, String field) {
    Optional<Duration> v = f.read(field, VendorValues::seconds, "epoch seconds");
    if (v.isEmpty()) {
      return OptionalLong.empty();
    }
    if (v.get().getSeconds() >= FieldParser.EPOCH_SECONDS_THRESHOLD) {
      return f.secondsUntil(Optional.of(Instant.ofEpochSecond(v.get().getSeconds(), v.get().getNano())));
    }
    return OptionalLong.of(VendorValues.wholeSeconds(v.get()));
  }
}
