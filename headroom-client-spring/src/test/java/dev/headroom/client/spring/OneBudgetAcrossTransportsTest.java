package dev.headroom.client.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.client.ClientBudget;
import dev.headroom.client.RetryPolicy;
import dev.headroom.client.Scheduler;
import dev.headroom.client.TestServer;
import dev.headroom.client.httpclient5.BudgetAsyncExecChainHandler;
import dev.headroom.client.httpclient5.BudgetExecChainHandler;
import dev.headroom.client.okhttp.BudgetInterceptor;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.junit.jupiter.api.Test;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * One {@link ClientBudget} behind five transports (OkHttp, RestClient, WebClient, HttpClient 5
 * classic and async),
 * each driven by its own thread at once, against a real loopback server that allows 5 requests per
 * 60 s fixed window and refuses the rest with 429. The threads together send five windows' worth;
 * because the transports share one budget (draft-ietf-httpapi-ratelimit-headers-09 section 7: "A
 * client SHOULD NOT exceed the quota units conveyed by the remaining parameter"), none is refused.
 * Five separate budgets would each believe the server's {@code r} was theirs to spend. Virtual time.
 */
class OneBudgetAcrossTransportsTest {

  private static final int QUOTA = 5;
  private static final long WINDOW = Duration.ofSeconds(60).toNanos();
  private static final int PER_TRANSPORT = 5;

  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final long origin = ticker.read();
  private long window = -1;
  private int served;

  /** A fixed window of {@link #QUOTA} per minute, by the shared virtual clock. */
  private synchronized TestServer.Reply limit(TestServer.Request request) {
    long elapsed = ticker.read() - origin;
    long index = elapsed / WINDOW;
    if (index != window) {
      window = index;
      served = 0;
    }
    long left = (index + 1) * WINDOW - elapsed;
    long t = (left + 999_999_999L) / 1_000_000_000L;
    if (served >= QUOTA) {
      return TestServer.Reply.of(429).header("Retry-After", Long.toString(t))
          .header("RateLimit-Policy", "\"w\";q=" + QUOTA + ";w=60").header("RateLimit", "\"w\";r=0;t=" + t);
    }
    served++;
    return TestServer.Reply.of(200).body("text/plain", "ok")
        .header("RateLimit-Policy", "\"w\";q=" + QUOTA + ";w=60")
        .header("RateLimit", "\"w\";r=" + (QUOTA - served) + ";t=" + t);
  }

  @Test
  void fiveTransportsOnOneEngineSpendOneBudgetAndAreNeverRefused() throws Exception {
    ClientBudget budget = ClientBudget.builder().ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .retry(RetryPolicy.none()).build();
    OkHttpClient okhttp = new OkHttpClient.Builder().addInterceptor(BudgetInterceptor.of(budget)).build();
    RestClient rest = RestClient.builder().requestFactory(new JdkClientHttpRequestFactory())
        .requestInterceptor(BudgetRequestInterceptor.of(budget)).build();
    WebClient web = WebClient.builder().clientConnector(new JdkClientHttpConnector(HttpClient.newHttpClient()))
        .filter(BudgetExchangeFilter.of(budget)).build();
    ExecutorService pool = Executors.newFixedThreadPool(5);
    try (TestServer server = new TestServer(ticker, this::limit);
        CloseableHttpClient apache = BudgetExecChainHandler.install(HttpClients.custom(), budget).build();
        CloseableHttpAsyncClient apacheAsync = BudgetAsyncExecChainHandler.install(HttpAsyncClients.custom(), budget)
            .build()) {
      apacheAsync.start();
      URI uri = server.uri("/items");
      CountDownLatch start = new CountDownLatch(1);
      List<Callable<String>> transports = List.of(
          () -> {
            try (Response r = okhttp.newCall(new Request.Builder().url(uri.toURL()).build()).execute()) {
              return r.code() + " " + r.body().string();
            }
          },
          () -> rest.get().uri(uri).retrieve().toEntity(String.class).getStatusCode().value() + " ok",
          () -> web.get().uri(uri).retrieve().toEntity(String.class).block(Duration.ofSeconds(30))
              .getStatusCode().value() + " ok",
          () -> apache.execute(new HttpGet(uri), r -> r.getCode() + " " + EntityUtils.toString(r.getEntity())),
          () -> {
            var r = apacheAsync.execute(SimpleRequestBuilder.get(uri).build(), null).get(30, TimeUnit.SECONDS);
            return r.getCode() + " " + r.getBodyText();
          });
      List<Future<List<String>>> runs = new ArrayList<>();
      for (Callable<String> transport : transports) {
        runs.add(pool.submit(() -> {
          start.await();
          List<String> out = new ArrayList<>();
          for (int i = 0; i < PER_TRANSPORT; i++) {
            out.add(transport.call());
          }
          return out;
        }));
      }
      start.countDown();
      List<String> answers = new ArrayList<>();
      for (Future<List<String>> run : runs) {
        answers.addAll(run.get(60, TimeUnit.SECONDS));
      }
      assertThat(answers).hasSize(5 * PER_TRANSPORT).containsOnly("200 ok");
      assertThat(server.count(429)).isZero();
      assertThat(server.log()).hasSize(5 * PER_TRANSPORT);
      // Twenty-five requests at five a window took at least four window changes.
      assertThat(ticker.read() - origin).isGreaterThanOrEqualTo(4 * WINDOW);
      assertThat(budget.budgets().snapshot(ClientBudget.requestView("GET", uri, Map.of())))
          .singleElement().satisfies(b -> assertThat(b.policy()).isEqualTo("w"));
    } finally {
      pool.shutdownNow();
      okhttp.dispatcher().executorService().shutdown();
      okhttp.connectionPool().evictAll();
    }
  }
}
