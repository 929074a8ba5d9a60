package dev.headroom.client.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.client.ClientBudget;
import dev.headroom.client.RequestCost;
import dev.headroom.client.RetryPolicy;
import dev.headroom.client.Scheduler;
import dev.headroom.client.TokenServer;
import java.time.Duration;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/**
 * A request's cost in tokens, stated with an OkHttp tag ({@link RequestCost}), against a real
 * loopback server that meters tokens ({@link TokenServer}: {@code "tpm";q=1000;w=60;qu="tokens"},
 * draft-ietf-httpapi-ratelimit-headers-09 section 3.1), in virtual time.
 */
class TokenCostTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  @Test
  void aTaggedCostHoldsEachCallUntilTheTokenBudgetCoversIt() throws Exception {
    ClientBudget budget = ClientBudget.builder().ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .retry(RetryPolicy.builder().jitter(0).build()).build();
    OkHttpClient http = new OkHttpClient.Builder().addInterceptor(BudgetInterceptor.of(budget)).build();
    try (TokenServer server = new TokenServer(ticker, 100, 1000, Duration.ofSeconds(60))) {
      TokenServer.callers(4, 8, () -> {
        Request call = new Request.Builder().url(server.uri("/v1/chat").toString())
            .header(TokenServer.TOKENS_FIELD, "300").tag(RequestCost.class, RequestCost.of("tokens", 300)).build();
        try (Response r = http.newCall(call).execute()) {
          assertThat(r.code()).isEqualTo(200);
        }
      });
      // Three calls of 300 tokens fit a window of 1000: no refusal, three windows.
      assertThat(server.refusals()).isZero();
      assertThat(server.admittedPerBusyWindow()).containsExactly(3L, 3L, 2L);
    }
  }
}
