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
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

/**
 * {@link BudgetRequestInterceptor} in a {@link RestClient} and a {@link RestTemplate} against a
 * real loopback server ({@link TestServer}), in virtual time: pacing by RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-09 section 7), retries of refusals after Retry-After
 * (RFC 9110 section 10.2.3), and the refusal reported when the method may not be retried.
 */
class BudgetRequestInterceptorTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private ClientBudget.Builder engine() {
    return ClientBudget.builder().ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .retry(RetryPolicy.builder().jitter(0).build());
  }

  private static RestClient rest(ClientBudget budget) {
    return RestClient.builder().requestFactory(new JdkClientHttpRequestFactory())
        .requestInterceptor(BudgetRequestInterceptor.of(budget)).build();
  }

  @Test
  void section7TheNextRequestWaitsForTheResetWhenNoUnitRemains() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(
        () -> ok("one").header("RateLimit", "\"default\";r=0;t=1"), () -> ok("two"))))) {
      RestClient rest = rest(engine().build());
      assertThat(rest.get().uri(server.uri("/a")).retrieve().body(String.class)).isEqualTo("one");
      assertThat(rest.get().uri(server.uri("/a")).retrieve().body(String.class)).isEqualTo("two");
      assertThat(gaps(server)).containsExactly(1.0);
    }
  }

  @Test
  void aRefusalWithRetryAfterIsRetriedAfterTheWaitAndSucceeds() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(() -> refused(429, "2"), () -> ok("done"))))) {
      assertThat(rest(engine().build()).put().uri(server.uri("/a")).body("payload").retrieve().body(String.class))
          .isEqualTo("done");
      assertThat(server.count(429)).isEqualTo(1);
      assertThat(gaps(server)).containsExactly(2.0);
    }
  }

  @Test
  void restTemplateTakesTheSameInterceptor() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(() -> refused(503, "3"), () -> ok("done"))))) {
      RestTemplate template = new RestTemplate(new JdkClientHttpRequestFactory());
      template.getInterceptors().add(BudgetRequestInterceptor.of(engine().build()));
      assertThat(template.getForObject(server.uri("/a"), String.class)).isEqualTo("done");
      assertThat(gaps(server)).containsExactly(3.0);
    }
  }

  @Test
  void aPostIsNotRetriedAndTheRefusalIsTheCause() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(() -> refused(429, "1"), () -> ok("done"))))) {
      assertThatThrownBy(() -> rest(engine().build()).post().uri(server.uri("/a")).body("x").retrieve().body(String.class))
          .isInstanceOf(ResourceAccessException.class)
          .cause().isInstanceOfSatisfying(RateLimitedException.class, e -> {
            assertThat(e.status()).isEqualTo(429);
            assertThat(e.attempts()).isEqualTo(1);
          }).hasMessageContaining("POST is not idempotent");
      assertThat(server.log()).hasSize(1);
    }
  }
}
