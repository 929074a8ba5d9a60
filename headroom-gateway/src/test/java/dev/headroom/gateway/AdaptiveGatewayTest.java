package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A route's adaptive concurrency through the gateway over real sockets (routes[].adaptive), against
 * a real upstream whose latency the test switches: the {@code q} of the {@code adaptive}
 * concurrent-requests policy in RateLimit-Policy falls when the upstream slows from 10 ms to 1 s,
 * requests beyond it are refused 503 {@code temporary-reduced-capacity} with a Retry-After
 * (draft-ietf-httpapi-ratelimit-headers-09 section 5.2), the route's quota policy is lowered with it,
 * and both rise again when the upstream heals. Bounds are generous, and the tolerance is 3 (latency
 * may triple over the least seen before the limit falls): on a loaded machine a 10 ms upstream
 * behind the gateway may answer in anything from 20 to 200 ms.
 */
class AdaptiveGatewayTest {
  private static final Pattern ADAPTIVE_Q = Pattern.compile("\"adaptive\";q=(\\d+)");
  private static final Pattern API_Q = Pattern.compile("\"api\";q=(\\d+)");
  private static final int CLIENTS = 16;

  private final AtomicInteger delayMillis = new AtomicInteger(10);
  private HttpServer upstream;
  private ExecutorService upstreamThreads;
  private Gateway gateway;
  private ExecutorService clients;
  private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeEach
  void start() throws Exception {
    upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    upstreamThreads = Executors.newFixedThreadPool(48);
    upstream.setExecutor(upstreamThreads);
    upstream.createContext("/", ex -> {
      try {
        Thread.sleep(delayMillis.get());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, -1);
      ex.close();
    });
    upstream.start();
    String yaml = """
        service: {name: Adaptive}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        upstreams:
          up: {url: "http://127.0.0.1:%d", maxConnections: 64}
        policies:
          api: {quota: 1000000, window: 1m, why: Limits keep the service available for everyone.}
        routes:
          - name: work
            method: GET
            path: /work
            upstream: up
            policies: [api]
            adaptive: {minLimit: 2, maxLimit: 40, initialLimit: 20, smoothing: 0.5, tolerance: 3, window: 100ms, windowSamples: 5}
        """.formatted(upstream.getAddress().getPort());
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "adaptive.yaml")).start();
    clients = Executors.newFixedThreadPool(CLIENTS);
  }

  @AfterEach
  void stop() {
    clients.shutdownNow();
    gateway.close();
    upstream.stop(0);
    upstreamThreads.shutdownNow();
  }

  /** What the clients saw in one phase. */
  private static final class Seen {
    final ConcurrentLinkedQueue<Long> adaptiveQ = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Long> apiQ = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<HttpResponse<String>> refusals = new ConcurrentLinkedQueue<>();
    volatile long lastAdaptiveQ = -1;

    /** The advertised q as it changed, without repeats. */
    List<Long> adaptive() {
      List<Long> out = new ArrayList<>();
      for (Long q : adaptiveQ) {
        if (out.isEmpty() || !out.get(out.size() - 1).equals(q)) {
          out.add(q);
        }
      }
      return out;
    }
  }

  private static OptionalLong q(Pattern p, HttpResponse<?> r) {
    String policy = r.headers().firstValue("RateLimit-Policy").orElse("");
    Matcher m = p.matcher(policy);
    return m.find() ? OptionalLong.of(Long.parseLong(m.group(1))) : OptionalLong.empty();
  }

  /**
   * {@link #CLIENTS} clients send requests without pause (a refused one waits 20 ms) until
   * {@code done} holds for the last advertised q or {@code limit} passes.
   */
  private Seen load(Duration limit, LongPredicate done) throws Exception {
    Seen seen = new Seen();
    long end = System.nanoTime() + limit.toNanos();
    URI uri = URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/work");
    List<Future<?>> running = new ArrayList<>();
    for (int i = 0; i < CLIENTS; i++) {
      running.add(clients.submit(() -> {
        while (System.nanoTime() < end && !(seen.lastAdaptiveQ >= 0 && done.test(seen.lastAdaptiveQ))) {
          HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
          q(ADAPTIVE_Q, r).ifPresent(q -> {
            seen.adaptiveQ.add(q);
            seen.lastAdaptiveQ = q;
          });
          q(API_Q, r).ifPresent(seen.apiQ::add);
          if (r.statusCode() == 503) {
            seen.refusals.add(r);
            Thread.sleep(20);
          }
        }
        return null;
      }));
    }
    for (Future<?> f : running) {
      f.get();
    }
    return seen;
  }

  @Test
  void theLearntLimitFallsWhenTheUpstreamSlowsAndRisesWhenItHeals() throws Exception {
    Seen healthy = load(Duration.ofSeconds(3), q -> false);
    assertThat(healthy.adaptive()).as("advertised while healthy").isNotEmpty();
    long healthyQ = healthy.lastAdaptiveQ;
    assertThat(healthyQ).as("about 20 or more while the upstream keeps up: %s", healthy.adaptive()).isGreaterThanOrEqualTo(12);
    assertThat(healthy.apiQ).as("the quota at full capacity").contains(1000000L);

    delayMillis.set(1000);
    long low = 8;
    Seen slow = load(Duration.ofSeconds(60), q -> q <= low);
    long slowQ = slow.lastAdaptiveQ;
    assertThat(slowQ).as("fallen after the upstream slowed: %s", slow.adaptive()).isLessThanOrEqualTo(low);
    assertThat(slow.refusals).as("refused beyond the learnt limit").isNotEmpty();
    HttpResponse<String> refused = slow.refusals.peek();
    assertThat(refused.body()).contains("temporary-reduced-capacity");
    assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow())).isGreaterThanOrEqualTo(1);
    assertThat(q(ADAPTIVE_Q, refused)).isPresent();
    assertThat(slow.apiQ.stream().mapToLong(Long::longValue).min().orElseThrow())
        .as("the route's quota lowered with the limit").isLessThan(1000000L);

    delayMillis.set(10);
    Seen healed = load(Duration.ofSeconds(60), q -> q >= 2 * low);
    assertThat(healed.lastAdaptiveQ).as("risen again after the upstream healed: %s", healed.adaptive())
        .isGreaterThanOrEqualTo(2 * low);
    long lowestApi = slow.apiQ.stream().mapToLong(Long::longValue).min().orElseThrow();
    assertThat(healed.apiQ.stream().mapToLong(Long::longValue).max().orElseThrow())
        .as("the route's quota restored with it").isGreaterThan(lowestApi);
  }
}
