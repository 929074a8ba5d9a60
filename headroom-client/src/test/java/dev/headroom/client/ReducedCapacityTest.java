package dev.headroom.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import dev.headroom.http.body.ProblemType;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.Test;

/**
 * Capacity, not quota: a {@code concurrent-requests} policy (draft-ietf-httpapi-ratelimit-headers-09
 * section 3.1.2, Appendix B.1.3) caps the requests on the wire, and a
 * {@code temporary-reduced-capacity} refusal (section 5.2, status 503) with a smaller {@code q}
 * slows every caller of the origin at once and recovers gradually ({@link OriginCapacity}), through
 * {@link HeadroomClient} against real loopback servers.
 */
class ReducedCapacityTest {

  private static final String REDUCED = "{\"type\":\"" + ProblemType.TEMPORARY_REDUCED_CAPACITY.uri() + "\","
      + "\"title\":\"Temporary Reduced Capacity\",\"status\":503,\"error\":\"temporary_reduced_capacity\","
      + "\"detail\":\"Capacity is reduced; try again later.\",\"why\":\"The service is degraded.\","
      + "\"violated-policies\":[\"api\"]}";

  /**
   * Section 3.1.2, {@code concurrent-requests}: eight callers against a policy of three never have
   * more than three requests on the wire, none is refused, and every request is served.
   */
  @Test
  void section3_1_2AConcurrentRequestsPolicyCapsTheRequestsOnTheWire() throws Exception {
    int quota = 3;
    OnTheWire wire = new OnTheWire();
    AtomicInteger refused = new AtomicInteger();
    try (TestServer server = new TestServer(Ticker.system(), wire.counting(h -> {
      if (h > quota) {
        refused.incrementAndGet();
        return TestServer.Reply.of(429).header("Retry-After", "1").header("RateLimit-Policy", policy(quota))
            .header("RateLimit", "\"conc\";r=0;t=1").json("{\"status\":429}");
      }
      pause(25);
      return TestServer.Reply.of(200).header("RateLimit-Policy", policy(quota))
          .header("RateLimit", "\"conc\";r=" + (quota - h) + ";t=1").body("text/plain", "ok");
    }))) {
      HeadroomClient client = HeadroomClient.builder(Scripted.HTTP).retry(RetryPolicy.none()).build();
      run(client, server, 8, 48, () -> false);
      assertThat(wire.most.get()).as("most requests on the wire").isBetween(2, quota);
      assertThat(refused.get()).as("refusals").isZero();
      assertThat(server.count(200)).isEqualTo(48);
    }
  }

  /** The policy alone, without a RateLimit item stating {@code r}, caps the requests on the wire at its {@code q}. */
  @Test
  void section3_1_2AConcurrentRequestsPolicyAloneCapsAtItsQuota() throws Exception {
    int quota = 2;
    OnTheWire wire = new OnTheWire();
    try (TestServer server = new TestServer(Ticker.system(), wire.counting(h -> {
      pause(25);
      return TestServer.Reply.of(200).header("RateLimit-Policy", policy(quota)).body("text/plain", "ok");
    }))) {
      run(HeadroomClient.builder(Scripted.HTTP).retry(RetryPolicy.none()).build(), server, 6, 30, () -> false);
      assertThat(wire.most.get()).as("most requests on the wire").isEqualTo(quota);
      assertThat(server.count(200)).isEqualTo(30);
    }
  }

  /**
   * A caller held for a place on the wire is never stranded by a request that fails without an
   * answer (a transport error): the failed request frees its place as an answer would.
   */
  @Test
  void aCallerWaitingForAPlaceIsWokenWhenARequestFails() throws Exception {
    try (TestServer server = new TestServer(Ticker.system(), req -> {
      pause(10);
      return TestServer.Reply.of(200).header("RateLimit-Policy", policy(1)).header("RateLimit", "\"conc\";r=0;t=1")
          .body("text/plain", "ok");
    })) {
      AtomicInteger sent = new AtomicInteger();
      // Every third request fails on the wire, after a while, without an answer.
      HeadroomClient client = HeadroomClient.builder(Scripted.HTTP).retry(RetryPolicy.none())
          .addNetworkInterceptor(chain -> sent.incrementAndGet() % 3 != 0 ? chain.proceed(chain.request())
              : CompletableFuture.supplyAsync(() -> {
                throw new UncheckedIOException(new IOException("connection reset"));
              }, CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS)))
          .build();
      AtomicInteger failed = new AtomicInteger();
      AtomicInteger served = new AtomicInteger();
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        CompletableFuture<Void> chainOfCalls = CompletableFuture.completedFuture(null);
        for (int n = 0; n < 6; n++) {
          chainOfCalls = chainOfCalls.thenCompose(v -> client.sendAsync(Scripted.get(server, "/api"), BodyHandlers.discarding())
              .handle((r, e) -> {
                (e == null ? served : failed).incrementAndGet();
                return null;
              }));
        }
        all.add(chainOfCalls);
      }
      CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
      assertThat(failed.get()).as("failed on the wire").isEqualTo(8);
      assertThat(served.get()).isEqualTo(16);
    }
  }

  /**
   * Section 5.2 against a token bucket of 20 a second whose capacity an operator reduces to a
   * quarter for 4 s (as headroom-enforcement's {@code CapacityReductions} does: the same policy
   * name with {@code q=5}, its refusals {@code temporary-reduced-capacity} with status 503), and
   * which sheds for the first half second of the reduction whatever the quota says. Four callers,
   * virtual time: the first refusal holds every caller for its Retry-After and its smaller
   * {@code q} rescales the books, so at most two requests are refused in all; while reduced the
   * callers together send no faster than the reduced quota allows; once the quota is restored
   * (a larger {@code q} on a success rescales the books again) they are back near the full rate.
   */
  @Test
  void section5_2AReducedCapacitySlowsEveryCallerAndRecovers() throws Exception {
    ManualTicker ticker = ManualTicker.at(Instant.ofEpochSecond(1_800_000_000L, 300_000_000L));
    long start = ticker.read();
    long reduceAt = start + Duration.ofSeconds(3).toNanos();
    long restoreAt = start + Duration.ofSeconds(7).toNanos();
    long end = start + Duration.ofSeconds(12).toNanos();
    Duration window = Duration.ofSeconds(1);
    QuotaPolicy full = QuotaPolicy.builder("api").quota(20).window(window).algorithm(Algorithm.TOKEN_BUCKET).build();
    QuotaPolicy reduced = full.toBuilder().quota(5).build();
    RateLimitHeaders fullFields = fields(ticker, full);
    RateLimitHeaders reducedFields = fields(ticker, reduced);
    QuotaLimiter limiter = Peers.limiter(ticker);
    long shedUntil = reduceAt + Duration.ofMillis(500).toNanos();
    try (TestServer server = new TestServer(ticker, req -> {
      long now = ticker.read();
      boolean isReduced = now >= reduceAt && now < restoreAt;
      if (now >= reduceAt && now < shedUntil) {
        // As the capacity falls the server sheds what it is serving: refused whatever the quota left.
        return TestServer.Reply.of(503).header("Retry-After", "1").header("RateLimit-Policy", "\"api\";q=5;w=1")
            .header("RateLimit", "\"api\";r=0;t=1").body("application/problem+json", REDUCED);
      }
      Decision d = limiter.acquire(isReduced ? reduced : full, PartitionKey.of("client"));
      TestServer.Reply r = d.allowed() ? TestServer.Reply.of(200).body("text/plain", "ok")
          : isReduced ? TestServer.Reply.of(503).body("application/problem+json", REDUCED)
          : TestServer.Reply.of(429).json("{\"status\":429}");
      (isReduced ? reducedFields : fullFields).write(d, r.status, r::header);
      return r;
    })) {
      SteppingScheduler scheduler = new SteppingScheduler(ticker);
      HeadroomClient client = HeadroomClient.builder(Scripted.HTTP).ticker(ticker).scheduler(scheduler)
          .retry(RetryPolicy.builder().jitter(0).maxAttempts(10).build()).addNetworkInterceptor(scheduler.wire()).build();
      AtomicInteger issued = new AtomicInteger();
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        all.add(caller(client, server, issued, Integer.MAX_VALUE, () -> ticker.read() >= end));
      }
      scheduler.run(all);
      for (CompletableFuture<Void> f : all) {
        f.get();
      }
      assertThat(server.count(429)).as("quota refusals").isZero();
      assertThat(server.count(503)).as("reduced-capacity refusals").isBetween(1L, 2L);
      long second = Duration.ofSeconds(1).toNanos();
      // Full: 20 a second, at most the bucket's 20 more.
      assertThat(sent(server, at -> at >= start && at < reduceAt)).as("sent at full capacity").isBetween(55L, 80L);
      // Reduced, after the refusal's hold: 5 a second, at most the reduced bucket's 5 more.
      assertThat(sent(server, at -> at >= reduceAt + second && at < restoreAt)).as("sent while reduced").isBetween(8L, 20L);
      // Restored: back near 20 a second within two seconds.
      assertThat(sent(server, at -> at >= restoreAt + 2 * second && at < end)).as("sent once restored")
          .isBetween(50L, 80L);
    }
  }

  /**
   * Section 5.2 without any RateLimit field: a server whose capacity falls from eight requests at
   * once to two refuses the rest with {@code temporary-reduced-capacity}. Eight callers, real
   * clock: after the first refusal the origin's window halves, so the callers together never again
   * have more than four requests on the wire while it is reduced (each Retry-After alone would let
   * all eight go again) and far fewer requests are refused than when each caller only waits out its
   * own Retry-After; once restored, the window grows back by one request per window of answers until
   * all eight are on the wire again.
   */
  @Test
  void section5_2ACapacityRefusalNarrowsTheOriginsWindowForEveryCaller() throws Exception {
    OnTheWire wire = new OnTheWire();
    AtomicLong firstRefusal = new AtomicLong(Long.MAX_VALUE);
    AtomicInteger mostAfterRefusal = new AtomicInteger();
    AtomicInteger mostRestored = new AtomicInteger();
    AtomicBoolean reduced = new AtomicBoolean();
    AtomicBoolean restored = new AtomicBoolean();
    AtomicBoolean stop = new AtomicBoolean();
    Ticker clock = Ticker.system();
    try (TestServer server = new TestServer(clock, wire.counting(h -> {
      long now = clock.read();
      if (reduced.get() && firstRefusal.get() != Long.MAX_VALUE
          && now - firstRefusal.get() > Duration.ofMillis(500).toNanos()) {
        // Sent after the client read the first refusal (its Retry-After held every caller for 1 s).
        mostAfterRefusal.accumulateAndGet(h, Math::max);
      }
      if (reduced.get() && h > 2) {
        firstRefusal.compareAndSet(Long.MAX_VALUE, now);
        // An overloaded server takes its time to refuse too: a refusal stays on the wire as long.
        pause(20);
        return TestServer.Reply.of(503).header("Retry-After", "1").body("application/problem+json", REDUCED);
      }
      if (restored.get()) {
        mostRestored.accumulateAndGet(h, Math::max);
      }
      pause(20);
      return TestServer.Reply.of(200).body("text/plain", "ok");
    }))) {
      HeadroomClient client = HeadroomClient.builder(Scripted.HTTP)
          .retry(RetryPolicy.builder().jitter(0).maxAttempts(20).maxWait(Duration.ofSeconds(1)).build()).build();
      // Each refused caller comes back after the Retry-After (the back-off capped at it), so that
      // every caller is back by the restore. The phases run on the wall clock: full for 0.7 s, reduced for 3.5 s, restored for 2.5 s.
      CompletableFuture<Void> phases = CompletableFuture.runAsync(() -> {
        pause(700);
        reduced.set(true);
        pause(3500);
        reduced.set(false);
        restored.set(true);
        pause(2500);
        stop.set(true);
      });
      run(client, server, 8, Integer.MAX_VALUE, stop::get);
      phases.get();
      assertThat(firstRefusal.get()).as("a refusal came").isNotEqualTo(Long.MAX_VALUE);
      assertThat(mostAfterRefusal.get()).as("most on the wire while reduced, after the first refusal").isBetween(1, 4);
      // Measured: 7 to 10 with the window; 19 to 26, and 8 on the wire, when each caller only waits
      // out the Retry-After.
      assertThat(server.count(503)).as("reduced-capacity refusals").isLessThanOrEqualTo(14);
      assertThat(mostRestored.get()).as("most on the wire once restored").isGreaterThanOrEqualTo(7);
    }
  }

  /** Counts the requests a server is deciding at once. */
  private static final class OnTheWire {
    final AtomicInteger held = new AtomicInteger();
    final AtomicInteger most = new AtomicInteger();

    /** A handler answering with {@code reply} of how many are being decided, this one too. */
    TestServer.Handler counting(IntFunction<TestServer.Reply> reply) {
      return req -> {
        int h = held.incrementAndGet();
        most.accumulateAndGet(h, Math::max);
        try {
          return reply.apply(h);
        } finally {
          held.decrementAndGet();
        }
      };
    }
  }

  /** {@code callers} callers until {@code n} requests were issued or {@code done}; at most 60 s. */
  private static void run(HeadroomClient client, TestServer server, int callers, int n, BooleanSupplier done)
      throws Exception {
    AtomicInteger issued = new AtomicInteger();
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (int i = 0; i < callers; i++) {
      all.add(caller(client, server, issued, n, done));
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
  }

  private static String policy(int quota) {
    return "\"conc\";q=" + quota + ";qu=\"concurrent-requests\"";
  }

  private static RateLimitHeaders fields(Ticker ticker, QuotaPolicy policy) {
    return RateLimitHeaders.builder().dialects(EnumSet.of(HeaderDialect.IETF)).ticker(ticker).policies(List.of(policy)).build();
  }

  /** Requests that reached the server (any answer) at instants {@code when} accepts. */
  private static long sent(TestServer server, LongPredicate when) {
    return server.log().stream().filter(l -> when.test(l.request().atNanos())).count();
  }

  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** One caller: its next request when its last is answered, until {@code n} were issued or {@code done}. */
  private static CompletableFuture<Void> caller(HeadroomClient client, TestServer server, AtomicInteger issued, int n,
      BooleanSupplier done) {
    if (done.getAsBoolean() || issued.getAndIncrement() >= n) {
      return CompletableFuture.completedFuture(null);
    }
    return client.sendAsync(Scripted.get(server, "/api/items"), BodyHandlers.discarding())
        .thenCompose(r -> caller(client, server, issued, n, done));
  }
}
