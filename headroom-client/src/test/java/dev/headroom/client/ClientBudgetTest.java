package dev.headroom.client;

import static dev.headroom.client.Scripted.gaps;
import static dev.headroom.client.Scripted.get;
import static dev.headroom.client.Scripted.ok;
import static dev.headroom.client.Scripted.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The budget engine's public API ({@link ClientBudget}), which every transport adapter and
 * {@link HeadroomClient} share, against a real loopback server in virtual time. Budget rules are
 * draft-ietf-httpapi-ratelimit-headers-09 section 7; retries RFC 9110 sections 9.2.2 and 10.2.3.
 */
class ClientBudgetTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private ClientBudget.Builder engine() {
    return ClientBudget.builder().ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .retry(RetryPolicy.builder().jitter(0).build());
  }

  /** A blocking transport over the JDK client, as an adapter would write it. */
  private static ClientBudget.Transport<HttpResponse<byte[]>> jdk(HttpRequest request) {
    return new ClientBudget.Transport<>() {
      @Override
      public HttpResponse<byte[]> send() throws IOException {
        try {
          return Scripted.HTTP.send(request, BodyHandlers.ofByteArray());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException();
        }
      }

      @Override
      public int status(HttpResponse<byte[]> response) {
        return response.statusCode();
      }

      @Override
      public Map<String, ? extends Collection<String>> headers(HttpResponse<byte[]> response) {
        return response.headers().map();
      }

      @Override
      public byte[] consumeRefusal(HttpResponse<byte[]> response, int maxBytes) {
        return response.body();
      }
    };
  }

  @Test
  void section7TwoClientsBuiltOnOneEngineShareOneBudget() throws Exception {
    ClientBudget shared = engine().build();
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> ok().header("RateLimit", "\"default\";r=0;t=5"), Scripted::ok)))) {
      HeadroomClient a = HeadroomClient.builder(Scripted.HTTP).budget(shared).build();
      HeadroomClient b = HeadroomClient.builder(Scripted.HTTP).budget(shared).build();
      a.send(get(server, "/a"), BodyHandlers.discarding());
      b.send(get(server, "/b"), BodyHandlers.discarding());
      // b waited for the reset that a's answer announced.
      assertThat(gaps(server)).containsExactly(5.0);
      assertThat(b.budgets()).isSameAs(shared.budgets());
    }
  }

  @Test
  void aRefusalWithRetryAfterIsRetriedAfterTheWaitThroughExecute() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(429).header("Retry-After", "3")
            .json("{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\",\"title\":\"Too Many Requests\"}"),
        Scripted::ok)))) {
      ClientBudget budget = engine().build();
      HttpRequest request = get(server, "/x");
      HttpResponse<byte[]> response = budget.execute(ClientBudget.requestView("GET", request.uri(), Map.of()), true,
          jdk(request));
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(server.count(429)).isEqualTo(1);
      assertThat(gaps(server)).containsExactly(3.0);
    }
  }

  @Test
  void aBodyThatCannotBeReplayedIsNotRetriedAndTheRefusalIsReported() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(429).header("Retry-After", "1")
            .json("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"detail\":\"slow down\"}"))))) {
      ClientBudget budget = engine().build();
      HttpRequest request = get(server, "/x");
      assertThatThrownBy(() -> budget.execute(ClientBudget.requestView("PUT", request.uri(), Map.of()), false,
          jdk(request)))
          .isInstanceOfSatisfying(RateLimitedException.class, e -> {
            assertThat(e.attempts()).isEqualTo(1);
            assertThat(e.status()).isEqualTo(429);
            assertThat(e.retryAfter()).contains(Duration.ofSeconds(1));
            assertThat(e.refusal().flatMap(r -> r.detail())).contains("slow down");
          })
          .hasMessageContaining("the request body cannot be sent again");
      assertThat(server.log()).hasSize(1);
    }
  }

  @Test
  void aPostIsNotRetriedUnlessThePolicySaysSo() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(429).header("Retry-After", "1"), Scripted::ok)))) {
      HttpRequest request = get(server, "/x");
      HttpRequest view = ClientBudget.requestView("POST", request.uri(), Map.of());
      assertThatThrownBy(() -> engine().build().execute(view, true, jdk(request)))
          .isInstanceOf(RateLimitedException.class).hasMessageContaining("POST is not idempotent");
      ClientBudget lenient = engine().retry(RetryPolicy.builder().jitter(0).retryNonIdempotent(true).build()).build();
      assertThat(lenient.execute(view, true, jdk(request)).statusCode()).isEqualTo(200);
    }
  }

  @Test
  void aBlockingWaitLongerThanMaxWaitFailsWithoutSending() throws Exception {
    // Real scheduler, frozen clock: the budget never resets, so only maxWait ends the wait.
    ClientBudget budget = ClientBudget.builder().ticker(ticker).maxWait(Duration.ofMillis(50)).build();
    HttpRequest view = ClientBudget.requestView("GET", URI.create("http://127.0.0.1:9/x"), Map.of());
    budget.budgets().observe(view, "default", 0, Duration.ofSeconds(60));
    AtomicInteger sent = new AtomicInteger();
    assertThatThrownBy(() -> budget.execute(view, true, new ClientBudget.Transport<Object>() {
      @Override
      public Object send() {
        sent.incrementAndGet();
        return null;
      }

      @Override
      public int status(Object response) {
        return 200;
      }

      @Override
      public Map<String, ? extends Collection<String>> headers(Object response) {
        return Map.of();
      }

      @Override
      public byte[] consumeRefusal(Object response, int maxBytes) {
        return new byte[0];
      }
    })).isInstanceOfSatisfying(BudgetWaitException.class, e -> {
      assertThat(e.maxWait()).isEqualTo(Duration.ofMillis(50));
      assertThat(e.status()).isZero();
      assertThat(e.exchange()).isNull();
      assertThat(e.uri()).isEqualTo(view.uri());
    }).isInstanceOf(RateLimitedException.class);
    assertThat(sent).hasValue(0);
  }

  @Test
  void aTransportFailureReleasesThePermitSoTheNextRequestIsNotStranded() throws Exception {
    ClientBudget budget = engine().build();
    HttpRequest view = ClientBudget.requestView("GET", URI.create("http://127.0.0.1:9/x"), Map.of());
    ClientBudget.Transport<Object> failing = new ClientBudget.Transport<>() {
      @Override
      public Object send() throws IOException {
        throw new IOException("connection refused");
      }

      @Override
      public int status(Object response) {
        return 0;
      }

      @Override
      public Map<String, ? extends Collection<String>> headers(Object response) {
        return Map.of();
      }

      @Override
      public byte[] consumeRefusal(Object response, int maxBytes) {
        return new byte[0];
      }
    };
    assertThatThrownBy(() -> budget.execute(view, true, failing)).hasMessage("connection refused");
    // The first request of a scope goes alone: had its permit leaked, this would wait for ever.
    CompletableFuture<ClientBudget.Permit> next = budget.acquire(view);
    assertThat(next).isDone();
    ClientBudget.Permit permit = next.join();
    permit.record(200, Map.of("RateLimit", List.of("\"default\";r=4;t=10")), null);
    assertThatThrownBy(() -> permit.record(200, Map.of(), null)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already reported");
    assertThat(budget.budgets().snapshot(view)).singleElement()
        .satisfies(b -> assertThat(b.remaining()).isEqualTo(4));
  }

  @Test
  void executeAsyncWaitsOnTheSchedulerAndRetries() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(503).header("Retry-After", "2"), Scripted::ok)))) {
      ClientBudget budget = engine().build();
      HttpRequest request = get(server, "/x");
      CompletableFuture<HttpResponse<byte[]>> f = budget.executeAsync(
          ClientBudget.requestView("GET", request.uri(), Map.of()), true, new ClientBudget.AsyncTransport<>() {
            @Override
            public CompletableFuture<HttpResponse<byte[]>> send() {
              return Scripted.HTTP.sendAsync(request, BodyHandlers.ofByteArray());
            }

            @Override
            public int status(HttpResponse<byte[]> response) {
              return response.statusCode();
            }

            @Override
            public Map<String, ? extends Collection<String>> headers(HttpResponse<byte[]> response) {
              return response.headers().map();
            }

            @Override
            public CompletableFuture<byte[]> consumeRefusal(HttpResponse<byte[]> response, int maxBytes) {
              return CompletableFuture.completedFuture(response.body());
            }
          });
      assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
      assertThat(gaps(server)).containsExactly(2.0);
    }
  }

  @Test
  void badInputIsNamed() {
    assertThatThrownBy(() -> ClientBudget.requestView("GE T", URI.create("http://h/"), Map.of()))
        .hasMessageContaining("method").hasMessageContaining("GE T");
    assertThatThrownBy(() -> ClientBudget.requestView("GET", URI.create("ftp://h/"), Map.of()))
        .hasMessageContaining("uri").hasMessageContaining("ftp://h/");
    assertThatThrownBy(() -> ClientBudget.builder().maxWait(Duration.ZERO)).hasMessageContaining("maxWait");
    assertThatThrownBy(() -> HeadroomClient.builder(Scripted.HTTP).budget(engine().build())
        .vend(VendClientOptions.defaults()).build()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("budget");
    // Fields java.net.http does not let a caller set are left out of the view, not an error.
    HttpRequest view = ClientBudget.requestView("GET", URI.create("http://h/"),
        Map.of("Host", List.of("h"), "Authorization", List.of("Bearer t")));
    assertThat(view.headers().firstValue("Authorization")).contains("Bearer t");
  }
}
