package dev.headroom.client;

import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.http.RetryAfter;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Base64;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Function;

/**
 * Servers that limit with headroom-core and answer in the exact forms deployed peers use:
 * express-rate-limit's draft-6, draft-7 and draft-8 output (source/headers.ts), Cloudflare's
 * {@code Ratelimit: "default";r=50;t=30}, GitHub's {@code x-ratelimit-*} with an epoch reset, and
 * Headroom's own emitter in each dialect.
 */
final class Peers {

  private Peers() {}

  /** A named handler factory: (ticker, quota, window) to handler. */
  record Peer(String name, Factory factory) {
    @Override
    public String toString() {
      return name;
    }
  }

  interface Factory {
    TestServer.Handler create(Ticker ticker, int quota, Duration window);
  }

  static QuotaLimiter limiter(Ticker ticker) {
    return QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
  }

  static QuotaPolicy policy(int quota, Duration window, Algorithm algorithm) {
    return QuotaPolicy.builder("default").quota(quota).window(window).algorithm(algorithm).build();
  }

  /** Wraps a limiter: the formatter writes headers for allowed and refused outcomes alike. */
  static TestServer.Handler limited(Ticker ticker, QuotaPolicy policy,
      Function<Decision, TestServer.Reply> allowed, Function<Decision, TestServer.Reply> refused) {
    QuotaLimiter limiter = limiter(ticker);
    return req -> {
      Decision d = limiter.acquire(policy, PartitionKey.of("client"));
      return d.allowed() ? allowed.apply(d) : refused.apply(d);
    };
  }

  static long resetSeconds(PolicyOutcome o) {
    return o.resetSeconds();
  }

  /** express-rate-limit standardHeaders: 'draft-6'. */
  static TestServer.Handler expressDraft6(Ticker ticker, int quota, Duration window) {
    QuotaPolicy p = policy(quota, window, Algorithm.FIXED_WINDOW);
    Function<Decision, TestServer.Reply> headers = d -> {
      PolicyOutcome o = d.outcomes().get(0);
      TestServer.Reply r = d.allowed() ? TestServer.Reply.of(200).body("text/plain", "ok")
          : TestServer.Reply.of(429).body("text/html; charset=utf-8", "Too many requests, please try again later.");
      r.header("RateLimit-Policy", quota + ";w=" + window.toSeconds());
      r.header("RateLimit-Limit", Integer.toString(quota));
      r.header("RateLimit-Remaining", Long.toString(o.remaining()));
      if (o.resetSeconds() > 0) {
        r.header("RateLimit-Reset", Long.toString(o.resetSeconds()));
      }
      if (!d.allowed()) {
        r.header("Retry-After", Long.toString(Math.max(o.resetSeconds(), 1)));
      }
      return r;
    };
    return limited(ticker, p, headers, headers);
  }

  /** express-rate-limit standardHeaders: 'draft-7'. */
  static TestServer.Handler expressDraft7(Ticker ticker, int quota, Duration window) {
    QuotaPolicy p = policy(quota, window, Algorithm.FIXED_WINDOW);
    Function<Decision, TestServer.Reply> headers = d -> {
      PolicyOutcome o = d.outcomes().get(0);
      TestServer.Reply r = d.allowed() ? TestServer.Reply.of(200).body("text/plain", "ok")
          : TestServer.Reply.of(429).body("text/html; charset=utf-8", "Too many requests, please try again later.");
      r.header("RateLimit-Policy", quota + ";w=" + window.toSeconds());
      r.header("RateLimit", "limit=" + quota + ", remaining=" + o.remaining() + ", reset=" + o.resetSeconds());
      if (!d.allowed()) {
        r.header("Retry-After", Long.toString(o.resetSeconds()));
      }
      return r;
    };
    return limited(ticker, p, headers, headers);
  }

  /** express-rate-limit standardHeaders: 'draft-8', with its identifier and hashed partition key. */
  static TestServer.Handler expressDraft8(Ticker ticker, int quota, Duration window) {
    QuotaPolicy p = policy(quota, window, Algorithm.FIXED_WINDOW);
    String name = quota + "-in-" + window.toSeconds() + "sec";
    String pk = expressPartitionKey("127.0.0.1");
    Function<Decision, TestServer.Reply> headers = d -> {
      PolicyOutcome o = d.outcomes().get(0);
      TestServer.Reply r = d.allowed() ? TestServer.Reply.of(200).body("text/plain", "ok")
          : TestServer.Reply.of(429).body("text/html; charset=utf-8", "Too many requests, please try again later.");
      r.header("RateLimit-Policy", "\"" + name + "\"; q=" + quota + "; w=" + window.toSeconds() + "; pk=:" + pk + ":");
      r.header("RateLimit", "\"" + name + "\"; r=" + o.remaining() + "; t=" + o.resetSeconds());
      if (!d.allowed()) {
        r.header("Retry-After", Long.toString(o.resetSeconds()));
      }
      return r;
    };
    return limited(ticker, p, headers, headers);
  }

  /** getPartitionKey of express-rate-limit: base64 of the first 12 hex characters of SHA-256. */
  static String expressPartitionKey(String key) {
    try {
      String hex = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
      return Base64.getEncoder().encodeToString(hex.substring(0, 12).getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Cloudflare's rate limiting rules: {@code Ratelimit: "default";r=50;t=30}, {@code Ratelimit-Policy: "default";q=100;w=60}. */
  static TestServer.Handler cloudflare(Ticker ticker, int quota, Duration window) {
    QuotaPolicy p = policy(quota, window, Algorithm.SLIDING_WINDOW);
    Function<Decision, TestServer.Reply> headers = d -> {
      PolicyOutcome o = d.outcomes().get(0);
      TestServer.Reply r = d.allowed() ? TestServer.Reply.of(200).body("text/plain", "ok")
          : TestServer.Reply.of(429).body("text/plain", "error code: 1015");
      r.header("Ratelimit", "\"default\";r=" + o.remaining() + ";t=" + o.resetSeconds());
      r.header("Ratelimit-Policy", "\"default\";q=" + quota + ";w=" + window.toSeconds());
      if (!d.allowed()) {
        r.header("Retry-After", Long.toString(o.retryAfterSeconds()));
      }
      return r;
    };
    return limited(ticker, p, headers, headers);
  }

  /** GitHub's REST API: {@code x-ratelimit-*} with the reset in epoch seconds; 403 or 429 with remaining 0 when exhausted. */
  static TestServer.Handler github(Ticker ticker, int quota, Duration window) {
    QuotaPolicy p = policy(quota, window, Algorithm.FIXED_WINDOW);
    Function<Decision, TestServer.Reply> headers = d -> {
      PolicyOutcome o = d.outcomes().get(0);
      TestServer.Reply r = d.allowed() ? TestServer.Reply.of(200).json("{\"login\":\"octocat\"}")
          : TestServer.Reply.of(429).json("{\"message\":\"API rate limit exceeded\",\"documentation_url\":\"https://docs.github.com/rest\"}");
      long epochReset = (ticker.read() / 1_000_000_000L) + o.resetSeconds();
      r.header("x-ratelimit-limit", Integer.toString(quota));
      r.header("x-ratelimit-remaining", Long.toString(o.remaining()));
      r.header("x-ratelimit-reset", Long.toString(epochReset));
      r.header("x-ratelimit-used", Long.toString(quota - o.remaining()));
      r.header("x-ratelimit-resource", "core");
      r.header("Date", RetryAfter.formatHttpDate(ticker.instant()));
      return r;
    };
    return limited(ticker, p, headers, headers);
  }

  /**
   * express-rate-limit's MemoryStore (v7) with {@code standardHeaders: 'draft-8'}: a fixed window
   * <em>anchored at the client's first hit</em> after the last one expired ({@code resetTime = now +
   * windowMs}), not aligned to the clock; {@code t} is {@code Math.ceil} of the time left.
   */
  static TestServer.Handler expressMemoryStore(Ticker ticker, int quota, Duration window) {
    long w = window.toNanos();
    long[] state = {Long.MIN_VALUE, 0}; // resetTime, hits
    String name = quota + "-in-" + window.toSeconds() + "sec";
    return req -> {
      long now = ticker.read();
      long remaining;
      long resetNanos;
      boolean allowed;
      synchronized (state) {
        if (state[0] <= now) {
          state[0] = now + w;
          state[1] = 0;
        }
        state[1]++;
        allowed = state[1] <= quota;
        remaining = Math.max(0, quota - state[1]);
        resetNanos = state[0] - now;
      }
      long t = (resetNanos + 999_999_999L) / 1_000_000_000L;
      TestServer.Reply r = allowed ? TestServer.Reply.of(200).body("text/plain", "ok")
          : TestServer.Reply.of(429).body("text/html; charset=utf-8", "Too many requests, please try again later.");
      r.header("RateLimit-Policy", "\"" + name + "\"; q=" + quota + "; w=" + window.toSeconds());
      r.header("RateLimit", "\"" + name + "\"; r=" + remaining + "; t=" + t);
      if (!allowed) {
        r.header("Retry-After", Long.toString(t));
      }
      return r;
    };
  }

  /** Headroom's own emitter in one dialect, with a problem-details refusal. */
  static Factory headroom(HeaderDialect dialect, Algorithm algorithm) {
    return (ticker, quota, window) -> {
      QuotaPolicy p = policy(quota, window, algorithm);
      RateLimitHeaders emitter = RateLimitHeaders.builder().dialects(EnumSet.of(dialect)).ticker(ticker).policies(List.of(p)).build();
      QuotaLimiter limiter = limiter(ticker);
      return req -> {
        Decision d = limiter.acquire(p, PartitionKey.of("client"));
        TestServer.Reply r = d.allowed() ? TestServer.Reply.of(200).body("text/plain", "ok")
            : TestServer.Reply.of(429).body("application/problem+json",
                "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\",\"title\":\"Quota Exceeded\","
                    + "\"status\":429,\"error\":\"rate_limit_exceeded\",\"detail\":\"Try again in " + d.retryAfterSeconds()
                    + " seconds.\",\"why\":\"Limits keep the service available for everyone.\",\"limit\":\"" + quota
                    + " requests per " + window.toSeconds() + " seconds\",\"retryAfterSeconds\":" + d.retryAfterSeconds()
                    + ",\"violated-policies\":[\"default\"]}");
        emitter.write(d, r.status, r::header);
        return r;
      };
    };
  }
}
