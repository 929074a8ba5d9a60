package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.http.headers.VendorDialect;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each vendor's dialect, read through {@link HeadroomClient} from a real loopback server that
 * speaks it in front of a real limiter ({@link VendorPeers}): once the first answer is read, a
 * client that is told when quota returns is never refused, and one that is not (Azure Resource
 * Manager states only what remains; RFC 9110's Retry-After says nothing before a refusal) is
 * refused at most once per window. Neither stalls: the work ends within three times the least
 * time the server allows. Time is virtual: server and client share a {@link ManualTicker}.
 */
class VendorDialectsPacingTest {

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final int QUOTA = 10;
  private static final Duration WINDOW = Duration.ofSeconds(5);
  private static final int REQUESTS = 32;
  private static final int CALLERS = 4;

  private static int allowedRefusals(VendorPeers.Form form) {
    return form.statesReset() ? 0 : REQUESTS / QUOTA + 1;
  }

  @ParameterizedTest(name = "{0}, sequential")
  @EnumSource(VendorPeers.Form.class)
  void sequentialCallerIsPacedByTheVendorsFields(VendorPeers.Form form) throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    try (TestServer server = new TestServer(ticker, VendorPeers.server(form, ticker, QUOTA, WINDOW))) {
      HeadroomClient client = Scripted.client(ticker).build();
      long start = ticker.read();
      HttpRequest get = Scripted.get(server, "/api/items");
      for (int i = 0; i < REQUESTS; i++) {
        assertThat(client.send(get, BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      }
      if (form.statesReset() && form != VendorPeers.Form.KONG && form != VendorPeers.Form.SHOPIFY) {
        assertThat(client.budgets().snapshot(get)).as("budgets read").isNotEmpty()
            .anySatisfy(b -> assertThat(b.quota()).hasValue(QUOTA));
      }
      assertThat(server.count(429)).as("refusals").isLessThanOrEqualTo(allowedRefusals(form));
      assertThat(Duration.ofNanos(ticker.read() - start)).as("no stall")
          .isLessThanOrEqualTo(WINDOW.multipliedBy(3L * REQUESTS / QUOTA));
    }
  }

  @ParameterizedTest(name = "{0}, four callers")
  @EnumSource(VendorPeers.Form.class)
  void fourCallersArePacedByTheVendorsFields(VendorPeers.Form form) throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    SteppingScheduler scheduler = new SteppingScheduler(ticker);
    try (TestServer server = new TestServer(ticker, VendorPeers.server(form, ticker, QUOTA, WINDOW))) {
      HeadroomClient client = HeadroomClient.builder(HTTP).ticker(ticker).scheduler(scheduler)
          .retry(RetryPolicy.builder().jitter(0).build()).addNetworkInterceptor(scheduler.wire()).build();
      long start = ticker.read();
      List<CompletableFuture<Integer>> callers = new ArrayList<>();
      for (int c = 0; c < CALLERS; c++) {
        CompletableFuture<Integer> chain = CompletableFuture.completedFuture(200);
        for (int i = 0; i < REQUESTS / CALLERS; i++) {
          chain = chain.thenCompose(status -> status != 200 ? CompletableFuture.completedFuture(status)
              : client.sendAsync(Scripted.get(server, "/api/items"), BodyHandlers.discarding())
                  .thenApply(HttpResponse::statusCode));
        }
        callers.add(chain);
      }
      scheduler.run(callers);
      for (CompletableFuture<Integer> f : callers) {
        assertThat(f.get()).isEqualTo(200);
      }
      assertThat(server.count(200)).isEqualTo(REQUESTS);
      // Without a reset, each window may cost one refusal. Without any field, the first refusal
      // finds every caller sending (one each); from then on what the refusals taught of the window
      // holds them (RefusalWindow): one refusal at most, in the window whose length is not yet known.
      long windows = Duration.ofNanos(ticker.read() - start).dividedBy(WINDOW) + 1;
      long allowed = form.statesReset() ? 0 : form == VendorPeers.Form.RETRY_AFTER_DATE ? CALLERS + 1 : windows;
      System.out.println("[pacing] " + form + ": " + server.count(429) + " refusals in " + windows + " windows");
      assertThat(server.count(429)).as("refusals").isLessThanOrEqualTo(allowed);
      assertThat(Duration.ofNanos(ticker.read() - start)).as("no stall")
          .isLessThanOrEqualTo(WINDOW.multipliedBy(3L * REQUESTS / QUOTA));
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = VendorPeers.Form.class, names = "RETRY_AFTER_DATE", mode = EnumSource.Mode.EXCLUDE)
  void theExchangeNamesTheVendor(VendorPeers.Form form) throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    try (TestServer server = new TestServer(ticker, VendorPeers.server(form, ticker, QUOTA, WINDOW))) {
      List<VendorDialect> seen = new ArrayList<>();
      HeadroomClient client = Scripted.client(ticker).addNetworkInterceptor(chain -> chain.proceed(chain.request())
          .thenApply(e -> {
            seen.addAll(e.fields().vendors());
            return e;
          })).build();
      client.send(Scripted.get(server, "/"), BodyHandlers.discarding());
      assertThat(seen).containsExactly(form == VendorPeers.Form.OKTA ? VendorDialect.X_RATE_LIMIT
          : VendorDialect.valueOf(form.name()));
    }
  }

  /**
   * Discord's buckets ("Rate Limits", section "Header Format": routes that return the same
   * {@code X-RateLimit-Bucket} share one budget): two buckets on one origin are two budgets, each
   * pacing the routes it answered for ({@link BucketRoutes}). With the bucket of {@code /a} spent
   * (2 per 5 s), {@code /b} (10 per 5 s, its own bucket, answered once before) goes at once, and
   * {@code /a} waits for its own reset. Before, every bucket gated every request of the origin, and
   * {@code /b} waited for {@code /a}'s reset.
   */
  @Test
  void discordBucketsOnOneOriginPaceTheirOwnRoutes() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    TestServer.Handler a = discordBucket(ticker, 2, "bucket-a");
    TestServer.Handler b = discordBucket(ticker, QUOTA, "bucket-b");
    try (TestServer server = new TestServer(ticker, req -> req.path().startsWith("/a") ? a.handle(req) : b.handle(req))) {
      // BURST: every unit as soon as asked for, so that any wait is a bucket's.
      HeadroomClient client = Scripted.client(ticker).pacing(Pacing.BURST).build();
      long start = ticker.read();
      assertThat(client.send(Scripted.get(server, "/b"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      for (int i = 0; i < 2; i++) {
        assertThat(client.send(Scripted.get(server, "/a"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      }
      for (int i = 0; i < 3; i++) {
        assertThat(client.send(Scripted.get(server, "/b"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      }
      assertThat(Duration.ofNanos(ticker.read() - start)).as("/b is not held by /a's bucket").isZero();
      assertThat(client.send(Scripted.get(server, "/a"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      assertThat(Duration.ofNanos(ticker.read() - start)).as("/a waits for its own bucket").isGreaterThan(Duration.ZERO);
      assertThat(server.count(429)).as("refusals").isZero();
    }
  }

  /**
   * Shopify behind the bucket its documentation describes ("Shopify API rate limits": 40 requests,
   * leaking 2 a second, a twentieth of the bucket; here 10 leaking half a request a second, a
   * token bucket of 10 per 20 s): four callers asking for 30 requests get the ten in the bucket at
   * once and the rest as the leak gives them back, never refused, within 1.05 times the least time
   * the bucket allows ({@code (30 - 10) * 2 s}). The leak the reader assumes is the server's, and
   * the answers never contradict it ({@link DocumentedAlgorithm}).
   */
  @Test
  void shopifyBehindItsDocumentedLeakIsPacedByTheLeak() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    SteppingScheduler scheduler = new SteppingScheduler(ticker);
    Duration drain = Duration.ofSeconds(20);
    int requests = 30;
    try (TestServer server = new TestServer(ticker,
        VendorPeers.server(VendorPeers.Form.SHOPIFY, ticker, QUOTA, drain, dev.headroom.Algorithm.TOKEN_BUCKET))) {
      HeadroomClient client = HeadroomClient.builder(HTTP).ticker(ticker).scheduler(scheduler)
          .retry(RetryPolicy.builder().jitter(0).build()).addNetworkInterceptor(scheduler.wire()).build();
      long start = ticker.read();
      List<CompletableFuture<Integer>> callers = new ArrayList<>();
      for (int c = 0; c < CALLERS; c++) {
        CompletableFuture<Integer> chain = CompletableFuture.completedFuture(200);
        for (int i = 0; i < requests / CALLERS + (c < requests % CALLERS ? 1 : 0); i++) {
          chain = chain.thenCompose(status -> status != 200 ? CompletableFuture.completedFuture(status)
              : client.sendAsync(Scripted.get(server, "/admin/api/orders.json"), BodyHandlers.discarding())
                  .thenApply(HttpResponse::statusCode));
        }
        callers.add(chain);
      }
      scheduler.run(callers);
      assertThat(server.count(200)).isEqualTo(requests);
      assertThat(server.count(429)).as("refusals").isZero();
      Duration least = drain.multipliedBy(requests - QUOTA).dividedBy(QUOTA);
      assertThat(Duration.ofNanos(ticker.read() - start)).as("the leak, as documented, is credited")
          .isLessThanOrEqualTo(Duration.ofNanos(least.toNanos() * 105 / 100));
    }
  }

  /**
   * A Shopify count that did not drain as the documented leak says ({@link DocumentedAlgorithm}):
   * one request left in the bucket, ten seconds idle (five requests leaked, by the documentation),
   * and the next answer says the bucket is full. The leak is not assumed again: the bucket's
   * {@code t}, computed from it (20 s until empty), is no reset, and the next request asks at once,
   * alone; its refusal's Retry-After (3 s) says when quota returns, and the request goes again
   * then. Read as a leak, it waited the 20 s its {@code t} said.
   */
  @Test
  void aShopifyCountThatDidNotDrainIsNoLongerReadAsALeak() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    String field = "X-Shopify-Shop-Api-Call-Limit";
    try (TestServer server = new TestServer(ticker, Scripted.script(List.of(
        () -> Scripted.ok().header(field, "9/10"),
        () -> Scripted.ok().header(field, "10/10"),
        () -> TestServer.Reply.of(429).header(field, "10/10").header("Retry-After", "3"),
        () -> Scripted.ok().header(field, "1/10"))))) {
      HeadroomClient client = Scripted.client(ticker).build();
      HttpRequest get = Scripted.get(server, "/admin/api/orders.json");
      assertThat(client.send(get, BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      ticker.advance(Duration.ofSeconds(10));
      assertThat(client.send(get, BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      assertThat(client.send(get, BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      assertThat(Scripted.gaps(server)).as("the request that asks goes at once; the retry after Retry-After")
          .containsExactly(10.0, 0.0, 3.0);
    }
  }

  /** A Discord bucket of {@code quota} per {@link #WINDOW}, named {@code name}. */
  private static TestServer.Handler discordBucket(ManualTicker ticker, int quota, String name) {
    TestServer.Handler limiter = VendorPeers.server(VendorPeers.Form.DISCORD, ticker, quota, WINDOW);
    return req -> {
      TestServer.Reply r = limiter.handle(req);
      r.headers.put("X-RateLimit-Bucket", List.of(name));
      return r;
    };
  }

  /**
   * Azure Resource Manager states only the requests that remain ({@code
   * x-ms-ratelimit-remaining-subscription-reads}), never when quota returns: the client spends
   * them at once and, once spent, sends one request at a time, each alone, whose answer (a refusal's
   * Retry-After, or the count again) decides the next ({@link ResetMeaning#UNSTATED}, as a reset
   * beyond the client's ceiling is probed: draft-ietf-httpapi-ratelimit-headers-09 section 8.5.1).
   * No reset is invented: before, the budget was read with a one-second reset, and the request
   * after the last unit waited that second for nothing.
   */
  @Test
  void anAzureBudgetWithoutAResetIsProbedOnceSpentNotWaitedFor() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    try (TestServer server = new TestServer(ticker,
        VendorPeers.server(VendorPeers.Form.AZURE_RESOURCE_MANAGER, ticker, QUOTA, WINDOW))) {
      HeadroomClient client = Scripted.client(ticker).build();
      for (int i = 0; i < 2 * QUOTA; i++) {
        assertThat(client.send(Scripted.get(server, "/api/items"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      }
      List<Double> gaps = Scripted.gaps(server);
      assertThat(gaps.subList(0, QUOTA)).as("the stated units, then the request that asks, at once: %s", gaps)
          .containsOnly(0.0);
      assertThat(server.count(429)).as("refusals: the request that asks, once a window").isEqualTo(1);
    }
  }
}
