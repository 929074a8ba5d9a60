package dev.headroom.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.Ticker;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.RouteRules;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.RedisStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebHandler;
import reactor.core.publisher.Mono;

/**
 * Non-blocking end to end (issue 20, "Reactive front ends"): the WebFlux filter on a real Reactor
 * Netty server, deciding through the real Redis with Lettuce's asynchronous API, under many
 * concurrent requests, makes no blocking call on any Reactor or Lettuce event-loop thread
 * (BlockHound, with nothing exempted; {@link BlockingCalls} records what it finds), no request
 * hangs, and every concurrency lease is released when its response completes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NonBlockingTest {

  static final String REDIS = System.getenv().getOrDefault("HEADROOM_TEST_REDIS", "redis://127.0.0.1:6379");
  static final Duration WAIT = Duration.ofSeconds(30);
  static final int REQUESTS = 3000;
  static final int IN_FLIGHT = 64;

  final QuotaPolicy perKey = QuotaPolicy.builder("per-key").quota(1_000_000).window(Duration.ofMinutes(10))
      .partitioning("api-key").build();
  final QuotaPolicy inFlight = QuotaPolicy.builder("in-flight").quota(10_000).window(Duration.ofMinutes(1))
      .unit(QuotaUnit.CONCURRENT_REQUESTS).build();
  final QuotaPolicy bytes = QuotaPolicy.builder("bytes").quota(100_000_000).window(Duration.ofMinutes(10))
      .unit(QuotaUnit.CONTENT_BYTES).partitioning("api-key").build();
  final QuotaPolicy tight = QuotaPolicy.builder("tight").quota(5).window(Duration.ofMinutes(10))
      .partitioning("api-key").build();

  RedisStore store;
  SpecServer server;
  HttpClient client;

  @BeforeAll
  void start() {
    store = RedisStore.builder().uri(REDIS).keyPrefix("webflux-" + UUID.randomUUID() + ":")
        .failurePolicy(FailurePolicy.FAIL_CLOSED).decisionDeadline(Duration.ofSeconds(5)).build();
    Gate<ServerWebExchange> gate = Gate.<ServerWebExchange>builder()
        .limiter(QuotaLimiter.of(store))
        .refusals(LimitRefusals.builder().ticker(Ticker.system()).defaults(PolicyTexts.builder("Fair use for every caller.").build()).build())
        .route(RouteRules.builder("/api/items/{id}").methods("GET").policy(perKey).policy(inFlight).policy(bytes).build())
        .route(RouteRules.builder("/api/tight").policy(tight).build())
        .discovery("Non-blocking", "The WebFlux filter on Redis.")
        .build();
    server = SpecServer.start(handler(), HeadroomWebFilter.builder(gate).users(ReactiveUserResolver.none()).build());
    client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(WAIT).build();
  }

  @AfterAll
  void stop() {
    server.close();
    store.close();
  }

  static WebHandler handler() {
    return exchange -> {
      String path = exchange.getRequest().getPath().value();
      if (!path.startsWith("/api/")) {
        return Mono.error(new ResponseStatusException(HttpStatus.NOT_FOUND));
      }
      ServerHttpResponse res = exchange.getResponse();
      res.setStatusCode(HttpStatus.OK);
      res.getHeaders().setContentType(MediaType.TEXT_PLAIN);
      return res.writeWith(Mono.just(res.bufferFactory().wrap("item".getBytes(StandardCharsets.US_ASCII))));
    };
  }

  @Test
  void manyConcurrentRequestsThroughRedisNeverBlockAnEventLoop() throws Exception {
    Semaphore slots = new Semaphore(IN_FLIGHT);
    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < REQUESTS; i++) {
      slots.acquire();
      HttpRequest r = HttpRequest.newBuilder(URI.create(server.base() + "/api/items/" + (i % 50))).timeout(WAIT)
          .header("X-Api-Key", "key-" + (i % 20)).GET().build();
      all.add(client.sendAsync(r, HttpResponse.BodyHandlers.ofString()).whenComplete((ok, e) -> slots.release()));
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(WAIT.toSeconds() * 4, TimeUnit.SECONDS);
    for (CompletableFuture<HttpResponse<String>> f : all) {
      HttpResponse<String> r = f.join();
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(r.headers().firstValue("RateLimit")).isPresent();
    }
    assertThat(BlockingCalls.found()).as("blocking calls on event loops").isEmpty();
    // every lease comes back once its response completed (released without anyone waiting)
    long deadline = System.nanoTime() + WAIT.toNanos();
    long remaining;
    do {
      var d = store.acquire(List.of(Acquisition.of(inFlight, PartitionKey.GLOBAL, 1)));
      remaining = d.outcomes().get(0).remaining();
      store.release(d.leases().get(0));
    } while (remaining != inFlight.quota() - 1 && System.nanoTime() < deadline);
    assertThat(remaining).as("leases still held").isEqualTo(inFlight.quota() - 1);
    // the content bytes of every response were charged: 4 bytes per request
    var charged = store.acquire(List.of(Acquisition.of(bytes, PartitionKey.of("unused"), 0)));
    assertThat(charged.allowed()).isTrue();
  }

  @Test
  void refusalsFromRedisAreWrittenWithoutBlocking() throws Exception {
    String key = "tight-" + UUID.randomUUID();
    List<Integer> statuses = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      HttpRequest r = HttpRequest.newBuilder(URI.create(server.base() + "/api/tight")).timeout(WAIT)
          .header("X-Api-Key", key).header("Accept", i % 2 == 0 ? "application/json" : "text/html").GET().build();
      HttpResponse<String> res = client.send(r, HttpResponse.BodyHandlers.ofString());
      statuses.add(res.statusCode());
      if (res.statusCode() == 429) {
        assertThat(res.headers().firstValue("Retry-After")).isPresent();
        assertThat(res.headers().firstValue("Content-Type").orElseThrow())
            .startsWith(i % 2 == 0 ? "application/" : "text/html");
      }
    }
    assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429, 429, 429);
    assertThat(BlockingCalls.found()).as("blocking calls on event loops").isEmpty();
  }
}
