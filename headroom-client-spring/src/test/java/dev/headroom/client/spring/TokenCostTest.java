package dev.headroom.client.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.client.ClientBudget;
import dev.headroom.client.RequestCost;
import dev.headroom.client.RetryPolicy;
import dev.headroom.client.Scheduler;
import dev.headroom.client.TokenServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * A request's cost in tokens, stated with a Spring request attribute ({@link RequestCost#ATTRIBUTE}),
 * through RestClient and WebClient, against a real loopback server that meters tokens
 * ({@link TokenServer}: {@code "tpm";q=1000;w=60;qu="tokens"}, draft-ietf-httpapi-ratelimit-headers-09
 * section 3.1), in virtual time.
 */
class TokenCostTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private ClientBudget budget() {
    return ClientBudget.builder().ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .retry(RetryPolicy.builder().jitter(0).build()).build();
  }

  @Test
  void restClientHoldsEachCallUntilTheTokenBudgetCoversIt() throws Exception {
    RestClient rest = RestClient.builder().requestInterceptor(BudgetRequestInterceptor.of(budget())).build();
    try (TokenServer server = new TokenServer(ticker, 100, 1000, Duration.ofSeconds(60))) {
      TokenServer.callers(4, 8, () -> assertThat(rest.get().uri(server.uri("/v1/chat"))
          .header(TokenServer.TOKENS_FIELD, "300").attribute(RequestCost.ATTRIBUTE, RequestCost.of("tokens", 300))
          .retrieve().toBodilessEntity().getStatusCode().value()).isEqualTo(200));
      assertThat(server.refusals()).isZero();
      assertThat(server.admittedPerBusyWindow()).containsExactly(3L, 3L, 2L);
    }
  }

  @Test
  void webClientHoldsEachCallUntilTheTokenBudgetCoversIt() throws Exception {
    WebClient web = WebClient.builder().filter(BudgetExchangeFilter.of(budget())).build();
    try (TokenServer server = new TokenServer(ticker, 100, 1000, Duration.ofSeconds(60))) {
      TokenServer.callers(4, 8, () -> assertThat(web.get().uri(server.uri("/v1/chat"))
          .header(TokenServer.TOKENS_FIELD, "300").attribute(RequestCost.ATTRIBUTE, RequestCost.of("tokens", 300))
          .retrieve().toBodilessEntity().block(Duration.ofSeconds(30)).getStatusCode().value()).isEqualTo(200));
      assertThat(server.refusals()).isZero();
      assertThat(server.admittedPerBusyWindow()).containsExactly(3L, 3L, 2L);
    }
  }
}
