package dev.headroom.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.Ticker;
import dev.headroom.gateway.Gateway;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.RedisKeys;
import dev.headroom.gateway.TestUpstream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Exactness at high concurrency, through the gateway's sockets: a policy of quota 1,000 receives
 * 3,000 requests at once from 64 concurrent connections, and exactly 1,000 are answered 200 and
 * 2,000 are answered 429 (draft-ietf-httpapi-ratelimit-headers-09 section 5: the quota is a limit
 * on what the server serves, not an estimate). On the in-memory store, on Redis (127.0.0.1:6379,
 * keys under a prefix of this run's own), with two gateways in this JVM sharing one Redis, and
 * with two gateway processes sharing one Redis.
 *
 * <p>Where time decides a window, the in-process gateways use a {@link ManualTicker} that does not
 * move (so a fixed window of one minute cannot roll over during the test). The second process
 * cannot share that ticker, so the two-process case decides on Redis {@code TIME} with a token
 * bucket of 1,000 per day: it refills one unit per 86.4 s, so no unit can come back while the
 * test runs, whatever the wall clock says.
 */
class ExactAdmissionTest {
  static final int QUOTA = 1_000;
  static final int REQUESTS = 3_000;
  static final int CONNECTIONS = 64;

  TestUpstream upstream;
  final List<Gateway> gateways = new ArrayList<>();
  Process child;
  String prefix;

  @BeforeEach
  void upstream() throws Exception {
    upstream = new TestUpstream();
    prefix = "hr-gw-exact-" + UUID.randomUUID() + ":";
  }

  @AfterEach
  void stop() throws Exception {
    if (child != null) {
      child.destroy();
      if (!child.waitFor(10, TimeUnit.SECONDS)) {
        child.destroyForcibly();
      }
    }
    gateways.forEach(Gateway::close);
    upstream.close();
    RedisKeys.deleteKeys(prefix);
  }

  String yaml(String store, String policy) {
    return """
        service: {name: Exact admission test}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        store: %s
        upstreams:
          up: {url: "http://127.0.0.1:%d", maxConnections: 64}
        policies:
          thousand: {%s, partition: client-ip, why: Exactly this many requests are served.}
        routes:
          - {method: GET, path: /echo/x, upstream: up, policies: [thousand]}
          - {method: GET, path: /echo/warm, upstream: up}
        """.formatted(store, upstream.port(), policy);
  }

  static final String PER_MINUTE = "quota: 1000, window: 1m, algorithm: fixed-window";

  /**
   * The decision deadline is generous here: this test counts admissions, and a cold second JVM on
   * a loaded 2-core CI machine can stall past 100 ms; what a late Redis gets is the failure
   * policy's business (FaultsTest, WriteDeadlineTest), not exactness's.
   */
  String redis() {
    return "{type: redis, uri: \"redis://127.0.0.1:6379\", keyPrefix: \"" + prefix + "\", decisionDeadline: 10s}";
  }

  Gateway start(String yaml, Ticker ticker) throws Exception {
    Gateway g = Gateway.builder(GatewayConfig.parse(yaml, "exact.yaml")).ticker(ticker).start();
    gateways.add(g);
    return g;
  }

  @Test
  void memoryStore_exactlyTheQuotaOf3000ConcurrentRequestsIsAdmitted() throws Exception {
    Gateway g = start(yaml("{type: memory}", PER_MINUTE), ManualTicker.atFixedInstant());
    Map<Integer, Integer> statuses = hammer(List.of(g.address().getPort()));
    assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, QUOTA, 429, REQUESTS - QUOTA));
  }

  @Test
  void redisStore_exactlyTheQuotaOf3000ConcurrentRequestsIsAdmitted() throws Exception {
    Gateway g = start(yaml(redis(), PER_MINUTE), ManualTicker.atFixedInstant());
    Map<Integer, Integer> statuses = hammer(List.of(g.address().getPort()));
    assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, QUOTA, 429, REQUESTS - QUOTA));
  }

  @Test
  void twoGatewaysInOneJvmSharingRedis_admitExactlyTheQuotaBetweenThem() throws Exception {
    ManualTicker ticker = ManualTicker.atFixedInstant();
    Gateway a = start(yaml(redis(), PER_MINUTE), ticker);
    Gateway b = start(yaml(redis(), PER_MINUTE), ticker);
    Map<Integer, Integer> statuses = hammer(List.of(a.address().getPort(), b.address().getPort()));
    assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, QUOTA, 429, REQUESTS - QUOTA));
  }

  @Test
  void twoGatewayProcessesSharingRedis_admitExactlyTheQuotaBetweenThem() throws Exception {
    String config = yaml(redis(), "quota: 1000, window: 1d, algorithm: token-bucket");
    Gateway here = start(config, Ticker.system());
    int there = startChild(config);
    Map<Integer, Integer> statuses = hammer(List.of(here.address().getPort(), there));
    assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, QUOTA, 429, REQUESTS - QUOTA));
  }

  /** A second gateway process ({@code headroom serve}) on the same configuration; returns its port. */
  int startChild(String config) throws Exception {
    Path file = Files.createTempFile("exact", ".yaml");
    Files.writeString(file, config);
    file.toFile().deleteOnExit();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    child = new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        "dev.headroom.cli.HeadroomCommand", "serve", "--config", file.toString(), "--port", "0",
        "--threads", "2", "--no-watch")
        .redirectErrorStream(true).start();
    CompletableFuture<Integer> port = new CompletableFuture<>();
    StringBuilder output = new StringBuilder();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          synchronized (output) {
            output.append(line).append('\n');
          }
          int at = line.indexOf("listening on http://127.0.0.1:");
          if (at >= 0) {
            port.complete(Integer.parseInt(line.substring(at + "listening on http://127.0.0.1:".length()).trim()));
          }
        }
      } catch (Exception e) {
        port.completeExceptionally(e);
      }
      port.completeExceptionally(new AssertionError("the gateway process ended; output:\n" + output));
    }, "child-gateway-output");
    reader.setDaemon(true);
    reader.start();
    return port.get(60, TimeUnit.SECONDS);
  }

  /**
   * {@value #REQUESTS} GETs, all released at once from {@value #CONNECTIONS} threads (each one
   * keep-alive connection at a time through the shared client), spread evenly over the gateways
   * given; returns the count of answers by status.
   */
  static Map<Integer, Integer> hammer(List<Integer> ports) throws Exception {
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .executor(Executors.newFixedThreadPool(4)).build();
    for (int port : ports) {
      // one warm-up request per gateway on an unlimited route: no cold start counts in the race
      assertThat(client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/echo/warm")).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(200);
    }
    Map<Integer, AtomicInteger> counts = new ConcurrentHashMap<>();
    AtomicInteger next = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService threads = Executors.newFixedThreadPool(CONNECTIONS);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < CONNECTIONS; t++) {
      done.add(threads.submit(() -> {
        go.await();
        int i;
        while ((i = next.getAndIncrement()) < REQUESTS) {
          URI uri = URI.create("http://127.0.0.1:" + ports.get(i % ports.size()) + "/echo/x");
          int status = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build(),
              HttpResponse.BodyHandlers.discarding()).statusCode();
          counts.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
        }
        return null;
      }));
    }
    go.countDown();
    try {
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      threads.shutdownNow();
    }
    Map<Integer, Integer> result = new TreeMap<>();
    counts.forEach((status, n) -> result.put(status, n.get()));
    return result;
  }
}
