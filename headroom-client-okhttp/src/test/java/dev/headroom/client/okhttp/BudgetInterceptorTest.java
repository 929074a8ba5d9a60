package dev.headroom.client.okhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import dev.headroom.client.BudgetWaitException;
import dev.headroom.client.ClientBudget;
import dev.headroom.client.RateLimitedException;
import dev.headroom.client.RetryPolicy;
import dev.headroom.client.Scheduler;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.mockwebserver.Dispatcher;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.MockWebServer;
import okhttp3.mockwebserver.RecordedRequest;
import okio.BufferedSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BudgetInterceptor} in an {@link OkHttpClient} against {@link MockWebServer}, in virtual
 * time ({@link Scheduler#advancing}): pacing by RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-09 section 7), retries of refusals after Retry-After
 * (RFC 9110 section 10.2.3), and bodies that cannot be sent twice.
 */
class BudgetInterceptorTest {

  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final MockWebServer server = new MockWebServer();
  /** Arrival of each request at the server, by the shared virtual clock. */
  private final ConcurrentLinkedQueue<Long> arrivals = new ConcurrentLinkedQueue<>();

  @BeforeEach
  void start() throws IOException {
    server.start();
  }

  @AfterEach
  void stop() throws IOException {
    server.shutdown();
  }

  private void script(List<Supplier<MockResponse>> replies) {
    int[] n = {0};
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        arrivals.add(ticker.read());
        synchronized (n) {
          return replies.get(Math.min(n[0]++, replies.size() - 1)).get();
        }
      }
    });
  }

  private ClientBudget.Builder engine() {
    return ClientBudget.builder().ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .retry(RetryPolicy.builder().jitter(0).build());
  }

  private static OkHttpClient client(ClientBudget budget) {
    return new OkHttpClient.Builder().addInterceptor(BudgetInterceptor.of(budget)).build();
  }

  private List<Double> gaps() {
    List<Long> a = new ArrayList<>(arrivals);
    List<Double> out = new ArrayList<>();
    for (int i = 1; i < a.size(); i++) {
      out.add((a.get(i) - a.get(i - 1)) / 1e9);
    }
    return out;
  }

  private String get(OkHttpClient http, String path) throws IOException {
    try (Response r = http.newCall(new Request.Builder().url(server.url(path)).build()).execute()) {
      return r.code() + " " + r.body().string();
    }
  }

  @Test
  void section7TheNextRequestWaitsForTheResetWhenNoUnitRemains() throws IOException {
    script(List.of(() -> new MockResponse().setBody("one").addHeader("RateLimit", "\"default\";r=0;t=1"),
        () -> new MockResponse().setBody("two")));
    OkHttpClient http = client(engine().build());
    assertThat(get(http, "/a")).isEqualTo("200 one");
    assertThat(get(http, "/a")).isEqualTo("200 two");
    assertThat(gaps()).containsExactly(1.0);
  }

  @Test
  void aRefusalWithRetryAfterIsRetriedAfterTheWaitAndSucceeds() throws IOException {
    script(List.of(
        () -> new MockResponse().setResponseCode(429).addHeader("Retry-After", "2")
            .addHeader("Content-Type", "application/problem+json")
            .setBody("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\"}"),
        () -> new MockResponse().setBody("done")));
    assertThat(get(client(engine().build()), "/a")).isEqualTo("200 done");
    assertThat(server.getRequestCount()).isEqualTo(2);
    assertThat(gaps()).containsExactly(2.0);
  }

  @Test
  void enqueuedCallsArePacedOnTheDispatchersThreads() throws Exception {
    script(List.of(() -> new MockResponse().setBody("one").addHeader("RateLimit", "\"default\";r=0;t=4"),
        () -> new MockResponse().setBody("two")));
    OkHttpClient http = client(engine().build());
    assertThat(enqueue(http).get(30, TimeUnit.SECONDS)).isEqualTo("200 one");
    assertThat(enqueue(http).get(30, TimeUnit.SECONDS)).isEqualTo("200 two");
    assertThat(gaps()).containsExactly(4.0);
  }

  private CompletableFuture<String> enqueue(OkHttpClient http) {
    CompletableFuture<String> out = new CompletableFuture<>();
    http.newCall(new Request.Builder().url(server.url("/a")).build()).enqueue(new Callback() {
      @Override
      public void onFailure(Call call, IOException e) {
        out.completeExceptionally(e);
      }

      @Override
      public void onResponse(Call call, Response response) throws IOException {
        try (response) {
          out.complete(response.code() + " " + response.body().string());
        }
      }
    });
    return out;
  }

  @Test
  void aOneShotBodyIsNeverSentTwice() {
    script(List.of(() -> new MockResponse().setResponseCode(429).addHeader("Retry-After", "1")));
    RequestBody oneShot = new RequestBody() {
      @Override
      public MediaType contentType() {
        return MediaType.get("text/plain");
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        sink.writeUtf8("once");
      }

      @Override
      public boolean isOneShot() {
        return true;
      }
    };
    OkHttpClient http = client(engine().build());
    Request put = new Request.Builder().url(server.url("/a")).put(oneShot).build();
    assertThatThrownBy(() -> http.newCall(put).execute())
        .isInstanceOfSatisfying(RateLimitedException.class, e -> {
          assertThat(e.status()).isEqualTo(429);
          assertThat(e.attempts()).isEqualTo(1);
        })
        .hasMessageContaining("cannot be sent again");
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void aWaitBeyondMaxWaitFailsTheCallWithoutSendingIt() throws IOException {
    script(List.of(() -> new MockResponse().addHeader("RateLimit", "\"default\";r=0;t=60")));
    // A real scheduler over a frozen clock: the budget never resets, only maxWait ends the wait.
    OkHttpClient http = client(ClientBudget.builder().ticker(ticker).maxWait(Duration.ofMillis(50)).build());
    assertThat(get(http, "/a")).startsWith("200");
    assertThatThrownBy(() -> get(http, "/a")).isInstanceOf(BudgetWaitException.class)
        .hasMessageContaining("maxWait");
    assertThat(server.getRequestCount()).isEqualTo(1);
  }
}
