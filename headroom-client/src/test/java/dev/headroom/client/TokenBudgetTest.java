package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.headroom.ManualTicker;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Budgets in units other than requests ({@link RequestCost}): against a real loopback server that
 * meters tokens and requests ({@link TokenServer}: {@code "tpm";q=1000;w=60;qu="tokens"},
 * draft-ietf-httpapi-ratelimit-headers-09 section 3.1's quota unit), in virtual time, four callers
 * each sending its next request when its last is answered.
 */
class TokenBudgetTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private HeadroomClient.Builder client() {
    return Scripted.client(ticker);
  }

  private static HttpRequest call(TokenServer server, long tokensUsed) {
    return HttpRequest.newBuilder(server.uri("/v1/chat")).header(TokenServer.TOKENS_FIELD, Long.toString(tokensUsed))
        .build();
  }

  /** Four callers send {@code n} calls in all, each with {@code send}. */
  private static void fourCallers(int n, Function<Integer, CompletableFuture<?>> send) throws Exception {
    AtomicInteger issued = new AtomicInteger();
    List<CompletableFuture<?>> callers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      callers.add(caller(issued, n, send));
    }
    CompletableFuture.allOf(callers.toArray(CompletableFuture[]::new)).get();
  }

  private static CompletableFuture<?> caller(AtomicInteger issued, int n, Function<Integer, CompletableFuture<?>> send) {
    int i = issued.getAndIncrement();
    if (i >= n) {
      return CompletableFuture.completedFuture(null);
    }
    return send.apply(i).thenCompose(r -> caller(issued, n, send));
  }

  @Test
  void aRequestIsHeldUntilTheTokenBudgetCoversItsStatedCost() throws Exception {
    try (TokenServer server = new TokenServer(ticker, 100, 1000, Duration.ofSeconds(60))) {
      HeadroomClient client = client().build();
      assertTimeoutPreemptively(Duration.ofSeconds(30), () -> fourCallers(12,
          i -> client.sendAsync(call(server, 300), BodyHandlers.discarding(), RequestCost.of("tokens", 300))));
      // Three calls of 300 tokens fit a window of 1000; the fourth waits for the next window.
      assertThat(server.refusals()).isZero();
      assertThat(server.admittedPerBusyWindow()).containsExactly(3L, 3L, 3L, 3L);
      assertThat(client.budgets().snapshot(call(server, 0))).anySatisfy(b -> {
        assertThat(b.policy()).isEqualTo("tpm");
        assertThat(b.unit()).isEqualTo("tokens");
        assertThat(b.quota()).hasValue(1000);
      });
    }
  }

  @Test
  void withoutTheCostStatedTheSameWorkIsRefused() throws Exception {
    try (TokenServer server = new TokenServer(ticker, 100, 1000, Duration.ofSeconds(60))) {
      HeadroomClient client = client().build();
      assertTimeoutPreemptively(Duration.ofSeconds(30), () -> fourCallers(12,
          i -> client.sendAsync(call(server, 300), BodyHandlers.discarding())));
      // The contrast that makes the test above mean something: only requests are counted here.
      assertThat(server.refusals()).isPositive();
    }
  }

  @Test
  void theBooksAreCorrectedByWhatTheServerReportsNext() throws Exception {
    try (TokenServer server = new TokenServer(ticker, 100, 1000, Duration.ofSeconds(60))) {
      HeadroomClient client = client().build();
      // Each call is expected to cost 400 tokens and uses 200: by the expectation alone two calls
      // fit a window; the reports show what is left, and four go.
      assertTimeoutPreemptively(Duration.ofSeconds(30), () -> fourCallers(8,
          i -> client.sendAsync(call(server, 200), BodyHandlers.discarding(), RequestCost.of("tokens", 400))));
      assertThat(server.refusals()).isZero();
      assertThat(server.admittedPerBusyWindow()).containsExactly(4L, 4L);
    }
  }

  @Test
  void theBuildersCostFunctionStatesTheCostOfEveryRequest() throws Exception {
    try (TokenServer server = new TokenServer(ticker, 100, 1000, Duration.ofSeconds(60))) {
      HeadroomClient client = client().cost(r -> r.headers().firstValue(TokenServer.TOKENS_FIELD)
          .map(v -> RequestCost.of("tokens", Long.parseLong(v))).orElse(null)).build();
      assertTimeoutPreemptively(Duration.ofSeconds(30), () -> fourCallers(10,
          i -> client.sendAsync(call(server, 450), BodyHandlers.discarding())));
      assertThat(server.refusals()).isZero();
      assertThat(server.admittedPerBusyWindow()).containsExactly(2L, 2L, 2L, 2L, 2L);
    }
  }

  @Test
  void aRequestThatStatesNoTokensIsNotHeldByTheTokenBudget() throws Exception {
    try (TokenServer server = new TokenServer(ticker, 100, 1000, Duration.ofSeconds(60))) {
      // BURST: rpm (98 of 100 left) does not space the calls, so only tpm could hold one.
      HeadroomClient client = client().pacing(Pacing.BURST).build();
      client.send(call(server, 1000), BodyHandlers.discarding(), RequestCost.of("tokens", 1000));
      // tpm is spent (r=0); a call that uses no tokens goes at once all the same.
      client.send(call(server, 0), BodyHandlers.discarding());
      assertThat(server.log()).hasSize(2);
      assertThat(server.log().get(1).request().atNanos()).isEqualTo(server.log().get(0).request().atNanos());
      assertThat(server.refusals()).isZero();
    }
  }

  @Test
  void aCostNamesAUnitAndAnAmountTheWireAllows() {
    assertThat(RequestCost.of("Tokens", 5).amount("tokens")).hasValue(5);
    assertThat(RequestCost.of("tokens", 5).plus("input-tokens", 3).amounts()).containsEntry("input-tokens", 3L);
    assertThatThrownBy(() -> RequestCost.of("requests", 2)).hasMessageContaining("unit")
        .hasMessageContaining("requests");
    assertThatThrownBy(() -> RequestCost.of("tokens", -1)).hasMessageContaining("amount").hasMessageContaining("-1");
    assertThatThrownBy(() -> RequestCost.of("", 1)).hasMessageContaining("unit");
    assertThatThrownBy(() -> RequestCost.of("tokens", RequestCost.MAX_AMOUNT + 1)).hasMessageContaining("amount");
  }
}
