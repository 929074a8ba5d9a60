package dev.headroom.client.httpclient5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.client.ClientBudget;
import dev.headroom.client.RequestCost;
import dev.headroom.client.RetryPolicy;
import dev.headroom.client.Scheduler;
import dev.headroom.client.TokenServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.junit.jupiter.api.Test;

/**
 * A request's cost in tokens, stated with an HttpClient 5 context attribute ({@link RequestCost}),
 * through the classic and the async handler, against a real loopback server that meters tokens
 * ({@link TokenServer}: {@code "tpm";q=1000;w=60;qu="tokens"}, draft-ietf-httpapi-ratelimit-headers-09
 * section 3.1), in virtual time.
 */
class TokenCostTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private ClientBudget budget() {
    return ClientBudget.builder().ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .retry(RetryPolicy.builder().jitter(0).build()).build();
  }

  private static HttpClientContext costing(long tokens) {
    HttpClientContext context = HttpClientContext.create();
    context.setAttribute(RequestCost.ATTRIBUTE, RequestCost.of("tokens", tokens));
    return context;
  }

  @Test
  void theClassicHandlerHoldsEachCallUntilTheTokenBudgetCoversIt() throws Exception {
    try (TokenServer server = new TokenServer(ticker, 100, 1000, Duration.ofSeconds(60));
        CloseableHttpClient http = BudgetExecChainHandler.install(HttpClients.custom(), budget()).build()) {
      TokenServer.callers(4, 8, () -> {
        HttpGet call = new HttpGet(server.uri("/v1/chat"));
        call.addHeader(TokenServer.TOKENS_FIELD, "300");
        int status = http.execute(call, costing(300), r -> r.getCode());
        assertThat(status).isEqualTo(200);
      });
      assertThat(server.refusals()).isZero();
      assertThat(server.admittedPerBusyWindow()).containsExactly(3L, 3L, 2L);
    }
  }

  @Test
  void theAsyncHandlerHoldsEachCallUntilTheTokenBudgetCoversIt() throws Exception {
    try (TokenServer server = new TokenServer(ticker, 100, 1000, Duration.ofSeconds(60));
        CloseableHttpAsyncClient http = BudgetAsyncExecChainHandler.install(HttpAsyncClients.custom(), budget()).build()) {
      http.start();
      TokenServer.callers(4, 8, () -> {
        SimpleHttpResponse r = http.execute(SimpleRequestBuilder.get(server.uri("/v1/chat"))
            .addHeader(TokenServer.TOKENS_FIELD, "300").build(), costing(300), null).get(30, TimeUnit.SECONDS);
        assertThat(r.getCode()).isEqualTo(200);
      });
      assertThat(server.refusals()).isZero();
      assertThat(server.admittedPerBusyWindow()).containsExactly(3L, 3L, 2L);
    }
  }
}
