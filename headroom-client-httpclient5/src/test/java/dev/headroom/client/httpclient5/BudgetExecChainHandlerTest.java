package dev.headroom.client.httpclient5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import dev.headroom.client.ClientBudget;
import dev.headroom.client.RateLimitedException;
import dev.headroom.client.RetryPolicy;
import dev.headroom.client.Scheduler;
import dev.headroom.client.TestServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.InputStreamEntity;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.junit.jupiter.api.Test;

/**
 * {@link BudgetExecChainHandler} in a classic {@link CloseableHttpClient} against a real loopback
 * server ({@link TestServer}), in virtual time: pacing by RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-09 section 7), retries of refusals after Retry-After
 * (RFC 9110 section 10.2.3) with repeatable entities only.
 */
class BudgetExecChainHandlerTest {

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

  private static String send(CloseableHttpClient http, ClassicHttpRequest request)
      throws IOException {
    return http.execute(request, r -> r.getCode() + " " + EntityUtils.toString(r.getEntity()));
  }

  @Test
  void section7TheNextRequestWaitsForTheResetWhenNoUnitRemains() throws IOException {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> ok("one").header("RateLimit", "\"default\";r=0;t=1"), () -> ok("two"))));
        CloseableHttpClient http = BudgetExecChainHandler.install(HttpClients.custom(), engine().build()).build()) {
      assertThat(send(http, new HttpGet(server.uri("/a")))).isEqualTo("200 one");
      assertThat(send(http, new HttpGet(server.uri("/a")))).isEqualTo("200 two");
      assertThat(gaps(server)).containsExactly(1.0);
    }
  }

  @Test
  void aRefusalWithRetryAfterIsRetriedAfterTheWaitAndSucceeds() throws IOException {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(429).header("Retry-After", "2").json("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\"}"),
        () -> ok("done"))));
        CloseableHttpClient http = BudgetExecChainHandler.install(HttpClients.custom(),
            engine().retry(RetryPolicy.builder().jitter(0).retryNonIdempotent(true).build()).build()).build()) {
      HttpPost post = new HttpPost(server.uri("/a"));
      post.setEntity(new StringEntity("payload", ContentType.TEXT_PLAIN));
      assertThat(send(http, post)).isEqualTo("200 done");
      assertThat(server.count(429)).isEqualTo(1);
      assertThat(gaps(server)).containsExactly(2.0);
      // The repeatable entity went out again, framed afresh.
      assertThat(server.log()).allSatisfy(l -> assertThat(l.request().headers().get("Content-length")).containsExactly("7"));
    }
  }

  @Test
  void aNonRepeatableEntityIsNeverSentTwice() throws IOException {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(503).header("Retry-After", "1"), () -> ok("done"))));
        CloseableHttpClient http = BudgetExecChainHandler.install(HttpClients.custom(), engine().build()).build()) {
      HttpPut put = new HttpPut(server.uri("/a"));
      put.setEntity(new InputStreamEntity(new ByteArrayInputStream("once".getBytes(StandardCharsets.UTF_8)),
          ContentType.TEXT_PLAIN));
      assertThatThrownBy(() -> send(http, put)).isInstanceOfSatisfying(RateLimitedException.class, e -> {
        assertThat(e.status()).isEqualTo(503);
        assertThat(e.attempts()).isEqualTo(1);
      }).hasMessageContaining("cannot be sent again");
      assertThat(server.log()).hasSize(1);
    }
  }

  @Test
  void installLeavesRefusalsToTheEngineNotToHttpClientsOwnRetries() throws IOException {
    // HttpClient's default strategy retries 429 by itself; installed, only the engine decides.
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> TestServer.Reply.of(429).header("Retry-After", "1"), () -> ok("done"))));
        CloseableHttpClient http = BudgetExecChainHandler.install(HttpClients.custom(),
            engine().retry(RetryPolicy.none()).build()).build()) {
      assertThatThrownBy(() -> send(http, new HttpGet(server.uri("/a")))).isInstanceOf(RateLimitedException.class)
          .hasMessageContaining("maxAttempts 1");
      assertThat(server.log()).hasSize(1);
    }
  }
}
