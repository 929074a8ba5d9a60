package dev.headroom.client;

import static dev.headroom.client.Scripted.client;
import static dev.headroom.client.Scripted.get;
import static dev.headroom.client.Scripted.ok;
import static dev.headroom.client.Scripted.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.headroom.ManualTicker;
import dev.headroom.http.RetryAfter;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Valid but huge numbers in every dialect (RFC 9651 section 3.3.1: an Integer has up to 15 digits,
 * so {@code t=99999999999999} seconds is well-formed and longer than a {@code long} of nanoseconds)
 * reach the caller as the response they are, never as an exception, never strand the callers
 * waiting behind them, and are never waited for beyond the {@link Ceilings} (draft-09 section
 * 8.5.1): a reset beyond {@link Ceilings#maxReset()} is probed at once, a Retry-After beyond
 * {@link Ceilings#maxRetryAfter()} is waited for up to it.
 */
class WireNumbersTest {

  /** The largest Integer RFC 9651 allows: fifteen digits. */
  static final String HUGE = "999999999999999";

  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final List<Duration> waits = Collections.synchronizedList(new ArrayList<>());

  private final Scheduler recording = Scripted.recording(ticker, waits);

  static List<Map<String, String>> hugeFields() {
    Instant now = ManualTicker.atFixedInstant().instant();
    return List.of(
        Map.of("RateLimit", "\"default\";r=9;t=99999999999999"),
        Map.of("RateLimit", "\"default\";r=0;t=" + HUGE),
        Map.of("RateLimit-Policy", "\"default\";q=10;w=99999999999999", "RateLimit", "\"default\";r=0"),
        Map.of("RateLimit-Policy", "\"default\";q=" + HUGE + ";w=" + HUGE, "RateLimit", "\"default\";r=" + HUGE + ";t=1"),
        Map.of("RateLimit", "limit=10, remaining=0, reset=" + HUGE, "RateLimit-Policy", "10;w=" + HUGE),
        Map.of("RateLimit-Limit", "10", "RateLimit-Remaining", "0", "RateLimit-Reset", HUGE),
        Map.of("X-RateLimit-Limit", HUGE, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "99999999999999"),
        Map.of("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "99999999999999.999"),
        Map.of("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1"),
        Map.of("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "Fri, 31 Dec 9999 23:59:59 GMT"),
        Map.of("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT"),
        Map.of("Retry-After", "99999999999999999999999999"),
        Map.of("Retry-After", RetryAfter.formatHttpDate(now.minusSeconds(86_400L * 365 * 100))));
  }

  // Every one of these used to throw ArithmeticException out of BudgetTracker.apply (Duration.toNanos),
  // failing a 200 and leaving the three requests queued behind it asleep for ever.
  @ParameterizedTest
  @MethodSource("hugeFields")
  void aHugeValidValueNeitherFailsTheResponseNorStrandsTheCallersWaitingBehindIt(Map<String, String> fields)
      throws Exception {
    Supplier<TestServer.Reply> first = () -> {
      TestServer.Reply r = ok();
      fields.forEach(r::header);
      return r;
    };
    try (TestServer server = new TestServer(ticker, script(List.of(first, Scripted::ok)))) {
      HeadroomClient client = client(ticker).scheduler(recording).build();
      List<HttpResponse<String>> responses = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
        // The first request of a scope goes alone; the other three wait for its answer.
        List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
          all.add(client.sendAsync(get(server, "/api/items"), BodyHandlers.ofString()));
        }
        List<HttpResponse<String>> out = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> f : all) {
          out.add(f.get());
        }
        return out;
      });
      assertThat(responses).extracting(HttpResponse::statusCode).containsOnly(200);
      assertThat(server.log()).hasSize(4);
      // Waited for, at most, up to the ceiling (ten minutes).
      assertThat(waits).allSatisfy(w -> assertThat(w).isLessThanOrEqualTo(Ceilings.DEFAULT_MAX_RESET));
    }
  }

  @ParameterizedTest
  @MethodSource("hugeFields")
  void theBudgetsReportedStayWithinTheCeilings(Map<String, String> fields) throws Exception {
    try (TestServer server = new TestServer(ticker, req -> {
      TestServer.Reply r = ok();
      fields.forEach(r::header);
      return r;
    })) {
      HeadroomClient client = client(ticker).scheduler(recording).build();
      client.send(get(server, "/api/items"), BodyHandlers.discarding());
      assertThat(client.budgets().snapshot(get(server, "/api/items")))
          .allSatisfy(b -> assertThat(b.reset()).isLessThanOrEqualTo(Ceilings.DEFAULT_MAX_RESET));
    }
  }

  // An extension may mark a 200 as a refusal with any wait (Exchange.asRefused): it is clamped too.
  @Test
  void anInterceptorsHugeWaitIsClampedByTheCeiling() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(Scripted::ok)))) {
      boolean[] refused = {false};
      HeadroomClient client = client(ticker).scheduler(recording).retry(RetryPolicy.none())
          .addNetworkInterceptor(chain -> chain.proceed(chain.request()).thenApply(ex -> {
            synchronized (refused) {
              if (refused[0]) {
                return ex;
              }
              refused[0] = true;
              return ex.asRefused(Duration.ofSeconds(Long.MAX_VALUE));
            }
          })).build();
      CompletableFuture<HttpResponse<Void>> first = client.sendAsync(get(server, "/a"), BodyHandlers.discarding());
      CompletableFuture<HttpResponse<Void>> second = client.sendAsync(get(server, "/b"), BodyHandlers.discarding());
      assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
        assertThat(first).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
            .havingRootCause().isInstanceOf(RateLimitedException.class);
        assertThat(second.get().statusCode()).isEqualTo(200);
      });
      assertThat(waits).isNotEmpty().allSatisfy(w -> assertThat(w).isLessThanOrEqualTo(Ceilings.DEFAULT_MAX_RETRY_AFTER));
    }
  }

  // seed 003, "Data (Response)": resets_in and window are {value, unit}; 15 digits of days is valid JSON.
  @Test
  void theVendExtensionsHugeDurationsAreClampedToo() throws Exception {
    String data = "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"req_1\",\"result\":{},"
        + "\"extensions\":[{\"urn\":\"urn:vnd:ext:rate-limit\",\"data\":{\"scope\":\"function\",\"limit\":10,"
        + "\"used\":10,\"remaining\":0,\"window\":{\"value\":" + HUGE + ",\"unit\":\"day\"},"
        + "\"resets_in\":{\"value\":" + HUGE + ",\"unit\":\"day\"}}}]}";
    try (VendServer server = new VendServer(ticker, c -> new VendServer.Reply(200, Map.of(), data))) {
      HeadroomClient client = HeadroomClient.builder(Scripted.HTTP).ticker(ticker).scheduler(recording)
          .vend(VendClientOptions.defaults()).build();
      HttpRequest call = HttpRequest.newBuilder(server.uri("/vend"))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(VendRateLimitTest.envelope("req_1", "orders.create", true)))
          .build();
      assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
        for (int i = 0; i < 3; i++) {
          assertThat(client.send(call, BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        }
      });
      assertThat(server.log()).hasSize(3);
      // remaining 0 with a reset beyond the ceiling: the second and third calls go at once, each a
      // probe alone (draft-09 section 8.5.1), not after a sleep on the clamped reset.
      assertThat(waits).isEmpty();
    }
  }
}
