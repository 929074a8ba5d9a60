package dev.headroom.client;

import static dev.headroom.client.Scripted.client;
import static dev.headroom.client.Scripted.gaps;
import static dev.headroom.client.Scripted.get;
import static dev.headroom.client.Scripted.ok;
import static dev.headroom.client.Scripted.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import dev.headroom.http.body.ProblemType;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;

/**
 * Refusals: Retry-After honoured, exponential back-off with a ceiling, idempotency, giving up with
 * the parsed refusal (draft-09 section 5 problem types, Graceful Boundaries section 2 fields),
 * constructive guidance (Graceful Boundaries section 3, SC-6), discovery (section 1), the
 * non-blocking asynchronous API and the interceptor seam.
 */
class RefusalHandlingTest {

  private static final String PROBLEM = "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
      + "\"title\":\"Quota Exceeded\",\"status\":429,\"error\":\"rate_limit_exceeded\",\"detail\":\"Try again in 2 seconds.\","
      + "\"why\":\"Limits keep the service available for everyone.\",\"limit\":\"10 requests per minute\","
      + "\"retryAfterSeconds\":2,\"violated-policies\":[\"minute\"]}";

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private static TestServer.Reply refusal(String body) {
    return TestServer.Reply.of(429).body("application/problem+json", body).header("Retry-After", "2");
  }

  @Test
  void aRefusalIsRetriedAfterRetryAfter() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(() -> refusal(PROBLEM), Scripted::ok)))) {
      HttpResponse<String> r = client(ticker).build().send(get(server, "/api/items"), BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("ok");
      assertThat(gaps(server)).containsExactly(2.0);
    }
  }

  @Test
  void backOffDoublesUpToTheCeilingThenGivesUpWithTheRefusal() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(() -> refusal(PROBLEM))))) {
      HeadroomClient client = client(ticker).retry(RetryPolicy.builder().jitter(0).maxAttempts(4)
          .maxWait(Duration.ofSeconds(5)).build()).build();
      assertThatThrownBy(() -> client.send(get(server, "/api/items"), BodyHandlers.ofString()))
          .isInstanceOfSatisfying(RateLimitedException.class, e -> {
            assertThat(e.attempts()).isEqualTo(4);
            assertThat(e.status()).isEqualTo(429);
            assertThat(e.retryAfter()).contains(Duration.ofSeconds(2));
            assertThat(e.refusal()).hasValueSatisfying(ref -> {
              assertThat(ref.problemType()).contains(ProblemType.QUOTA_EXCEEDED);
              assertThat(ref.why()).contains("Limits keep the service available for everyone.");
              assertThat(ref.violatedPolicies()).containsExactly("minute");
              assertThat(ref.retryAfterSeconds()).hasValue(2);
            });
            assertThat(e.getMessage()).contains("429", "4 attempts", "rate_limit_exceeded");
          });
      // min(retry_after * 2^n, max_wait): 2, 4, then 8 capped at 5.
      assertThat(gaps(server)).containsExactly(2.0, 4.0, 5.0);
    }
  }

  @Test
  void jitterOnlyLengthensTheWait() {
    RetryPolicy p = RetryPolicy.builder().jitter(0.5).random(new SplittableRandom(7)).build();
    for (int i = 0; i < 100; i++) {
      Duration d = p.delay(0, Duration.ofSeconds(10));
      assertThat(d).isBetween(Duration.ofSeconds(10), Duration.ofSeconds(15));
    }
    assertThat(RetryPolicy.defaults().backoff(40, Duration.ofSeconds(1))).isEqualTo(RetryPolicy.defaults().maxWait());
  }

  @Test
  void nonIdempotentRequestsAreNotRetriedUnlessTheCallerOptsIn() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(() -> refusal(PROBLEM), Scripted::ok)))) {
      HttpRequest post = HttpRequest.newBuilder(server.uri("/api/orders")).POST(HttpRequest.BodyPublishers.ofString("{}")).build();
      assertThatThrownBy(() -> client(ticker).build().send(post, BodyHandlers.ofString()))
          .isInstanceOf(RateLimitedException.class).hasMessageContaining("POST is not idempotent");
      assertThat(server.log()).hasSize(1);
      HttpResponse<String> r = client(ticker).retry(RetryPolicy.builder().jitter(0).retryNonIdempotent(true).build()).build()
          .send(post, BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
    }
  }

  @Test
  void a503WithRetryAfterIsARefusalAndWithoutItAnAnswer() throws Exception {
    List<Supplier<TestServer.Reply>> replies = List.of(
        () -> TestServer.Reply.of(503).header("Retry-After", "3").json(
            "{\"type\":\"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity\",\"violated-policies\":[\"hourly\"]}"),
        () -> TestServer.Reply.of(503).body("text/plain", "down"));
    try (TestServer server = new TestServer(ticker, script(replies))) {
      HttpResponse<String> r = client(ticker).build().send(get(server, "/"), BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(r.body()).isEqualTo("down");
      assertThat(gaps(server)).containsExactly(3.0);
    }
  }

  @Test
  void anHtmlRefusalIsStillARefusal() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(429).body("text/html", "Too many requests, please try again later.").header("Retry-After", "4"))))) {
      HeadroomClient client = client(ticker).retry(RetryPolicy.none()).build();
      assertThatThrownBy(() -> client.send(get(server, "/"), BodyHandlers.ofString()))
          .isInstanceOfSatisfying(RateLimitedException.class, e -> {
            assertThat(e.refusal()).isEmpty();
            assertThat(e.retryAfter()).contains(Duration.ofSeconds(4));
          });
    }
  }

  @Test
  void anHtmlRefusalsMetaRetryAfterIsHonouredWhenTheFieldIsMissing() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(429).body("text/html; charset=utf-8",
            "<html><head><meta name=\"retry-after\" content=\"6\"></head><body>Slow down</body></html>"),
        Scripted::ok)))) {
      HttpResponse<String> r = client(ticker).build().send(get(server, "/"), BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(gaps(server)).containsExactly(6.0);
    }
  }

  @Test
  void sameOriginGuidanceIsFollowedWhenAllowed() throws Exception {
    String guided = PROBLEM.replace("}", ",\"alternativeEndpoint\":\"/api/result?id=1\"}");
    try (TestServer server = new TestServer(ticker, req -> req.path().equals("/api/result")
        ? TestServer.Reply.of(200).body("text/plain", "cached result") : refusal(guided))) {
      HttpResponse<String> r = client(ticker).followGuidance(true).build().send(get(server, "/api/scan"), BodyHandlers.ofString());
      assertThat(r.body()).isEqualTo("cached result");
      assertThat(r.uri().getPath()).isEqualTo("/api/result");
      assertThat(server.log()).extracting(l -> l.request().path()).containsExactly("/api/scan", "/api/result");
    }
  }

  @Test
  void crossOriginGuidanceIsNeverFollowedSc6() throws Exception {
    String guided = PROBLEM.replace("}", ",\"cachedResultUrl\":\"http://attacker.invalid/api/result\","
        + "\"alternativeEndpoint\":\"//attacker.invalid/x\"}");
    try (TestServer server = new TestServer(ticker, script(List.of(() -> refusal(guided))))) {
      HeadroomClient client = client(ticker).followGuidance(true).retry(RetryPolicy.none()).build();
      assertThatThrownBy(() -> client.send(get(server, "/api/scan"), BodyHandlers.ofString()))
          .isInstanceOf(RateLimitedException.class);
      assertThat(server.log()).hasSize(1);
    }
  }

  @Test
  void discoveryPlansRequestsBeforeAnyFieldsArrive() throws Exception {
    String doc = "{\"service\":\"Example\",\"description\":\"Items.\",\"limits\":{\"items\":{\"endpoint\":\"/api/items/{id}\","
        + "\"method\":\"GET\",\"limits\":[{\"type\":\"ip-rate\",\"maxRequests\":3,\"windowSeconds\":60,\"description\":\"3 per minute.\"}]}}}";
    try (TestServer server = new TestServer(ticker, req -> switch (req.path()) {
      case "/.well-known/limits" -> TestServer.Reply.of(404).body("text/plain", "no");
      case "/api/limits" -> TestServer.Reply.of(200).json(doc);
      default -> ok();
    })) {
      HeadroomClient client = client(ticker).pacing(Pacing.BURST).discoverLimits(true).build();
      for (int i = 0; i < 4; i++) {
        client.send(get(server, "/api/items/" + i), BodyHandlers.discarding());
      }
      client.send(get(server, "/other"), BodyHandlers.discarding());
      assertThat(server.log()).extracting(l -> l.request().path())
          .containsExactly("/.well-known/limits", "/api/limits", "/api/items/0", "/api/items/1", "/api/items/2",
              "/api/items/3", "/other");
      List<Double> gaps = gaps(server);
      assertThat(gaps.subList(2, 6)).containsExactly(0.0, 0.0, 60.0, 0.0);
      assertThat(client.discover(server.uri("/"))).hasValueSatisfying(d -> assertThat(d.service()).contains("Example"));
      assertThat(server.log()).hasSize(7);
      // Read again once the reading is an hour old.
      ticker.advance(Duration.ofHours(1));
      client.send(get(server, "/other"), BodyHandlers.discarding());
      assertThat(server.log()).extracting(l -> l.request().path()).endsWith("/.well-known/limits", "/api/limits", "/other");
    }
  }

  @Test
  void aFailedDiscoveryReadIsTriedAgainAfterAMinuteNotAfterTheTtl() throws Exception {
    String doc = "{\"service\":\"Example\",\"description\":\"Items.\",\"limits\":{}}";
    AtomicInteger wellKnown = new AtomicInteger();
    try (TestServer server = new TestServer(ticker, req -> switch (req.path()) {
      case "/.well-known/limits" -> wellKnown.incrementAndGet() == 1
          ? TestServer.Reply.of(503).body("text/plain", "down") : TestServer.Reply.of(200).json(doc);
      case "/api/limits" -> TestServer.Reply.of(404).body("text/plain", "no");
      default -> ok();
    })) {
      HeadroomClient client = client(ticker).build();
      assertThat(client.discover(server.uri("/"))).isEmpty();
      ticker.advance(Duration.ofSeconds(59));
      assertThat(client.discover(server.uri("/"))).isEmpty();
      assertThat(wellKnown).hasValue(1); // within the minute: the failed reading stands
      ticker.advance(Duration.ofSeconds(2));
      assertThat(client.discover(server.uri("/"))).hasValueSatisfying(d -> assertThat(d.service()).contains("Example"));
      assertThat(wellKnown).hasValue(2);
    }
  }

  @Test
  void anOriginThatSaysItHasNoDocumentIsAskedAgainOnlyAfterTheTtl() throws Exception {
    try (TestServer server = new TestServer(ticker, req -> switch (req.path()) {
      case "/.well-known/limits", "/api/limits" -> TestServer.Reply.of(404).body("text/plain", "no");
      default -> ok();
    })) {
      HeadroomClient client = client(ticker).build();
      assertThat(client.discover(server.uri("/"))).isEmpty();
      assertThat(server.log()).hasSize(2);
      ticker.advance(Duration.ofMinutes(59));
      assertThat(client.discover(server.uri("/"))).isEmpty();
      assertThat(server.log()).hasSize(2);
      ticker.advance(Duration.ofMinutes(1));
      assertThat(client.discover(server.uri("/"))).isEmpty();
      assertThat(server.log()).hasSize(4);
    }
  }

  @Test
  void theAsynchronousApiWaitsWithoutBlockingAThread() throws Exception {
    List<Duration> asked = new ArrayList<>();
    List<CompletableFuture<Void>> parked = new ArrayList<>();
    Scheduler recording = d -> {
      CompletableFuture<Void> f = new CompletableFuture<>();
      synchronized (asked) {
        asked.add(d);
        parked.add(f);
      }
      return f;
    };
    try (TestServer server = new TestServer(ticker, script(List.of(() -> ok().header("Retry-After", "5"), Scripted::ok)))) {
      HeadroomClient client = HeadroomClient.builder(Scripted.HTTP).ticker(ticker).scheduler(recording).build();
      client.send(get(server, "/"), BodyHandlers.discarding());
      long before = System.nanoTime();
      CompletableFuture<HttpResponse<String>> f = client.sendAsync(get(server, "/"), BodyHandlers.ofString());
      assertThat(Duration.ofNanos(System.nanoTime() - before)).isLessThan(Duration.ofSeconds(2));
      assertThat(f).isNotDone();
      synchronized (asked) {
        assertThat(asked).containsExactly(Duration.ofSeconds(5));
      }
      ticker.advance(Duration.ofSeconds(5));
      parked.get(0).complete(null);
      assertThat(f.get(10, TimeUnit.SECONDS).body()).isEqualTo("ok");
    }
  }

  @Test
  void anAsynchronousRefusalCompletesExceptionallyWithTheRefusal() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(() -> refusal(PROBLEM))))) {
      CompletableFuture<HttpResponse<String>> f = client(ticker).retry(RetryPolicy.none()).build()
          .sendAsync(get(server, "/"), BodyHandlers.ofString());
      assertThatThrownBy(f::get).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(RateLimitedException.class);
    }
  }

  @Test
  void aNetworkInterceptorCanSignalRefusalsAndBudgetsFromBodies() throws Exception {
    // The seam the vend extension's client plugs into: limits carried in a 200 body.
    Interceptor vendLike = chain -> chain.proceed(chain.request()).thenApply(ex -> {
      if (ex.isSuccess() && "RATE_LIMITED".equals(ex.response().body())) {
        chain.budgets().observe(chain.request(), "vend-scope", 0, Duration.ofSeconds(4));
        return ex.asRefused(Duration.ofSeconds(4));
      }
      return ex;
    });
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(200).body("text/plain", "RATE_LIMITED"), Scripted::ok)))) {
      HeadroomClient client = client(ticker).addNetworkInterceptor(vendLike).build();
      HttpResponse<String> r = client.send(get(server, "/rpc"), BodyHandlers.ofString());
      assertThat(r.body()).isEqualTo("ok");
      assertThat(gaps(server)).containsExactly(4.0);
      // Spent and past its reset, the observed budget was dropped by the probe that followed it.
      assertThat(client.budgets().snapshot(get(server, "/rpc"))).isEmpty();
      client.budgets().observe(get(server, "/rpc"), "vend-scope", 3, Duration.ofSeconds(60));
      assertThat(client.budgets().snapshot(get(server, "/rpc"))).extracting(Budget::policy, Budget::remaining, Budget::source)
          .containsExactly(Tuple.tuple("vend-scope", 3L, "observed"));
    }
  }

  @Test
  void applicationInterceptorsSeeOneCallAndNetworkInterceptorsEveryAttempt() throws Exception {
    List<String> seen = new ArrayList<>();
    try (TestServer server = new TestServer(ticker, script(List.of(() -> refusal(PROBLEM), Scripted::ok)))) {
      HeadroomClient client = client(ticker)
          .addInterceptor(c -> {
            seen.add("app");
            return c.proceed(c.request());
          })
          .addNetworkInterceptor(c -> {
            seen.add("network");
            return c.proceed(HttpRequest.newBuilder(c.request(), (n, v) -> true).header("X-Attempt", "yes").build());
          }).build();
      client.send(get(server, "/"), BodyHandlers.discarding());
      assertThat(seen).containsExactly("app", "network", "network");
      assertThat(server.log()).allSatisfy(l -> assertThat(l.request().headers().get("X-attempt")).containsExactly("yes"));
    }
  }
}
