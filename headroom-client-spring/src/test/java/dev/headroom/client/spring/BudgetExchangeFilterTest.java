package dev.headroom.client.spring;

import static dev.headroom.client.spring.Replies.gaps;
import static dev.headroom.client.spring.Replies.ok;
import static dev.headroom.client.spring.Replies.refused;
import static dev.headroom.client.spring.Replies.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import dev.headroom.client.ClientBudget;
import dev.headroom.client.RateLimitedException;
import dev.headroom.client.RetryPolicy;
import dev.headroom.client.Scheduler;
import dev.headroom.client.TestServer;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * {@link BudgetExchangeFilter} in a {@link WebClient} against a real loopback server
 * ({@link TestServer}): pacing by RateLimit fields (draft-ietf-httpapi-ratelimit-headers-09 section
 * 7) and retries after Retry-After (RFC 9110 section 10.2.3) in virtual time, and waits that never
 * hold the subscribing thread.
 */
class BudgetExchangeFilterTest {

  private static final HttpClient JDK = HttpClient.newHttpClient();

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private ClientBudget.Builder engine() {
    return ClientBudget.builder().ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .retry(RetryPolicy.builder().jitter(0).build());
  }

  private static WebClient web(ClientBudget budget) {
    return WebClient.builder().clientConnector(new JdkClientHttpConnector(JDK))
        .filter(BudgetExchangeFilter.of(budget)).build();
  }

  @Test
  void section7TheNextExchangeWaitsForTheResetWhenNoUnitRemains() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> ok("one").header("RateLimit", "\"default\";r=0;t=1"), () -> ok("two"))))) {
      WebClient web = web(engine().build());
      assertThat(web.get().uri(server.uri("/a")).retrieve().bodyToMono(String.class).block(Duration.ofSeconds(30)))
          .isEqualTo("one");
      assertThat(web.get().uri(server.uri("/a")).retrieve().bodyToMono(String.class).block(Duration.ofSeconds(30)))
          .isEqualTo("two");
      assertThat(gaps(server)).containsExactly(1.0);
    }
  }

  @Test
  void aRefusalWithRetryAfterIsRetriedAfterTheWaitAndSucceeds() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(() -> refused(429, "2"), () -> ok("done"))))) {
      assertThat(web(engine().build()).put().uri(server.uri("/a")).bodyValue("payload").retrieve()
          .bodyToMono(String.class).block(Duration.ofSeconds(30))).isEqualTo("done");
      assertThat(server.count(429)).isEqualTo(1);
      assertThat(gaps(server)).containsExactly(2.0);
    }
  }

  @Test
  void aRefusalThatIsNotRetriedEndsTheExchangeWithTheRefusal() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(() -> refused(429, "1"))))) {
      // The Mono's error is the refusal itself (block() would wrap a checked exception).
      CompletableFuture<String> f = web(engine().retry(RetryPolicy.none()).build()).get().uri(server.uri("/a")).retrieve()
          .bodyToMono(String.class).toFuture();
      assertThatThrownBy(() -> f.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).cause()
          .isInstanceOfSatisfying(RateLimitedException.class, e -> {
            assertThat(e.status()).isEqualTo(429);
            assertThat(e.retryAfter()).contains(Duration.ofSeconds(1));
            assertThat(e.refusal()).isPresent();
          });
      assertThat(server.log()).hasSize(1);
    }
  }

  @Test
  void aWaitingExchangeHoldsNoThreadAndCancellingItGivesThePermitBack() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> ok("one").header("RateLimit", "\"default\";r=0;t=60"), () -> ok("two"))))) {
      // A real scheduler over a frozen clock: the second exchange waits until the test moves time.
      ClientBudget budget = ClientBudget.builder().ticker(ticker).build();
      WebClient web = web(budget);
      assertThat(web.get().uri(server.uri("/a")).retrieve().bodyToMono(String.class).block(Duration.ofSeconds(30)))
          .isEqualTo("one");
      CompletableFuture<String> waiting = web.get().uri(server.uri("/a")).retrieve().bodyToMono(String.class).toFuture();
      // Subscribing returned at once, the exchange not sent: the wait holds no thread of the caller's.
      assertThat(waiting).isNotDone();
      waiting.cancel(true);
      ticker.advance(Duration.ofSeconds(61));
      // Had the cancelled exchange kept its permit, this one (a probe after the reset) would wait for it.
      assertThat(web.get().uri(server.uri("/a")).retrieve().bodyToMono(String.class).block(Duration.ofSeconds(30)))
          .isEqualTo("two");
      assertThat(server.log()).hasSize(2);
      assertThat(budget.budgets().snapshot(ClientBudget.requestView("GET", server.uri("/a"), Map.of()))).isEmpty();
    }
  }
}
