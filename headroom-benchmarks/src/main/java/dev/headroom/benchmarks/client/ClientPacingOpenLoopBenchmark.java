package dev.headroom.benchmarks.client;

import com.sun.net.httpserver.HttpServer;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.client.HeadroomClient;
import dev.headroom.client.Pacing;
import dev.headroom.client.RetryPolicy;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Client pacing: an application asks for 10x the allowed rate of a server that limits with
 * headroom-core; how long does the work take, and how often is the client refused?
 *
 * <p>The server is a JDK {@code HttpServer} on loopback whose every request is decided by
 * {@link InMemoryStore} (a token bucket of {@code q} per {@code w}: burst {@code q}, then one unit
 * per {@code w/q}), answering 200 or 429 with {@code RateLimit-Policy} / {@code RateLimit} (and
 * Retry-After) from headroom-http's emitter, in the IETF dialect. The application issues {@code n}
 * requests open-loop at {@code 10 q / w} per second, asynchronously. The theoretical minimum time
 * for the work is {@code (n - q) * w / q}: the burst at once, then one request per refill.
 *
 * <p>Runs: the Headroom client with {@link Pacing#BURST}, with {@link Pacing#EVEN}, and the peer: a
 * plain {@code HttpClient} that retries each 429 after its Retry-After (what a careful hand-written
 * client does). For each: wall time, its ratio to the minimum, and the 429s the server sent after
 * the first response that carried fields.
 *
 * <pre>
 * mvn -B -pl headroom-benchmarks -am package -DskipTests
 * java -Dsun.net.httpserver.nodelay=true -cp headroom-benchmarks/target/benchmarks.jar \
 *     dev.headroom.benchmarks.client.ClientPacingOpenLoopBenchmark [q] [w-seconds] [n]
 * </pre>
 */
public final class ClientPacingOpenLoopBenchmark {

  private ClientPacingOpenLoopBenchmark() {}

  public static void main(String[] args) throws Exception {
    int q = args.length > 0 ? Integer.parseInt(args[0]) : 50;
    int w = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int n = args.length > 2 ? Integer.parseInt(args[2]) : 300;
    double minimum = (n - q) * (double) w / q;
    System.out.printf(Locale.ROOT, "token bucket q=%d w=%ds, %d requests offered at %d/s (10x), theoretical minimum %.2f s%n",
        q, w, n, 10 * q / w, minimum);
    System.out.println("| client | wall s | ratio to minimum | 429s after first fields | requests sent |");
    System.out.println("| --- | ---: | ---: | ---: | ---: |");
    for (String run : List.of("headroom-burst", "headroom-even", "retry-after-peer")) {
      Result r = run(run, q, w, n);
      System.out.printf(Locale.ROOT, "| %s | %.2f | %.3f | %d | %d |%n", run, r.seconds, r.seconds / minimum, r.refusals, r.sent);
    }
    System.exit(0);
  }

  private record Result(double seconds, int refusals, int sent) {}

  private static Result run(String name, int q, int w, int n) throws Exception {
    QuotaPolicy policy = QuotaPolicy.builder("default").quota(q).window(Duration.ofSeconds(w))
        .algorithm(Algorithm.TOKEN_BUCKET).build();
    Ticker ticker = Ticker.system();
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    RateLimitHeaders headers = RateLimitHeaders.builder().dialects(EnumSet.of(HeaderDialect.IETF)).ticker(ticker)
        .policies(List.of(policy)).build();
    AtomicInteger refusedAfterFields = new AtomicInteger();
    AtomicInteger sent = new AtomicInteger();
    AtomicBoolean answered = new AtomicBoolean();
    ExecutorService serverThreads = Executors.newFixedThreadPool(2);
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    server.createContext("/", ex -> {
      try (ex) {
        sent.incrementAndGet();
        Decision d = limiter.acquire(policy, PartitionKey.of("client"));
        int status = d.allowed() ? 200 : 429;
        headers.write(d, status, (k, v) -> ex.getResponseHeaders().add(k, v));
        if (!d.allowed() && answered.get()) {
          refusedAfterFields.incrementAndGet();
        }
        answered.set(true);
        ex.sendResponseHeaders(status, -1);
      }
    });
    server.setExecutor(serverThreads);
    server.start();
    URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/work");
    HttpClient http = HttpClient.newBuilder().executor(Executors.newFixedThreadPool(2)).build();
    HeadroomClient client = HeadroomClient.builder(http).pacing(name.endsWith("even") ? Pacing.EVEN : Pacing.BURST)
        .retry(RetryPolicy.builder().maxAttempts(100).build()).build();
    long intervalNanos = TimeUnit.SECONDS.toNanos(w) / (10L * q);
    List<CompletableFuture<?>> all = new ArrayList<>();
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      long due = start + i * intervalNanos;
      long now;
      while ((now = System.nanoTime()) < due) {
        TimeUnit.NANOSECONDS.sleep(Math.min(due - now, 1_000_000));
      }
      HttpRequest request = HttpRequest.newBuilder(uri).build();
      if (name.startsWith("headroom")) {
        all.add(client.sendAsync(request, BodyHandlers.discarding()));
      } else {
        all.add(retryAfterPeer(http, request, 0));
      }
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
    double seconds = (System.nanoTime() - start) / 1e9;
    server.stop(0);
    serverThreads.shutdownNow();
    return new Result(seconds, refusedAfterFields.get(), sent.get());
  }

  /** The peer: send; on 429 wait Retry-After (without blocking a thread) and send again. */
  private static CompletableFuture<HttpResponse<Void>> retryAfterPeer(HttpClient http, HttpRequest request, int attempt) {
    return http.sendAsync(request, BodyHandlers.discarding()).thenCompose(r -> {
      if (r.statusCode() != 429 || attempt >= 1000) {
        return CompletableFuture.completedFuture(r);
      }
      long wait = r.headers().firstValue("Retry-After").map(Long::parseLong).orElse(1L);
      return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(wait, TimeUnit.SECONDS))
          .thenCompose(v -> retryAfterPeer(http, request, attempt + 1));
    });
  }

}
