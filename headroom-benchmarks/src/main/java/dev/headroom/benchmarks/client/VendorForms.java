package dev.headroom.benchmarks.client;

import dev.headroom.PolicyOutcome;
import dev.headroom.http.RetryAfter;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.function.BiConsumer;

/**
 * The vendors' own rate-limit fields, as each vendor documents them (see headroom-http's
 * {@code VendorDialect}), written for a decision of the benchmark's server: its fixed window of
 * {@code q} per {@code w} stated in each vendor's form.
 */
final class VendorForms {

  private VendorForms() {}

  /**
   * Writes {@code o}, decided at {@code nowNanos} (epoch nanoseconds), in {@code vendor}'s form;
   * {@code usedThisMinute}: the requests admitted in the current UTC minute (Kong's minute budget).
   */
  static void write(String vendor, PolicyOutcome o, boolean allowed, long nowNanos, int q, long w, long usedThisMinute,
      BiConsumer<String, String> out) {
    Instant now = Instant.ofEpochSecond(0, nowNanos);
    Instant resetAt = now.plus(o.reset());
    long remaining = o.remaining();
    switch (vendor) {
      case "openai" -> {
        out.accept("x-ratelimit-limit-requests", Integer.toString(q));
        out.accept("x-ratelimit-remaining-requests", Long.toString(remaining));
        out.accept("x-ratelimit-reset-requests", goDuration(o.reset().toMillis()));
        if (!allowed) {
          out.accept("retry-after-ms", Long.toString(o.retryAfter().toMillis()));
        }
      }
      case "anthropic" -> {
        out.accept("anthropic-ratelimit-requests-limit", Integer.toString(q));
        out.accept("anthropic-ratelimit-requests-remaining", Long.toString(remaining));
        out.accept("anthropic-ratelimit-requests-reset", DateTimeFormatter.ISO_INSTANT.format(ceilSecond(resetAt)));
      }
      case "github" -> {
        out.accept("x-ratelimit-limit", Integer.toString(q));
        out.accept("x-ratelimit-remaining", Long.toString(remaining));
        out.accept("x-ratelimit-used", Long.toString(q - remaining));
        out.accept("x-ratelimit-reset", Long.toString(ceilSecond(resetAt).getEpochSecond()));
        out.accept("x-ratelimit-resource", "core");
      }
      case "discord" -> {
        out.accept("X-RateLimit-Limit", Integer.toString(q));
        out.accept("X-RateLimit-Remaining", Long.toString(remaining));
        out.accept("X-RateLimit-Reset", String.format(Locale.ROOT, "%.3f", resetAt.toEpochMilli() / 1000.0));
        out.accept("X-RateLimit-Reset-After", String.format(Locale.ROOT, "%.3f", o.reset().toNanos() / 1e9));
        out.accept("X-RateLimit-Bucket", "abcd1234");
      }
      case "atlassian" -> {
        out.accept("X-RateLimit-Limit", Integer.toString(q));
        out.accept("X-RateLimit-Remaining", Long.toString(remaining));
        out.accept("X-RateLimit-Reset", DateTimeFormatter.ISO_INSTANT.format(ceilSecond(resetAt)));
        if (remaining < q / 5) {
          out.accept("X-RateLimit-NearLimit", "true");
        }
      }
      case "azure-resource-manager" -> out.accept("x-ms-ratelimit-remaining-subscription-reads", Long.toString(remaining));
      case "okta" -> {
        out.accept("X-Rate-Limit-Limit", Integer.toString(q));
        out.accept("X-Rate-Limit-Remaining", Long.toString(remaining));
        out.accept("X-Rate-Limit-Reset", Long.toString(ceilSecond(resetAt).getEpochSecond()));
      }
      case "kong" -> {
        // The 5 s window is none of Kong's named ones: the RateLimit-* fields state it, beside a
        // minute's quota of as many windows as fit in it, which never binds first; the minute is
        // Kong's, a fixed window on the UTC minute.
        out.accept("RateLimit-Limit", Integer.toString(q));
        out.accept("RateLimit-Remaining", Long.toString(remaining));
        out.accept("RateLimit-Reset", Long.toString(o.resetSeconds()));
        long perMinute = q * Math.max(1, 60 / w);
        out.accept("X-RateLimit-Limit-Minute", Long.toString(perMinute));
        out.accept("X-RateLimit-Remaining-Minute", Long.toString(Math.max(0, perMinute - usedThisMinute)));
      }
      case "shopify" -> out.accept("X-Shopify-Shop-Api-Call-Limit", (q - remaining) + "/" + q);
      default -> {
      }
    }
    if (!allowed) {
      out.accept("Retry-After", vendor.equals("retry-after-date")
          ? RetryAfter.formatHttpDate(ceilSecond(now.plus(o.retryAfter()))) : Long.toString(o.retryAfterSeconds()));
    }
  }

  /** Go's {@code time.Duration.String()} to the millisecond: {@code 12ms}, {@code 4.5s}, {@code 1m2.5s}. */
  static String goDuration(long ms) {
    if (ms < 1000) {
      return ms + "ms";
    }
    long minutes = ms / 60_000;
    long rest = ms % 60_000;
    String seconds = rest % 1000 == 0 ? Long.toString(rest / 1000)
        : String.format(Locale.ROOT, "%.3f", rest / 1000.0).replaceAll("0+$", "");
    return (minutes > 0 ? minutes + "m" : "") + seconds + "s";
  }

  private static Instant ceilSecond(Instant i) {
    Instant floor = i.truncatedTo(ChronoUnit.SECONDS);
    return floor.equals(i) ? i : floor.plusSeconds(1);
  }
}
