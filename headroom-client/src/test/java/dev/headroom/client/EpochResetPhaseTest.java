package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.http.RetryAfter;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code X-RateLimit-Reset} in epoch seconds (GitHub's, Okta's and X's form) from a fixed window
 * whose windows start at a fraction of a second, as a server's do when they are counted from the
 * instant it started rather than from the Unix epoch: the field names the reset only to the second
 * (rounded up by most servers, truncated by some), and {@code Date} names the server's clock only to
 * the second (RFC 9110 section 6.6.1). Four callers, 50 requests, 10 per 5 s, default pacing, in
 * virtual time (server and client share a {@link ManualTicker}): the work ends within 1.05x of the
 * ideal schedule, and the client is never refused by a server that rounds up, and at most once by
 * one that truncates (the refusal that shows it: until then nothing tells the two apart, and
 * reading every reset as possibly truncated would cost a second a window against the servers that
 * round up).
 *
 * <p>What the epoch form cannot say: where in its second the reset falls. Nothing in a window's
 * answers depends on it (the reset and Date are whole seconds however the request is timed), and a
 * request sent to find out either spends a unit of the window in the next one or is refused; so the
 * client waits for the latest instant the reset can be and is up to a second late at each window.
 * Against windows at a fixed phase that lateness does not add up: the work ends at most a second
 * after the ideal schedule (phases below are those where that second is within 1.05x).
 */
class EpochResetPhaseTest {

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final int QUOTA = 10;
  private static final long WINDOW = 5_000_000_000L;
  private static final int REQUESTS = 50;
  private static final int CALLERS = 4;
  private static final long SECOND = 1_000_000_000L;

  /** How the server writes the reset instant as epoch seconds. */
  enum Rounding {
    UP, DOWN
  }

  /**
   * A fixed window of {@code QUOTA} per {@code WINDOW} whose windows start {@code phase} after the
   * epoch's five-second boundaries, answering with {@code X-RateLimit-*} and {@code Date}; a 429
   * carries Retry-After in whole seconds, rounded up.
   */
  private static TestServer.Handler server(ManualTicker ticker, long phase, Rounding rounding, long[] first, long[] last) {
    QuotaPolicy policy = Peers.policy(QUOTA, Duration.ofNanos(WINDOW), Algorithm.FIXED_WINDOW);
    Ticker shifted = () -> ticker.read() - phase;
    QuotaLimiter limiter = Peers.limiter(shifted);
    return req -> {
      long now = ticker.read();
      Decision d;
      synchronized (limiter) {
        d = limiter.acquire(policy, PartitionKey.of("client"));
        if (first[0] == Long.MIN_VALUE) {
          first[0] = now;
        }
        if (d.allowed()) {
          last[0] = now;
        }
      }
      PolicyOutcome o = d.outcomes().get(0);
      long resetAt = now + o.reset().toNanos();
      long epoch = rounding == Rounding.UP ? Math.floorDiv(resetAt - 1, SECOND) + 1 : Math.floorDiv(resetAt, SECOND);
      TestServer.Reply r = d.allowed() ? Scripted.ok() : TestServer.Reply.of(429).json("{\"message\":\"rate limited\"}");
      r.header("X-RateLimit-Limit", Integer.toString(QUOTA));
      r.header("X-RateLimit-Remaining", Long.toString(o.remaining()));
      r.header("X-RateLimit-Reset", Long.toString(epoch));
      r.header("Date", RetryAfter.formatHttpDate(ticker.instant()));
      if (!d.allowed()) {
        r.header("Retry-After", Long.toString(o.retryAfterSeconds()));
      }
      return r;
    };
  }

  /**
   * The ideal schedule's span: every window used whole from the first decision, the last admission
   * at the start of the window that holds the last request.
   */
  private static long idealSpan(long firstDecision, long phase) {
    long firstReset = Math.floorDiv(firstDecision - phase, WINDOW) * WINDOW + WINDOW + phase;
    long windows = (REQUESTS + QUOTA - 1) / QUOTA;
    return firstReset - firstDecision + (windows - 2) * WINDOW;
  }

  @ParameterizedTest(name = "windows at {0} s past the epoch's, reset rounded {1}")
  @CsvSource({"1.3, UP", "2.7, UP", "4.55, UP", "1.3, DOWN", "2.7, DOWN", "4.55, DOWN"})
  void fourCallersFinishWithinAFiftiethOfTheIdealSchedule(double phaseSeconds, Rounding rounding)
      throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    SteppingScheduler scheduler = new SteppingScheduler(ticker);
    long phase = Math.round(phaseSeconds * SECOND);
    long[] first = {Long.MIN_VALUE};
    long[] last = {Long.MIN_VALUE};
    try (TestServer server = new TestServer(ticker, server(ticker, phase, rounding, first, last))) {
      HeadroomClient client = HeadroomClient.builder(HTTP).ticker(ticker).scheduler(scheduler)
          .retry(RetryPolicy.builder().jitter(0).maxAttempts(100).build()).addNetworkInterceptor(scheduler.wire()).build();
      AtomicInteger issued = new AtomicInteger();
      List<CompletableFuture<Void>> callers = new ArrayList<>();
      for (int c = 0; c < CALLERS; c++) {
        callers.add(caller(client, server, issued));
      }
      scheduler.run(callers);
      for (CompletableFuture<Void> f : callers) {
        f.get();
      }
      assertThat(server.count(200)).isEqualTo(REQUESTS);
      double ratio = (double) (last[0] - first[0]) / idealSpan(first[0], phase);
      String arrivals = server.log().stream()
          .map(l -> String.format(Locale.ROOT, "%.3f%s", (l.request().atNanos() - first[0]) / 1e9, l.status() == 200 ? "" : "!"))
          .collect(Collectors.joining(" "));
      assertThat(ratio).as("server span over the ideal span; arrivals (s, ! refused): %s", arrivals)
          .isLessThanOrEqualTo(1.05);
      assertThat(server.count(429)).as("refusals (%.3f of the ideal schedule); arrivals: %s", ratio, arrivals)
          .isLessThanOrEqualTo(rounding == Rounding.UP ? 0 : 1);
    }
  }

  private static CompletableFuture<Void> caller(HeadroomClient client, TestServer server, AtomicInteger issued) {
    if (issued.getAndIncrement() >= REQUESTS) {
      return CompletableFuture.completedFuture(null);
    }
    return client.sendAsync(Scripted.get(server, "/api/items"), BodyHandlers.discarding())
        .thenApply(HttpResponse::statusCode)
        .thenCompose(status -> caller(client, server, issued));
  }
}
