package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.headroom.ManualTicker;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Waiting instead of refusing ({@code policies.NAME.queue}) through the gateway over real sockets,
 * against a real upstream: a burst beyond a token bucket's quota is spread over time rather than
 * refused, the requests that could not be admitted within {@code maxWait} get the ordinary 429 with
 * Retry-After, a full queue refuses at once, and {@code /metrics} shows the requests waiting. The
 * order within a partition is proven on a manual ticker (headroom-enforcement's WaitingGateTest);
 * here a manual ticker shows that a wait counts on the gateway's ticker, not on real time.
 * Bounds are generous: the machine may be loaded.
 */
class QueueGatewayTest {
  private HttpServer upstream;
  private Gateway gateway;
  private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private void start(String policy) throws Exception {
    start(policy, null);
  }

  /** With {@code timers}, the gateway's time is their manual ticker: the store's, the connections' and the queue's. */
  private void start(String policy, ManualTimers timers) throws Exception {
    upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    upstream.createContext("/", ex -> {
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, -1);
      ex.close();
    });
    upstream.start();
    String yaml = """
        service: {name: Queue}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          api: {%s, algorithm: token-bucket, why: Limits keep the service available for everyone.}
        routes:
          - {name: work, method: GET, path: /work, upstream: up, policies: [api]}
        """.formatted(upstream.getAddress().getPort(), policy);
    Gateway.Builder b = Gateway.builder(GatewayConfig.parse(yaml, "queue.yaml"));
    if (timers != null) {
      b.ticker(timers.ticker()).timers(timers);
    }
    gateway = b.start();
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    if (upstream != null) {
      upstream.stop(0);
    }
  }

  private CompletableFuture<HttpResponse<String>> send() {
    URI uri = URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/work");
    return client.sendAsync(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private String metrics() throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + gateway.adminAddress().orElseThrow().getPort() + "/metrics");
    return client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  @Test
  void aBurstBeyondTheQuotaIsSpreadOverTimeAndWhatCannotWaitIsRefused() throws Exception {
    // 5 a second, one more each 200 ms; a refused request waits up to 1 s for its unit
    start("quota: 5, window: 1s, queue: {maxWait: 1s, maxQueued: 100}");
    long began = System.nanoTime();
    List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
    List<Long> answeredAt = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      burst.add(send());
    }
    int ok = 0;
    int refused = 0;
    for (CompletableFuture<HttpResponse<String>> f : burst) {
      HttpResponse<String> r = f.get(30, TimeUnit.SECONDS);
      if (r.statusCode() == 200) {
        ok++;
        answeredAt.add(System.nanoTime());
      } else {
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(r.headers().firstValue("Retry-After")).isPresent();
        refused++;
      }
    }
    // the bucket's 5 at once, then about one each 200 ms for a second: more than 5, fewer than 16
    assertThat(ok).isGreaterThanOrEqualTo(8);
    assertThat(refused).isGreaterThanOrEqualTo(1);
    long lastAdmitted = answeredAt.stream().mapToLong(Long::longValue).max().orElseThrow() - began;
    assertThat(Duration.ofNanos(lastAdmitted)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
    String m = metrics();
    assertThat(m).contains("headroom_queue_admitted_total{policy=\"api\"}")
        .contains("headroom_queue_timeouts_total{policy=\"api\"}")
        .contains("headroom_queue_waiting{policy=\"api\"} 0.0");
  }

  @Test
  void aFullQueueRefusesAtOnceAndMetricsShowTheWaiting() throws Exception {
    // one every 2 s; two may wait up to 5 s
    start("quota: 1, window: 2s, queue: {maxWait: 5s, maxQueued: 2}");
    assertThat(send().get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    CompletableFuture<HttpResponse<String>> first = send();
    CompletableFuture<HttpResponse<String>> second = send();
    awaitWaiting(2);
    HttpResponse<String> third = send().get(10, TimeUnit.SECONDS);
    assertThat(third.statusCode()).isEqualTo(429); // the queue is full: refused at once, not after waiting
    assertThat(third.headers().firstValue("Retry-After")).isPresent();
    assertThat(first).isNotDone();
    assertThat(first.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(second.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(metrics()).contains("headroom_queue_admitted_total{policy=\"api\"} 2.0")
        .contains("headroom_queue_waiting{policy=\"api\"} 0.0");
  }

  /** The queue's time is the gateway's ticker: nothing is re-decided until it moves, and deadlines are its readings. */
  @Test
  void waitingCountsOnTheGatewaysTicker() throws Exception {
    ManualTimers timers = new ManualTimers(ManualTicker.atFixedInstant());
    // one every 30 s of the gateway's time; a refused request waits up to 45 s
    start("quota: 1, window: 30s, queue: {maxWait: 45s, maxQueued: 10}", timers);
    assertThat(send().get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    CompletableFuture<HttpResponse<String>> second = send();
    awaitWaiting(1);
    CompletableFuture<HttpResponse<String>> third = send(); // behind the second: first come first served
    awaitWaiting(2);
    timers.advance(Duration.ofSeconds(29));
    assertThat(second).isNotDone();
    // 30 s of the gateway's time, none of real time: the second's unit is there (a timer on real
    // time would wake it only 30 real seconds from now, far past this test's patience)
    timers.advance(Duration.ofSeconds(1));
    assertThat(second.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    // the third's turn would come at 60 s, past its deadline (45 s on the ticker): the ordinary 429 now
    HttpResponse<String> refused = third.get(10, TimeUnit.SECONDS);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.headers().firstValue("Retry-After")).isPresent();
    assertThat(metrics()).contains("headroom_queue_admitted_total{policy=\"api\"} 1.0")
        .contains("headroom_queue_timeouts_total{policy=\"api\"} 1.0")
        .contains("headroom_queue_waiting{policy=\"api\"} 0.0");
  }

  /** Waits (real time, for the gateway's threads) until {@code n} requests of the policy wait, as /metrics says. */
  private void awaitWaiting(int n) throws Exception {
    String line = "headroom_queue_waiting{policy=\"api\"} " + n + ".0";
    long patience = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    String m = metrics();
    while (!m.contains(line) && System.nanoTime() < patience) {
      Thread.sleep(20);
      m = metrics();
    }
    assertThat(m).contains(line);
  }
}
