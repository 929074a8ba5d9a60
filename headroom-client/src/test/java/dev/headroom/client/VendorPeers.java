package dev.headroom.client;

import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.http.RetryAfter;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.function.Function;

/**
 * Servers that speak each vendor's rate-limit fields (see {@code dev.headroom.http.headers.VendorDialect})
 * in front of a real limiter (headroom-core's), as each vendor's documentation shows them. Shared
 * with the conformance checker's tests through this module's test-jar.
 */
public final class VendorPeers {

  private VendorPeers() {}

  /** A vendor's form; {@link #RETRY_AFTER_DATE} is RFC 9110's Retry-After as an HTTP-date, with no other field. */
  public enum Form {
    OPENAI, ANTHROPIC, GITHUB, DISCORD, ATLASSIAN, AZURE_RESOURCE_MANAGER, OKTA, KONG, SHOPIFY, RETRY_AFTER_DATE;

    /** Whether the form says when quota returns before it is refused. */
    public boolean statesReset() {
      return this != AZURE_RESOURCE_MANAGER && this != RETRY_AFTER_DATE;
    }

    /** The algorithm the vendor documents: Shopify's leaky bucket, a fixed window otherwise. */
    public Algorithm algorithm() {
      return this == SHOPIFY ? Algorithm.TOKEN_BUCKET : Algorithm.FIXED_WINDOW;
    }
  }

  /** A server of {@code quota} per {@code window} answering in {@code form}. */
  public static TestServer.Handler server(Form form, Ticker ticker, int quota, Duration window) {
    return server(form, ticker, quota, window, form.algorithm());
  }

  /** A server of {@code quota} per {@code window} answering in {@code form}, deciding by {@code algorithm}. */
  public static TestServer.Handler server(Form form, Ticker ticker, int quota, Duration window, Algorithm algorithm) {
    QuotaPolicy p = Peers.policy(quota, window, algorithm);
    // Kong's minute: the requests admitted in the current UTC minute, counted as Kong counts them.
    long[] minute = {Long.MIN_VALUE, 0};
    Function<Decision, TestServer.Reply> reply = d -> {
      TestServer.Reply r = d.allowed() ? Scripted.ok() : TestServer.Reply.of(429).json("{\"message\":\"rate limited\"}");
      long used;
      synchronized (minute) {
        long index = Math.floorDiv(ticker.instant().getEpochSecond(), 60);
        if (index != minute[0]) {
          minute[0] = index;
          minute[1] = 0;
        }
        used = d.allowed() ? ++minute[1] : minute[1];
      }
      write(form, d.outcomes().get(0), d.allowed(), ticker.instant(), quota, window, used, r);
      r.header("Date", RetryAfter.formatHttpDate(ticker.instant()));
      return r;
    };
    return Peers.limited(ticker, p, reply, reply);
  }

  /**
   * Writes {@code o} in {@code form} at {@code now}; {@code usedThisMinute}: the requests admitted in
   * the current UTC minute (Kong's minute budget).
   */
  static void write(Form form, PolicyOutcome o, boolean allowed, Instant now, int quota, Duration window,
      long usedThisMinute, TestServer.Reply r) {
    long remaining = o.remaining();
    Instant resetAt = now.plus(o.reset());
    long t = o.resetSeconds();
    String retry = Long.toString(o.retryAfterSeconds());
    switch (form) {
      case OPENAI -> {
        r.header("x-ratelimit-limit-requests", Integer.toString(quota));
        r.header("x-ratelimit-remaining-requests", Long.toString(remaining));
        r.header("x-ratelimit-reset-requests", goDuration(o.reset()));
        r.header("x-ratelimit-limit-tokens", "150000");
        r.header("x-ratelimit-remaining-tokens", "149000");
        r.header("x-ratelimit-reset-tokens", "6m0s");
        if (!allowed) {
          r.header("retry-after-ms", Long.toString(o.retryAfter().toMillis()));
        }
      }
      case ANTHROPIC -> {
        r.header("anthropic-ratelimit-requests-limit", Integer.toString(quota));
        r.header("anthropic-ratelimit-requests-remaining", Long.toString(remaining));
        r.header("anthropic-ratelimit-requests-reset", DateTimeFormatter.ISO_INSTANT.format(ceilSecond(resetAt)));
      }
      case GITHUB -> {
        r.header("x-ratelimit-limit", Integer.toString(quota));
        r.header("x-ratelimit-remaining", Long.toString(remaining));
        r.header("x-ratelimit-used", Long.toString(quota - remaining));
        r.header("x-ratelimit-reset", Long.toString(ceilSecond(resetAt).getEpochSecond()));
        r.header("x-ratelimit-resource", "core");
      }
      case DISCORD -> {
        r.header("X-RateLimit-Limit", Integer.toString(quota));
        r.header("X-RateLimit-Remaining", Long.toString(remaining));
        r.header("X-RateLimit-Reset", String.format(Locale.ROOT, "%.3f", resetAt.toEpochMilli() / 1000.0));
        r.header("X-RateLimit-Reset-After", String.format(Locale.ROOT, "%.3f", o.reset().toMillis() / 1000.0));
        r.header("X-RateLimit-Bucket", "abcd1234");
        if (!allowed) {
          r.header("X-RateLimit-Scope", "user");
        }
      }
      case ATLASSIAN -> {
        r.header("X-RateLimit-Limit", Integer.toString(quota));
        r.header("X-RateLimit-Remaining", Long.toString(remaining));
        r.header("X-RateLimit-Reset", DateTimeFormatter.ISO_INSTANT.format(ceilSecond(resetAt)));
        if (remaining < quota / 5) {
          r.header("X-RateLimit-NearLimit", "true");
        }
        if (!allowed) {
          r.header("RateLimit-Reason", "jira-burst-based");
        }
      }
      case AZURE_RESOURCE_MANAGER -> r.header("x-ms-ratelimit-remaining-subscription-reads", Long.toString(remaining));
      case OKTA -> {
        r.header("X-Rate-Limit-Limit", Integer.toString(quota));
        r.header("X-Rate-Limit-Remaining", Long.toString(remaining));
        r.header("X-Rate-Limit-Reset", Long.toString(ceilSecond(resetAt).getEpochSecond()));
      }
      case KONG -> {
        // The window is none of Kong's named ones: the RateLimit-* fields describe it; the minute's
        // quota is as large as the windows that fit in a minute, so that it never binds first. The
        // minute is Kong's: a fixed window on the UTC minute.
        r.header("RateLimit-Limit", Integer.toString(quota));
        r.header("RateLimit-Remaining", Long.toString(remaining));
        r.header("RateLimit-Reset", Long.toString(t));
        long perMinute = quota * (60 / Math.max(1, window.toSeconds()));
        r.header("X-RateLimit-Limit-Minute", Long.toString(perMinute));
        r.header("X-RateLimit-Remaining-Minute", Long.toString(Math.max(0, perMinute - usedThisMinute)));
      }
      case SHOPIFY -> r.header("X-Shopify-Shop-Api-Call-Limit", (quota - remaining) + "/" + quota);
      default -> {
      }
    }
    if (!allowed) {
      if (form == Form.RETRY_AFTER_DATE) {
        r.header("Retry-After", RetryAfter.formatHttpDate(ceilSecond(now.plus(o.retryAfter()))));
      } else {
        r.header("Retry-After", retry);
      }
    }
  }

  /** Go's {@code time.Duration.String()} of {@code d}, to the millisecond ({@code 1.5s}, {@code 12ms}, {@code 1m2.5s}). */
  static String goDuration(Duration d) {
    long ms = d.toMillis();
    if (ms < 1000) {
      return ms + "ms";
    }
    long minutes = ms / 60_000;
    String seconds = Duration.ofMillis(ms % 60_000).toMillis() % 1000 == 0 ? Long.toString(ms % 60_000 / 1000)
        : String.format(Locale.ROOT, "%.3f", (ms % 60_000) / 1000.0).replaceAll("0+$", "");
    return (minutes > 0 ? minutes + "m" : "") + seconds + "s";
  }

  private static Instant ceilSecond(Instant i) {
    Instant floor = i.truncatedTo(ChronoUnit.SECONDS);
    return floor.equals(i) ? i : floor.plusSeconds(1);
  }
}
