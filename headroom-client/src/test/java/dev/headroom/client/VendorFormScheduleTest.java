package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The client's pacing target, in virtual time: {@link Pacing#ADAPTIVE}, four callers, fifty
 * requests, a fixed window of 10 per 5 s behind a vendor's form, the first request at a given
 * phase of the window (the windows are aligned to the epoch, as the benchmark's are). Where the
 * form says when quota returns (Kong), the work ends within 1.05 times the ideal schedule (every
 * request admitted at the earliest instant the window allows) and is never refused once the first
 * answer is read. Where it does not (Azure Resource Manager states only what remains; Shopify's
 * leak is not what a fixed window does), it is refused at most once per window, and ends at most a
 * second after the ideal schedule: the refusal's Retry-After, whole seconds rounded up, says the
 * window's end only to the second, and each window starts that late. What each case pins is in its
 * comment.
 */
class VendorFormScheduleTest {

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final int QUOTA = 10;
  private static final Duration WINDOW = Duration.ofSeconds(5);
  private static final int REQUESTS = 50;
  private static final int CALLERS = 4;

  @ParameterizedTest(name = "{0} at {1} s into the window, {2} ms a request")
  @CsvSource({
      // Kong: the minute's budget (a fixed window Kong documents) no longer spaces the 5 s window's units.
      "KONG, 1.0, 0", "KONG, 2.5, 0", "KONG, 4.0, 0", "KONG, 2.5, 25",
      // Azure Resource Manager: remaining only; one refusal a window says when quota returns, and
      // with time on the wire every window opens at the fraction of a second the second one did.
      "AZURE_RESOURCE_MANAGER, 1.0, 0", "AZURE_RESOURCE_MANAGER, 2.5, 0", "AZURE_RESOURCE_MANAGER, 4.0, 0",
      "AZURE_RESOURCE_MANAGER, 1.0, 25", "AZURE_RESOURCE_MANAGER, 2.5, 25", "AZURE_RESOURCE_MANAGER, 4.0, 25",
      // Shopify's leaky bucket, served by a fixed window: the leak is not seen, and not assumed.
      "SHOPIFY, 1.0, 0", "SHOPIFY, 2.5, 0", "SHOPIFY, 4.0, 0", "SHOPIFY, 2.5, 25"})
  void fourCallersKeepToTheIdealScheduleOfAFixedWindow(VendorPeers.Form form, double phase, int serverMillis)
      throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    ticker.advanceNanos(Math.round(phase * 1e9));
    SteppingScheduler scheduler = new SteppingScheduler(ticker);
    TestServer.Handler limiter = VendorPeers.server(form, ticker, QUOTA, WINDOW, dev.headroom.Algorithm.FIXED_WINDOW);
    // Each request takes serverMillis on the wire before the server decides it (virtual time).
    TestServer.Handler slow = req -> {
      ticker.advance(Duration.ofMillis(serverMillis));
      return limiter.handle(req);
    };
    try (TestServer server = new TestServer(ticker, slow)) {
      HeadroomClient client = HeadroomClient.builder(HTTP).ticker(ticker).scheduler(scheduler)
          .retry(RetryPolicy.builder().maxAttempts(100).jitter(0).build()).addNetworkInterceptor(scheduler.wire()).build();
      AtomicInteger issued = new AtomicInteger();
      List<CompletableFuture<Void>> callers = new ArrayList<>();
      for (int c = 0; c < CALLERS; c++) {
        callers.add(caller(client, server, issued));
      }
      scheduler.run(callers);
      for (CompletableFuture<Void> f : callers) {
        f.get();
      }
      List<TestServer.Logged> log = server.log();
      long first = log.get(0).request().atNanos();
      long last = log.stream().filter(l -> l.status() == 200).mapToLong(l -> l.request().atNanos()).max().orElseThrow();
      long w = WINDOW.toNanos();
      long firstWindowEnd = (Math.floorDiv(first, w) + 1) * w;
      long ideal = firstWindowEnd - first + (long) ((REQUESTS + QUOTA - 1) / QUOTA - 2) * w;
      StringBuilder trace = new StringBuilder();
      for (TestServer.Logged l : log) {
        trace.append(String.format(Locale.ROOT, "%.3f%s ", (l.request().atNanos() - first) / 1e9,
            l.status() == 200 ? "" : "!"));
      }
      assertThat(server.count(200)).isEqualTo(REQUESTS);
      boolean statesReset = form == VendorPeers.Form.KONG;
      assertThat(last - first).as("actual %.3f / ideal %.3f; admissions (! refused): %s", (last - first) / 1e9,
          ideal / 1e9, trace).isLessThanOrEqualTo(statesReset ? ideal * 105 / 100
          : ideal + 1_000_000_000L + roundTrips(serverMillis, windows(ideal)));
      long windows = (last - first) / w + 2;
      assertThat(server.count(429)).as("refusals: %s", trace).isLessThanOrEqualTo(statesReset ? 0 : windows);
      if (!statesReset) {
        // Each window after a refusal opens no later after its start than the first such did, give or
        // take a round trip a window (the refusal's Retry-After counts from its decision).
        long refused = log.stream().filter(l -> l.status() == 429).mapToLong(l -> l.request().atNanos()).min()
            .orElseThrow();
        long late = -1;
        for (long b = firstWindowEnd + Math.max(0, Math.floorDiv(refused - firstWindowEnd, w) + 1) * w; b < last; b += w) {
          long start = b;
          long opened = log.stream().filter(l -> l.status() == 200 && l.request().atNanos() >= start)
              .mapToLong(l -> l.request().atNanos()).min().orElseThrow() - b;
          if (late < 0) {
            late = opened;
          }
          assertThat(opened).as("window at %.3f opened %.3f s late, the second %.3f s: %s", (b - first) / 1e9,
              opened / 1e9, late / 1e9, trace).isLessThanOrEqualTo(late + roundTrips(serverMillis, windows(ideal)));
        }
      }
    }
  }

  /** The windows of the ideal schedule after the first. */
  private static long windows(long ideal) {
    return ideal / WINDOW.toNanos() + 1;
  }

  /** One round trip of {@code serverMillis} a window, and one more, in nanoseconds. */
  private static long roundTrips(int serverMillis, long windows) {
    return (windows + 1) * serverMillis * 1_000_000L;
  }

  private static CompletableFuture<Void> caller(HeadroomClient client, TestServer server, AtomicInteger issued) {
    if (issued.getAndIncrement() >= REQUESTS) {
      return CompletableFuture.completedFuture(null);
    }
    return client.sendAsync(Scripted.get(server, "/api/items"), BodyHandlers.discarding())
        .thenApply(HttpResponse::statusCode).thenCompose(s -> caller(client, server, issued));
  }
}
