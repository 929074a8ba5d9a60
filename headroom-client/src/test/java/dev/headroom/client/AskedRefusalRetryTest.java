package dev.headroom.client;

import static dev.headroom.client.Scripted.gaps;
import static dev.headroom.client.Scripted.get;
import static dev.headroom.client.Scripted.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.headroom.ManualTicker;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A budget that states no reset (Azure Resource Manager's remaining-only fields) is asked, once
 * spent, by one request at a time; the refusal of such a request is the answer sought, and its
 * Retry-After (RFC 9110 section 10.2.3) is waited as it stands, however many windows in a row the
 * same request is refused in ({@link RetryPolicy#askDelay}). A refusal the client did not expect
 * still doubles. Through {@link HeadroomClient} and through {@link ClientBudget#execute} and
 * {@link ClientBudget#executeAsync} (what the OkHttp, Spring and HttpClient 5 integrations run),
 * on a real loopback server in virtual time.
 */
class AskedRefusalRetryTest {

  private static final String AZURE_READS = "x-ms-ratelimit-remaining-subscription-reads";

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  /** The budget spent by the first answer, then three refusals of the request that asks, then quota. */
  private static TestServer.Handler spentThenRefusedThrice() {
    List<Supplier<TestServer.Reply>> replies = new ArrayList<>();
    replies.add(() -> Scripted.ok().header(AZURE_READS, "0"));
    for (int i = 0; i < 3; i++) {
      replies.add(() -> TestServer.Reply.of(429).header("Retry-After", "4").header(AZURE_READS, "0")
          .json("{\"error\":{\"code\":\"TooManyRequests\"}}"));
    }
    replies.add(() -> Scripted.ok().header(AZURE_READS, "9"));
    return script(replies);
  }

  @Test
  void aRequestAskingInConsecutiveWindowsIsRetriedAtEachRetryAfterNotDoubled() throws Exception {
    try (TestServer server = new TestServer(ticker, spentThenRefusedThrice())) {
      HeadroomClient client = Scripted.client(ticker).build();
      assertThat(client.send(get(server, "/api/items"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      // The budget is spent and says no reset: the next request asks, and is refused three times.
      assertThat(client.send(get(server, "/api/items"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      List<Double> gaps = gaps(server);
      assertThat(gaps.subList(1, gaps.size())).as("arrivals after the first ask: %s", gaps)
          .containsExactly(4.0, 4.0, 4.0);
    }
  }

  @Test
  void anAskStillCountsAsATry() throws Exception {
    try (TestServer server = new TestServer(ticker, spentThenRefusedThrice())) {
      HeadroomClient client = Scripted.client(ticker).retry(RetryPolicy.builder().jitter(0).maxAttempts(3).build())
          .build();
      client.send(get(server, "/api/items"), BodyHandlers.discarding());
      RateLimitedException e = catchThrowableOfType(
          () -> client.send(get(server, "/api/items"), BodyHandlers.discarding()), RateLimitedException.class);
      assertThat(e).isNotNull();
      assertThat(e.getMessage()).contains("maxAttempts 3");
      assertThat(gaps(server).subList(1, 3)).containsExactly(4.0, 4.0);
    }
  }

  @Test
  void aRefusalTheClientDidNotExpectStillDoubles() throws Exception {
    // No field states a budget: nothing says the request might be refused, so each refusal backs off.
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(429).header("Retry-After", "4").body("text/plain", "slow down"))))) {
      HeadroomClient client = Scripted.client(ticker).build();
      assertThatThrownBy(
          () -> client.send(get(server, "/api/items"), BodyHandlers.discarding()))
          .isInstanceOf(RateLimitedException.class);
      assertThat(gaps(server)).containsExactly(4.0, 8.0, 16.0);
    }
  }

  @Test
  void theEngineWaitsAnAsksRefusalAsItStandsBlocking() throws Exception {
    try (TestServer server = new TestServer(ticker, spentThenRefusedThrice())) {
      ClientBudget budget = engine();
      HttpRequest request = get(server, "/api/items");
      HttpRequest view = ClientBudget.requestView("GET", request.uri(), Map.of());
      assertThat(budget.execute(view, true, blocking(request)).statusCode()).isEqualTo(200);
      assertThat(budget.execute(view, true, blocking(request)).statusCode()).isEqualTo(200);
      List<Double> gaps = gaps(server);
      assertThat(gaps.subList(1, gaps.size())).as("arrivals after the first ask: %s", gaps)
          .containsExactly(4.0, 4.0, 4.0);
    }
  }

  @Test
  void theEngineWaitsAnAsksRefusalAsItStandsAsync() throws Exception {
    try (TestServer server = new TestServer(ticker, spentThenRefusedThrice())) {
      ClientBudget budget = engine();
      HttpRequest request = get(server, "/api/items");
      HttpRequest view = ClientBudget.requestView("GET", request.uri(), Map.of());
      assertThat(budget.executeAsync(view, true, async(request)).get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
      assertThat(budget.executeAsync(view, true, async(request)).get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
      List<Double> gaps = gaps(server);
      assertThat(gaps.subList(1, gaps.size())).as("arrivals after the first ask: %s", gaps)
          .containsExactly(4.0, 4.0, 4.0);
    }
  }

  @Test
  void theAskDelayIsRetryAfterFlooredAndCappedNeverDoubled() {
    RetryPolicy p = RetryPolicy.builder().maxWait(Duration.ofSeconds(10)).build();
    assertThat(p.askDelay(Duration.ofSeconds(4))).isEqualTo(Duration.ofSeconds(4));
    assertThat(p.askDelay(Duration.ZERO)).isEqualTo(RetryPolicy.DEFAULT_BASE_DELAY);
    assertThat(p.askDelay(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(10));
  }

  private ClientBudget engine() {
    return ClientBudget.builder().ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .retry(RetryPolicy.builder().jitter(0).build()).build();
  }

  private static ClientBudget.Transport<HttpResponse<byte[]>> blocking(HttpRequest request) {
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

  private static ClientBudget.AsyncTransport<HttpResponse<byte[]>> async(HttpRequest request) {
    return new ClientBudget.AsyncTransport<>() {
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
    };
  }
}
