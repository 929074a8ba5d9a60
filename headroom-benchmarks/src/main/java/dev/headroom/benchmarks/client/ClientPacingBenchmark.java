package dev.headroom.benchmarks.client;

import com.sun.net.httpserver.HttpServer;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.client.HeadroomClient;
import dev.headroom.client.Pacing;
import dev.headroom.client.RetryPolicy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * Client pacing against each server algorithm in each dialect: {@code n} requests from {@code c}
 * callers (each sends its next request when its last one is answered) to a server limiting at
 * {@code q} per {@code w}; how long does the work take, next to the ideal schedule, and how often
 * is the client refused?
 *
 * <h2>The servers</h2>
 * A JDK {@code HttpServer} on loopback per run, deciding every request with headroom-core's
 * {@link InMemoryStore} on the system clock, one partition for the client:
 * <ul>
 *   <li>{@link Algorithm#FIXED_WINDOW}: windows aligned to the Unix epoch ({@code floor(now / w)}, as
 *       Redis {@code INCR} counters keyed by the window index are), so the reset falls on a wall
 *       boundary the client can only see through {@code t} rounded up to whole seconds; with
 *       {@code -DwindowPhase=0.3} every window starts that many seconds later (as a server's do when
 *       it counts them from its start), so an epoch reset ({@code x-ratelimit}) names it only to the
 *       second; {@code -DresetRounding=down} truncates that epoch reset instead of rounding it up.
 *   <li>{@link Algorithm#TOKEN_BUCKET}: GCRA, burst {@code q}, one unit per {@code w / q}; {@code t}
 *       is the time until full (as Envoy's and Kong's token buckets report their reset).
 *   <li>{@link Algorithm#SLIDING_WINDOW}: the two-counter sliding window (Cloudflare's published
 *       algorithm, also the "sliding window counter" of Kong and of Redis recipes): the previous
 *       window's count weighted by the part of it still inside the last {@code w}, plus the
 *       current count; {@code t} is the time until that estimate is zero.
 * </ul>
 * Every {@code t} is whole seconds rounded up ({@link PolicyOutcome#resetSeconds()}), as
 * express-rate-limit ({@code Math.ceil}) and the IETF draft (section 4.1.2) do. Dialects, as the
 * deployed peers write them (429s carry Retry-After in whole seconds, rounded up):
 * <ul>
 *   <li>{@code draft-8}: {@code RateLimit-Policy: "default";q=10;w=5}, {@code RateLimit: "default";r=7;t=3}
 *       (draft-ietf-httpapi-ratelimit-headers-08 and -09, list form);
 *   <li>{@code draft-7}: {@code RateLimit: limit=10, remaining=7, reset=3} with
 *       {@code RateLimit-Policy: 10;w=5} (dictionary form, express-rate-limit's {@code draft-7});
 *   <li>{@code draft-6}: {@code RateLimit-Limit}, {@code RateLimit-Remaining}, {@code RateLimit-Reset}
 *       (seconds) with {@code RateLimit-Policy: 10;w=5} (express-rate-limit's {@code draft-6});
 *   <li>{@code x-ratelimit}: {@code X-RateLimit-Limit}, {@code -Remaining}, {@code -Reset} as Unix
 *       epoch seconds, rounded up (GitHub's form; no window stated);
 *   <li>{@code cloudflare}: Cloudflare's rate limiting rules with rate limit headers on:
 *       {@code Ratelimit: "default";r=7;t=3} and {@code Ratelimit-Policy: "default";q=10;w=5};
 *   <li>the vendors' own forms ({@link VendorForms}): {@code openai} (Go duration resets, {@code retry-after-ms}
 *       on a 429), {@code anthropic} (RFC 3339 resets), {@code github} (epoch resets, a resource),
 *       {@code discord} (fractional {@code Reset-After}, a bucket), {@code atlassian} (ISO 8601 resets),
 *       {@code azure-resource-manager} (remaining only), {@code okta} ({@code X-Rate-Limit-*}, epoch
 *       resets; X's form too), {@code kong} ({@code RateLimit-*} beside a minute's windowed fields),
 *       {@code shopify} ({@code used/size}, read as a bucket leaking a twentieth a second), and
 *       {@code retry-after-date} (no field but RFC 9110's Retry-After as an HTTP-date on a 429).
 * </ul>
 *
 * <h2>The ideal schedule</h2>
 * The time an omniscient client would need: each request decided at the earliest instant the
 * server's algorithm admits it, computed by a copy of the same limiter on a {@link ManualTicker}
 * started at the instant the server decided the first request (the copy is asked; when it refuses,
 * time moves by exactly its retry-after). For a fixed window of {@code q} per {@code w} whose
 * current window ends {@code T0} after the first request, the {@code k}-th request (from 1) is
 * admitted at 0 for {@code k <= q}, else at {@code T0 + (floor((k - 1) / q) - 1) * w}; for the token
 * bucket at 0 for {@code k <= q}, else at {@code (k - q) * w / q}. The ratio reported is the
 * server-side span of the run (first decision to last admission) over the ideal span: latency on
 * both ends cancels; what the loopback adds within the span (about a millisecond per round trip)
 * is counted against the client.
 *
 * <pre>
 * mvn -B -pl headroom-benchmarks -am package -DskipTests
 * java -Xms256m -Xmx256m -Dsun.net.httpserver.nodelay=true -cp headroom-benchmarks/target/benchmarks.jar \
 *     dev.headroom.benchmarks.client.ClientPacingBenchmark [q=10] [w-seconds=5] [n=50] [callers=4] [pacing=ALL] [algorithm] [dialect]
 * </pre>
 * The algorithm may also be {@code LEAKY_BUCKET}: Shopify's bucket as its documentation gives it,
 * {@code q} requests leaking a twentieth of {@code q} a second ({@link #LEAK_SECONDS}), served as
 * the token bucket above with that window (a leaky bucket as a meter is that GCRA).
 * The runs of one pacing go at the same time (one server and one client each; at a few requests
 * per second each they are light); the pacings one after another.
 */
public final class ClientPacingBenchmark {

  private ClientPacingBenchmark() {}

  /**
   * Seconds a leaky bucket of Shopify's documented rate takes to drain whole (a twentieth of its size
   * a second): {@code LEAKY_BUCKET} as the algorithm serves {@link Algorithm#TOKEN_BUCKET} with this
   * window, which is that bucket (GCRA, burst {@code q}, one unit per {@code w / q}), whatever
   * {@code w} the command gave.
   */
  static final int LEAK_SECONDS = 20;

  /** {@code -Dheadroom.trace=true}: every decision of the servers, for reading a run. */
  private static final boolean TRACE = Boolean.getBoolean("headroom.trace");

  /** {@code -DwindowPhase=seconds}: how much later than the epoch's boundaries the server's windows start. */
  private static final long WINDOW_PHASE = Math.round(Double.parseDouble(System.getProperty("windowPhase", "0")) * 1e9);

  /** {@code -DresetRounding=down}: the {@code x-ratelimit} epoch reset truncated to the second, not rounded up. */
  private static final boolean RESET_TRUNCATED = "down".equals(System.getProperty("resetRounding", "up"));

  /** The dialects, as the deployed peers write them. */
  enum Dialect {
    DRAFT_8("draft-8"), DRAFT_7("draft-7"), DRAFT_6("draft-6"), X_RATELIMIT("x-ratelimit"), CLOUDFLARE("cloudflare"),
    OPENAI("openai"), ANTHROPIC("anthropic"), GITHUB("github"), DISCORD("discord"), ATLASSIAN("atlassian"),
    AZURE_RESOURCE_MANAGER("azure-resource-manager"), OKTA("okta"), KONG("kong"), SHOPIFY("shopify"),
    RETRY_AFTER_DATE("retry-after-date");

    final String label;

    Dialect(String label) {
      this.label = label;
    }

    void write(PolicyOutcome o, boolean allowed, long nowNanos, int q, long w, long usedThisMinute,
        BiConsumer<String, String> out) {
      long t = o.resetSeconds();
      switch (this) {
        case DRAFT_8:
          out.accept("RateLimit-Policy", "\"default\";q=" + q + ";w=" + w);
          out.accept("RateLimit", "\"default\";r=" + o.remaining() + ";t=" + t);
          break;
        case DRAFT_7:
          out.accept("RateLimit-Policy", q + ";w=" + w);
          out.accept("RateLimit", "limit=" + q + ", remaining=" + o.remaining() + ", reset=" + t);
          break;
        case DRAFT_6:
          out.accept("RateLimit-Policy", q + ";w=" + w);
          out.accept("RateLimit-Limit", Integer.toString(q));
          out.accept("RateLimit-Remaining", Long.toString(o.remaining()));
          out.accept("RateLimit-Reset", Long.toString(t));
          break;
        case X_RATELIMIT:
          long resetAt = nowNanos + o.reset().toNanos();
          out.accept("X-RateLimit-Limit", Integer.toString(q));
          out.accept("X-RateLimit-Remaining", Long.toString(o.remaining()));
          out.accept("X-RateLimit-Reset", Long.toString(RESET_TRUNCATED ? Math.floorDiv(resetAt, 1_000_000_000L)
              : Math.floorDiv(resetAt - 1, 1_000_000_000L) + 1));
          break;
        case CLOUDFLARE:
          out.accept("Ratelimit", "\"default\";r=" + o.remaining() + ";t=" + t);
          out.accept("Ratelimit-Policy", "\"default\";q=" + q + ";w=" + w);
          break;
        default:
          VendorForms.write(label, o, allowed, nowNanos, q, w, usedThisMinute, out);
          return;
      }
      if (!allowed) {
        out.accept("Retry-After", Long.toString(o.retryAfterSeconds()));
      }
    }
  }

  record Result(double seconds, double actualSpan, double idealSpan, int refusals, int sent, double firstPhase) {}

  public static void main(String[] args) throws Exception {
    int q = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    int w0 = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int n = args.length > 2 ? Integer.parseInt(args[2]) : 50;
    int callers = args.length > 3 ? Integer.parseInt(args[3]) : 4;
    List<Pacing> pacings = args.length > 4 && !args[4].equals("ALL") ? List.of(Pacing.valueOf(args[4]))
        : List.of(Pacing.ADAPTIVE, Pacing.BURST, Pacing.EVEN);
    boolean leaky = args.length > 5 && args[5].equals("LEAKY_BUCKET");
    // Shopify's documented bucket: q requests, leaking a twentieth of q a second (40 at 2 a second).
    int w = leaky ? LEAK_SECONDS : w0;
    List<Algorithm> algorithms = leaky ? List.of(Algorithm.TOKEN_BUCKET) : args.length > 5 ? List.of(Algorithm.valueOf(args[5]))
        : List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW, Algorithm.TOKEN_BUCKET);
    List<Dialect> dialects = args.length > 6 ? List.of(Dialect.valueOf(args[6])) : List.of(Dialect.values());
    System.out.printf(Locale.ROOT, "q=%d w=%ds, %d requests from %d callers%s%n", q, w, n, callers,
        leaky ? " (a leaky bucket: the token bucket below, burst q, one unit per w / q)" : "");
    String phases = System.getProperty("phases");
    if (phases != null) {
      sweep(phases, pacings, algorithms, dialects, q, w, n, callers);
      System.exit(0);
    }
    System.out.println("| pacing | algorithm | dialect | wall s | server span s | ideal span s | actual / ideal | 429s | requests sent |");
    System.out.println("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (Pacing pacing : pacings) {
      List<CompletableFuture<String>> rows = new ArrayList<>();
      for (Algorithm algorithm : algorithms) {
        for (Dialect dialect : dialects) {
          rows.add(CompletableFuture.supplyAsync(() -> {
            try {
              Result r = run(algorithm, dialect, pacing, q, w, n, callers);
              return String.format(Locale.ROOT, "| %s | %s | %s | %.2f | %.2f | %.2f | %.3f | %d | %d |", pacing,
                  algorithm.name().toLowerCase(Locale.ROOT).replace('_', ' '), dialect.label, r.seconds, r.actualSpan,
                  r.idealSpan, r.actualSpan / r.idealSpan, r.refusals, r.sent);
            } catch (Exception e) {
              return "| " + pacing + " | " + algorithm + " | " + dialect.label + " | failed: " + e + " |";
            }
          }, Executors.newSingleThreadExecutor()));
        }
      }
      for (CompletableFuture<String> row : rows) {
        System.out.println(row.get(10, TimeUnit.MINUTES));
      }
    }
    System.exit(0);
  }

  /**
   * One run per phase of {@code from:to:step} (seconds into the server's epoch-aligned window at
   * which the first request is sent), each started when the wall clock is at that phase, the runs of
   * one window going at the same time: how the ratio depends on where the first request falls.
   */
  private static void sweep(String spec, List<Pacing> pacings, List<Algorithm> algorithms, List<Dialect> dialects,
      int q, int w, int n, int callers) throws Exception {
    String[] p = spec.split(":");
    double from = Double.parseDouble(p[0]);
    double to = Double.parseDouble(p[1]);
    double step = Double.parseDouble(p[2]);
    // Warm up (class loading, the first connection), so that each run's first request comes at its phase.
    run(algorithms.get(0), dialects.get(0), pacings.get(0), q, w, 1, 1);
    System.out.println("| pacing | algorithm | dialect | first request's phase s | actual / ideal | 429s |");
    System.out.println("| --- | --- | --- | ---: | ---: | ---: |");
    for (Pacing pacing : pacings) {
      for (Algorithm algorithm : algorithms) {
        for (Dialect dialect : dialects) {
          List<CompletableFuture<String>> rows = new ArrayList<>();
          long windowNanos = w * 1_000_000_000L;
          long base = Math.floorDiv(Ticker.system().read() - WINDOW_PHASE, windowNanos) * windowNanos + windowNanos + WINDOW_PHASE;
          for (int i = 0; from + i * step <= to + 1e-9; i++) {
            double phase = from + i * step;
            long startAt = base + Math.round(phase * 1e9);
            long sleep = startAt - Ticker.system().read();
            if (sleep > 0) {
              TimeUnit.NANOSECONDS.sleep(sleep);
            }
            rows.add(CompletableFuture.supplyAsync(() -> {
              try {
                Result r = run(algorithm, dialect, pacing, q, w, n, callers);
                return String.format(Locale.ROOT, "| %s | %s | %s | %.2f | %.3f | %d |", pacing,
                    algorithm.name().toLowerCase(Locale.ROOT).replace('_', ' '), dialect.label, r.firstPhase,
                    r.actualSpan / r.idealSpan, r.refusals);
              } catch (Exception e) {
                return "| " + pacing + " | " + algorithm + " | " + dialect.label + " | " + phase + " | failed: " + e + " |";
              }
            }, Executors.newSingleThreadExecutor()));
          }
          for (CompletableFuture<String> row : rows) {
            System.out.println(row.get(10, TimeUnit.MINUTES));
          }
        }
      }
    }
  }

  static Result run(Algorithm algorithm, Dialect dialect, Pacing pacing, int q, int w, int n, int callers) throws Exception {
    QuotaPolicy policy = QuotaPolicy.builder("default").quota(q).window(Duration.ofSeconds(w)).algorithm(algorithm).build();
    Ticker ticker = Ticker.system();
    Ticker windows = () -> ticker.read() - WINDOW_PHASE;
    QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(windows).build());
    AtomicInteger refusals = new AtomicInteger();
    AtomicInteger sent = new AtomicInteger();
    AtomicLong first = new AtomicLong(Long.MIN_VALUE);
    AtomicLong lastAdmitted = new AtomicLong(Long.MIN_VALUE);
    // The requests admitted in the current UTC minute (Kong's minute budget): index, count.
    long[] minute = {Long.MIN_VALUE, 0};
    ExecutorService serverThreads = Executors.newFixedThreadPool(2);
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    server.createContext("/", ex -> {
      try (ex) {
        Decision d;
        long now;
        long usedThisMinute;
        synchronized (limiter) {
          now = ticker.read();
          d = limiter.acquire(policy, PartitionKey.of("client"));
          first.compareAndSet(Long.MIN_VALUE, now);
          if (d.allowed()) {
            lastAdmitted.set(now);
          }
          long index = Math.floorDiv(now, 60_000_000_000L);
          if (index != minute[0]) {
            minute[0] = index;
            minute[1] = 0;
          }
          if (d.allowed()) {
            minute[1]++;
          }
          usedThisMinute = minute[1];
        }
        sent.incrementAndGet();
        if (TRACE) {
          PolicyOutcome o = d.outcomes().get(0);
          System.out.printf(Locale.ROOT, "%s %s [run %.2f] %8.3f %s r=%d t=%d (window phase %.3f)%n", algorithm,
              dialect.label, Math.floorMod(first.get() - WINDOW_PHASE, w * 1_000_000_000L) / 1e9,
              (now - first.get()) / 1e9, d.allowed() ? "allowed" : "REFUSED", o.remaining(), o.resetSeconds(),
              Math.floorMod(now - WINDOW_PHASE, w * 1_000_000_000L) / 1e9);
        }
        if (!d.allowed()) {
          refusals.incrementAndGet();
        }
        dialect.write(d.outcomes().get(0), d.allowed(), now, q, w, usedThisMinute, (k, v) -> ex.getResponseHeaders().add(k, v));
        ex.sendResponseHeaders(d.allowed() ? 200 : 429, -1);
      }
    });
    server.setExecutor(serverThreads);
    server.start();
    ExecutorService clientThreads = Executors.newFixedThreadPool(2);
    try {
      URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/work");
      HttpClient http = HttpClient.newBuilder().executor(clientThreads).build();
      HeadroomClient client = HeadroomClient.builder(http).pacing(pacing)
          .retry(RetryPolicy.builder().maxAttempts(100).build()).build();
      AtomicInteger issued = new AtomicInteger();
      long start = System.nanoTime();
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (int i = 0; i < callers; i++) {
        all.add(caller(client, uri, issued, n));
      }
      CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
      double seconds = (System.nanoTime() - start) / 1e9;
      double ideal = idealSpan(policy, first.get(), n) / 1e9;
      return new Result(seconds, (lastAdmitted.get() - first.get()) / 1e9, ideal, refusals.get(), sent.get(),
          Math.floorMod(first.get() - WINDOW_PHASE, w * 1_000_000_000L) / 1e9);
    } finally {
      server.stop(0);
      serverThreads.shutdownNow();
      clientThreads.shutdownNow();
    }
  }

  /** One caller: sends its next request when its last one is answered, until {@code n} were issued in all. */
  private static CompletableFuture<Void> caller(HeadroomClient client, URI uri, AtomicInteger issued, int n) {
    if (issued.getAndIncrement() >= n) {
      return CompletableFuture.completedFuture(null);
    }
    return client.sendAsync(HttpRequest.newBuilder(uri).build(), BodyHandlers.discarding())
        .thenCompose(r -> caller(client, uri, issued, n));
  }

  /**
   * The ideal schedule's span: a copy of the limiter, started empty at the server's first decision,
   * admits {@code n} requests each at the earliest instant it allows; the span from the first to the
   * last admission.
   */
  static long idealSpan(QuotaPolicy policy, long firstDecision, int n) {
    ManualTicker ticker = ManualTicker.at(Instant.ofEpochSecond(0, firstDecision - WINDOW_PHASE));
    QuotaLimiter oracle = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
    long start = ticker.read();
    for (int admitted = 0; admitted < n;) {
      Decision d = oracle.acquire(policy, PartitionKey.of("client"));
      if (d.allowed()) {
        admitted++;
      } else {
        ticker.advanceNanos(Math.max(1, d.retryAfter().toNanos()));
      }
    }
    return ticker.read() - start;
  }
}
