package dev.headroom.client;

import static dev.headroom.client.Scripted.get;
import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The header forms of a widely used Node.js limiter, express-rate-limit ({@code limit: 10,
 * windowMs: 5000}), in its three {@code standardHeaders} modes, served by a real loopback server
 * that counts a fixed window of 10 requests per 5 seconds as it does:
 * <ul>
 *   <li>{@code draft-6}: {@code RateLimit-Policy: 10;w=5} with {@code RateLimit-Limit},
 *       {@code RateLimit-Remaining} and {@code RateLimit-Reset};
 *   <li>{@code draft-7}: {@code RateLimit-Policy: 10;w=5} with
 *       {@code RateLimit: limit=10, remaining=9, reset=5};
 *   <li>{@code draft-8}: {@code RateLimit-Policy: "10-in-5sec"; q=10; w=5; pk=:...:} with
 *       {@code RateLimit: "10-in-5sec"; r=9; t=5}: the policy carries {@code pk}, the limit does
 *       not (draft-09 sections 4.1.4 and 5.1.3 make it optional on both).
 * </ul>
 * In every mode the client must match the limit to its policy, so that quota and window are known
 * (and EVEN credits the refill), and must not be refused.
 */
class ExpressRateLimitTest {

  /** express-rate-limit's partition key: the first 12 bytes of SHA-256 of the client's key, base64. */
  static final String PK = ":1pc3Rm3mFm7G9qRk:";

  enum Mode { DRAFT_6, DRAFT_7, DRAFT_8 }

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  /** A fixed window of {@code limit} requests per {@code windowSeconds}, answering as express-rate-limit does. */
  static TestServer.Handler express(ManualTicker ticker, Mode mode, int limit, int windowSeconds) {
    long windowNanos = windowSeconds * 1_000_000_000L;
    long[] window = {Long.MIN_VALUE, 0};
    return req -> {
      long now = ticker.read();
      int used;
      long resetNanos;
      synchronized (window) {
        if (now >= window[0] + windowNanos || window[0] == Long.MIN_VALUE) {
          window[0] = now;
          window[1] = 0;
        }
        used = (int) ++window[1];
        resetNanos = window[0] + windowNanos - now;
      }
      long reset = (resetNanos + 999_999_999) / 1_000_000_000L;
      long remaining = Math.max(0, limit - used);
      TestServer.Reply r = used > limit
          ? TestServer.Reply.of(429).body("text/html", "Too many requests, please try again later.")
              .header("Retry-After", Long.toString(reset))
          : Scripted.ok();
      switch (mode) {
        case DRAFT_6 -> r.header("RateLimit-Policy", limit + ";w=" + windowSeconds)
            .header("RateLimit-Limit", Integer.toString(limit)).header("RateLimit-Remaining", Long.toString(remaining))
            .header("RateLimit-Reset", Long.toString(reset));
        case DRAFT_7 -> r.header("RateLimit-Policy", limit + ";w=" + windowSeconds)
            .header("RateLimit", "limit=" + limit + ", remaining=" + remaining + ", reset=" + reset);
        case DRAFT_8 -> {
          String name = "\"" + limit + "-in-" + windowSeconds + "sec\"";
          r.header("RateLimit-Policy", name + "; q=" + limit + "; w=" + windowSeconds + "; pk=" + PK)
              .header("RateLimit", name + "; r=" + remaining + "; t=" + reset);
        }
      }
      return r;
    };
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void everyModesLimitIsMatchedToItsPolicyAndTheClientIsNeverRefused(Mode mode) throws Exception {
    try (TestServer server = new TestServer(ticker, express(ticker, mode, 10, 5))) {
      HeadroomClient client = Scripted.client(ticker).pacing(Pacing.EVEN).build();
      client.send(get(server, "/api/items"), BodyHandlers.discarding());
      List<Budget> budgets = client.budgets().snapshot(get(server, "/api/items"));
      assertThat(budgets).singleElement().satisfies(b -> {
        assertThat(b.quota()).hasValue(10);
        assertThat(b.window()).contains(Duration.ofSeconds(5));
        assertThat(b.remaining()).isEqualTo(9);
      });
      for (int i = 0; i < 30; i++) {
        assertThat(client.send(get(server, "/api/items"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      }
      assertThat(server.count(429)).isZero();
    }
  }
}
