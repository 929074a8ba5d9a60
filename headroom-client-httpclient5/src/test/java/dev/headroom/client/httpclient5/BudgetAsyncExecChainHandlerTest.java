package dev.headroom.client.httpclient5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import dev.headroom.client.ClientBudget;
import dev.headroom.client.RateLimitedException;
import dev.headroom.client.RetryPolicy;
import dev.headroom.client.Scheduler;
import dev.headroom.client.TestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.hc.client5.http.async.methods.SimpleHttpRequest;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.core5.http.ContentType;
import org.junit.jupiter.api.Test;

/**
 * {@link BudgetAsyncExecChainHandler} in a {@link CloseableHttpAsyncClient} against a real loopback
 * server ({@link TestServer}), in virtual time: pacing by RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-09 section 7), retries of refusals after Retry-After
 * (RFC 9110 section 10.2.3), and the refusal reported when it is not retried.
 */
class BudgetAsyncExecChainHandlerTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private ClientBudget.Builder engine() {
    return ClientBudget.builder().ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .retry(RetryPolicy.builder().jitter(0).build());
  }

  private static TestServer.Handler script(List<Supplier<TestServer.Reply>> replies) {
    int[] n = {0};
    return req -> {
      synchronized (n) {
        return replies.get(Math.min(n[0]++, replies.size() - 1)).get();
      }
    };
  }

  private static TestServer.Reply ok(String body) {
    return TestServer.Reply.of(200).body("text/plain", body);
  }

  private static List<Double> gaps(TestServer server) {
    List<TestServer.Logged> log = server.log();
    List<Double> out = new ArrayList<>();
    for (int i = 1; i < log.size(); i++) {
      out.add((log.get(i).request().atNanos() - log.get(i - 1).request().atNanos()) / 1e9);
    }
    return out;
  }

  private static CloseableHttpAsyncClient client(ClientBudget budget) {
    CloseableHttpAsyncClient http = BudgetAsyncExecChainHandler.install(HttpAsyncClients.custom(), budget).build();
    http.start();
    return http;
  }

  private static String send(CloseableHttpAsyncClient http, SimpleHttpRequest request) throws Exception {
    SimpleHttpResponse r = http.execute(request, null).get(30, TimeUnit.SECONDS);
    return r.getCode() + " " + r.getBodyText();
  }

  @Test
  void section7TheNextRequestWaitsForTheResetWhenNoUnitRemains() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> ok("one").header("RateLimit", "\"default\";r=0;t=1"), () -> ok("two"))));
        CloseableHttpAsyncClient http = client(engine().build())) {
      assertThat(send(http, SimpleRequestBuilder.get(server.uri("/a")).build())).isEqualTo("200 one");
      assertThat(send(http, SimpleRequestBuilder.get(server.uri("/a")).build())).isEqualTo("200 two");
      assertThat(gaps(server)).containsExactly(1.0);
    }
  }

  @Test
  void aRefusalWithRetryAfterIsRetriedAfterTheWaitAndSucceeds() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(429).header("Retry-After", "2").json("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\"}"),
        () -> ok("done"))));
        CloseableHttpAsyncClient http = client(engine().build())) {
      SimpleHttpRequest put = SimpleRequestBuilder.put(server.uri("/a")).setBody("payload", ContentType.TEXT_PLAIN).build();
      assertThat(send(http, put)).isEqualTo("200 done");
      assertThat(server.count(429)).isEqualTo(1);
      assertThat(gaps(server)).containsExactly(2.0);
      assertThat(server.log()).allSatisfy(l -> assertThat(l.request().headers().get("Content-length")).containsExactly("7"));
    }
  }

  @Test
  void aRefusalThatIsNotRetriedFailsTheExchangeWithIt() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(429).header("Retry-After", "1"), () -> ok("done"))));
        CloseableHttpAsyncClient http = client(engine().retry(RetryPolicy.none()).build())) {
      assertThatThrownBy(() -> send(http, SimpleRequestBuilder.get(server.uri("/a")).build()))
          .isInstanceOf(ExecutionException.class).cause()
          .isInstanceOfSatisfying(RateLimitedException.class, e -> {
            assertThat(e.status()).isEqualTo(429);
            assertThat(e.attempts()).isEqualTo(1);
          });
      assertThat(server.log()).hasSize(1);
    }
  }
}
