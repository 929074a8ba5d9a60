package dev.headroom.demo;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;

/**
 * A walk through the core limiter on a simulated clock: a per-client burst policy (token bucket)
 * and a daily policy (fixed window), decided together, all or nothing.
 *
 * <p>It lives in headroom-core's test sources, not in the library jar: it is an example that
 * runs ({@code DemoTest} checks every line it prints), not part of the API.
 */
final class Demo {

  private Demo() {}

  public static void main(String[] args) {
    run(System.out);
  }

  /** Prints twelve requests from one client, one every 100 ms of simulated time. */
  static void run(PrintStream out) {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    QuotaPolicy burst = QuotaPolicy.builder("burst").quota(5).window(Duration.ofSeconds(10))
        .algorithm(Algorithm.TOKEN_BUCKET).partitioning("client-ip").build();
    QuotaPolicy daily = QuotaPolicy.builder("daily").quota(1000).window(Duration.ofDays(1))
        .algorithm(Algorithm.FIXED_WINDOW).partitioning("client-ip").build();
    PartitionKey client = PartitionKey.of("203.0.113.7");
    out.println("policies: " + burst + ", " + daily);
    for (int i = 1; i <= 12; i++) {
      Decision d = limiter.acquire(List.of(Acquisition.of(burst, client), Acquisition.of(daily, client)));
      StringBuilder line = new StringBuilder(String.format("request %2d at +%4d ms: %s", i, (i - 1) * 100,
          d.allowed() ? "allowed" : "refused, Retry-After " + d.retryAfterSeconds() + " s"));
      for (PolicyOutcome o : d.outcomes()) {
        line.append(String.format("  %s r=%d t=%d", o.policy().name(), o.remaining(), o.resetSeconds()));
      }
      out.println(line);
      ticker.advance(Duration.ofMillis(100));
    }
  }
}
