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

  @ParameterizedTest(name = "{0} at {1} s into the window")
  @CsvSource({
      // Kong: the minute's budget (a fixed window Kong documents) no longer spaces the 5 s window's units.
      "KONG, 1.0", "KONG, 2.5", "KONG, 4.0",
      // Azure Resource Manager: remaining only; one refusal a window says when quota returns.
      "AZURE_RESOURCE_MANAGER, 1.0", "AZURE_RESOURCE_MANAGER, 2.5", "AZURE_RESOURCE_MANAGER, 4.0",
      // Shopify's leaky bucket, served by a fixed window: the leak is not seen, and not assumed.
      "SHOPIFY, 1.0", "SHOPIFY, 2.5", "SHOPIFY, 4.0"})
  void fourCallersKeepToTheIdealScheduleOfAFixedWindow(VendorPeers.Form form, double phase) throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    ticker.advanceNanos(Math.round(phase * 1e9));
    SteppingScheduler scheduler = new SteppingScheduler(ticker);
    try (TestServer server = new TestServer(ticker,
        VendorPeers.server(form, ticker, QUOTA, WINDOW, dev.headroom.Algorithm.FIXED_WINDOW))) {
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
        trace.append(String.format(Locale.ROOT, "%.3f%s ", (l.request().atNanos() - first) / 1e9, l.status() == 200 ? "" : "!"));
      }
      assertThat(server.count(200)).isEqualTo(REQUESTS);
      boolean statesReset = form == VendorPeers.Form.KONG;
      assertThat(last - first).as("actual %.3f / ideal %.3f; admissions (! refused): %s", (last - first) / 1e9,
          ideal / 1e9, trace).isLessThanOrEqualTo(statesReset ? ideal * 105 / 100 : ideal + 1_000_000_000L);
      long windows = (last - first) / w + 2;
      assertThat(server.count(429)).as("refusals: %s", trace).isLessThanOrEqualTo(statesReset ? 0 : windows);
    }
  }

  private static CompletableFuture<Void> caller(HeadroomClient client, TestServer server, AtomicInteger issued) {
    if (issued.getAndIncrement() >= REQUESTS) {
      return CompletableFuture.completedFuture(null);
    }
    return client.sendAsync(Scripted.get(server, "/api/items"), BodyHandlers.discarding())
        .thenApply(HttpResponse::statusCode).thenCompose(s -> caller(client, server, issued));
  }
}
