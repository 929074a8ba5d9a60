package dev.headroom.client;

import static dev.headroom.client.Scripted.client;
import static dev.headroom.client.Scripted.gaps;
import static dev.headroom.client.Scripted.get;
import static dev.headroom.client.Scripted.ok;
import static dev.headroom.client.Scripted.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A refusal without a usable Retry-After (RFC 9110 section 10.2.3: absent, unparseable, or 0) keeps
 * the back-off: every wait is at least {@link RetryPolicy#baseDelay()} and doubles (seed 003's
 * "MUST NOT retry immediately" applied to plain HTTP), and the whole scope pauses with the refused
 * request, so that the other callers of the origin do not each spend a refusal. Real loopback
 * server, virtual time.
 */
class RetryFloorTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();

  private static Supplier<TestServer.Reply> refusal(String retryAfter) {
    return () -> {
      TestServer.Reply r = TestServer.Reply.of(429).body("text/plain", "slow down");
      return retryAfter == null ? r : r.header("Retry-After", retryAfter);
    };
  }

  @ParameterizedTest(name = "Retry-After: {0}")
  @ValueSource(strings = {"0", "soon", "-1", ""})
  void aRefusalWithoutAUsableRetryAfterBacksOffFromTheBaseDelay(String retryAfter) throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(refusal(retryAfter.isEmpty() ? null : retryAfter))))) {
      HeadroomClient c = client(ticker).build();
      assertThatThrownBy(() -> c.send(get(server, "/api/items"), BodyHandlers.discarding()))
          .isInstanceOf(RateLimitedException.class);
      // Four attempts, min(max(0, 1 s) * 2^n, 2 min): not four immediate ones.
      assertThat(gaps(server)).containsExactly(1.0, 2.0, 4.0);
    }
  }

  @Test
  void theFloorIsConfigurable() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(refusal("0"), Scripted::ok)))) {
      HeadroomClient c = client(ticker).retry(RetryPolicy.builder().jitter(0).baseDelay(Duration.ofMillis(250)).build())
          .build();
      assertThat(c.send(get(server, "/api/items"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      assertThat(gaps(server)).containsExactly(0.25);
    }
  }

  @Test
  void aUsableRetryAfterIsKeptAsItIs() {
    RetryPolicy p = RetryPolicy.builder().jitter(0).build();
    assertThat(p.backoff(0, Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(3));
    assertThat(p.backoff(0, Duration.ZERO)).isEqualTo(RetryPolicy.DEFAULT_BASE_DELAY);
    assertThat(p.backoff(2, Duration.ZERO)).isEqualTo(Duration.ofSeconds(4));
  }

  @Test
  void everyCallerOfTheScopePausesWithTheRefusedOne() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(refusal("0"), Scripted::ok)))) {
      HeadroomClient c = client(ticker).build();
      // The first request of a scope goes alone; the others wait for its answer, a 429 saying 0.
      List<CompletableFuture<HttpResponse<Void>>> all = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        all.add(c.sendAsync(get(server, "/api/items"), BodyHandlers.discarding()));
      }
      for (CompletableFuture<HttpResponse<Void>> f : all) {
        assertThat(f.get().statusCode()).isEqualTo(200);
      }
      assertThat(server.count(429)).isEqualTo(1);
      // Nobody went in the second after the refusal: the retry and the three waiting callers alike.
      // (At least: arrivals are stamped by the shared virtual clock, which the refused request's own
      // back-off may move on before the others' bytes are read.)
      assertThat(gaps(server).get(0)).isGreaterThanOrEqualTo(1.0);
    }
  }

  @Test
  void aCallerThatDoesNotRetryStillHoldsTheOthersAndTheHoldDoubles() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(refusal(null), refusal("0"), Scripted::ok)))) {
      HeadroomClient c = client(ticker).retry(RetryPolicy.none()).build();
      for (int i = 0; i < 2; i++) {
        assertThatThrownBy(() -> c.send(get(server, "/api/items"), BodyHandlers.discarding()))
            .isInstanceOf(RateLimitedException.class);
      }
      assertThat(c.send(get(server, "/api/items"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      assertThat(c.send(get(server, "/api/items"), BodyHandlers.discarding()).statusCode()).isEqualTo(200);
      // Held 1 s after the first refusal, 2 s after the second; a success ends the back-off.
      assertThat(gaps(server)).containsExactly(1.0, 2.0, 0.0);
    }
  }

  @Test
  void aUsableRetryAfterHoldsTheScopeForExactlyWhatItSays() throws Exception {
    try (TestServer server = new TestServer(ticker, script(List.of(refusal("3"), Scripted::ok)))) {
      HeadroomClient c = client(ticker).retry(RetryPolicy.none()).build();
      assertThatThrownBy(() -> c.send(get(server, "/api/items"), BodyHandlers.discarding()))
          .isInstanceOf(RateLimitedException.class);
      c.send(get(server, "/api/items"), BodyHandlers.discarding());
      assertThat(gaps(server)).containsExactly(3.0);
    }
  }
}
