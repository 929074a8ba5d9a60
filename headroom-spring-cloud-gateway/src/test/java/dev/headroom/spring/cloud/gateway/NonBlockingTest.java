package dev.headroom.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.conformance.SpecFixture;
import dev.headroom.conformance.SpecUpstream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * No Headroom store call blocks an event loop (issue 20): BlockHound instruments the JVM, and a
 * Spring Cloud Gateway application on the Redis store (the real Redis) takes concurrent requests
 * through {@link HeadroomRateLimiter}, then through the {@code Headroom} filter (a decision, a
 * concurrency lease released and content bytes charged per request); every blocking call made on a non-blocking thread (Reactor
 * Netty's and Lettuce's event loops) is recorded with its stack, and none may pass through Headroom
 * or Lettuce. The detector is shown to work first, so the test can fail.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NonBlockingTest {

  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final int REQUESTS = 2_000;
  private static final int IN_FLIGHT = 64;

  /** Blocking calls seen on non-blocking threads, each as its stack. */
  private static final ConcurrentLinkedQueue<List<StackTraceElement>> BLOCKED = new ConcurrentLinkedQueue<>();

  private SpecUpstream upstream;

  @BeforeAll
  void install() throws Exception {
    BlockHound.install(b -> b.blockingMethodCallback(m -> BLOCKED.add(Arrays.asList(new Error(m.toString()).getStackTrace()))));
    upstream = SpecUpstream.start(new SpecFixture());
  }

  @AfterAll
  void stop() {
    upstream.close();
  }

  private static List<List<StackTraceElement>> ours() {
    List<List<StackTraceElement>> ours = new ArrayList<>();
    for (List<StackTraceElement> recorded : BLOCKED) {
      // the frames below BlockHound's own: the blocking method and its callers
      int below = 0;
      for (int i = 0; i < recorded.size(); i++) {
        if (recorded.get(i).getClassName().startsWith("reactor.blockhound.")) {
          below = i + 1;
        }
      }
      List<StackTraceElement> stack = recorded.subList(below, recorded.size());
      if (stack.stream().anyMatch(f -> f.getClassName().startsWith("dev.headroom.") || f.getClassName().startsWith("io.lettuce."))) {
        ours.add(stack);
      }
    }
    return ours;
  }

  @Test
  void theDetectorSeesABlockingCallOnANonBlockingThread() {
    BLOCKED.clear();
    Mono.fromCallable(() -> {
      Thread.sleep(1);
      return 1;
    }).subscribeOn(Schedulers.parallel()).block(TIMEOUT);
    assertThat(BLOCKED).isNotEmpty();
    BLOCKED.clear();
  }

  /** The store's connection on an event loop of Lettuce's own ({@code store.redis-event-loops: own}). */
  @Test
  void theRateLimiterOnRedisOnLettucesOwnLoopNeverBlocksAnEventLoop() throws Exception {
    Map<String, Object> p = rateLimiterOnRedis();
    p.put("headroom.cloud-gateway.store.redis-event-loops", "own");
    loadWithoutBlocking(p);
  }

  /** One route through RequestRateLimiter with HeadroomRateLimiter, 10 requests an hour per API key, on Redis. */
  private Map<String, Object> rateLimiterOnRedis() {
    Map<String, Object> p = new HashMap<>();
    String r = "spring.cloud.gateway.server.webflux.routes[0]";
    p.put(r + ".id", "limited");
    p.put(r + ".uri", "http://127.0.0.1:" + upstream.port());
    p.put(r + ".predicates[0]", "Path=/spec/**");
    p.put(r + ".filters[0].name", "RequestRateLimiter");
    p.put(r + ".filters[0].args.key-resolver", "#{@apiKeyResolver}");
    p.put(r + ".filters[0].args.headroom-rate-limiter.quota", "10");
    p.put(r + ".filters[0].args.headroom-rate-limiter.window", "1h");
    p.put("headroom.cloud-gateway.store.type", "redis");
    p.put("headroom.cloud-gateway.store.key-prefix", "headroom-scg-blockhound:" + UUID.randomUUID() + ":");
    return p;
  }

  /**
   * The store's connection on the server's own loops ({@code store.redis-event-loops: server}, the
   * default, so not set here): still no blocking call, and every admitted request goes on to the
   * upstream on a server loop (Reactor Netty's {@code reactor-http-*}), the one it came from, never
   * on a Reactor or Lettuce thread of its own.
   */
  @Test
  void theRateLimiterOnRedisOnTheServerLoopsByDefaultNeverBlocksAnEventLoop() throws Exception {
    Map<String, Object> p = rateLimiterOnRedis();
    Set<String> before = lettuceLoops();
    loadWithoutBlocking(p, () -> assertThat(lettuceLoops()).as("Lettuce event loops of its own while the store decided")
        .isSubsetOf(before));
    assertThat(FORWARDED_ON).as("threads that forwarded admitted requests").allMatch(name -> name.startsWith("reactor-http-"));
  }

  @Test
  void theHeadroomFilterOnRedisNeverBlocksAnEventLoop() throws Exception {
    Map<String, Object> p = new HashMap<>();
    String r = "spring.cloud.gateway.server.webflux.routes[0]";
    p.put(r + ".id", "limited");
    p.put(r + ".uri", "http://127.0.0.1:" + upstream.port());
    p.put(r + ".predicates[0]", "Path=/spec/**");
    p.put(r + ".filters[0].name", "Headroom");
    p.put(r + ".filters[0].args.policies", "per-key,slots,bytes");
    String at = "headroom.cloud-gateway.policies.";
    p.put(at + "per-key.quota", "10");
    p.put(at + "per-key.window", "1h");
    p.put(at + "per-key.partitioning", "api-key");
    p.put(at + "slots.quota", "1000");
    p.put(at + "slots.unit", "concurrent-requests");
    p.put(at + "slots.algorithm", "concurrency");
    p.put(at + "slots.partitioning", "api-key");
    p.put(at + "bytes.quota", "1000000");
    p.put(at + "bytes.window", "1h");
    p.put(at + "bytes.unit", "content-bytes");
    p.put(at + "bytes.partitioning", "api-key");
    p.put("headroom.cloud-gateway.store.type", "redis");
    p.put("headroom.cloud-gateway.store.key-prefix", "headroom-scg-blockhound:" + UUID.randomUUID() + ":");
    loadWithoutBlocking(p);
  }

  /**
   * Starts the application, sends the load, and requires that some requests were refused (so the
   * store decided) and that no blocking call went through Headroom or Lettuce on an event loop.
   */
  private static void loadWithoutBlocking(Map<String, Object> properties) throws Exception {
    loadWithoutBlocking(properties, () -> {});
  }

  /** As {@link #loadWithoutBlocking(Map)}, checking {@code whileRunning} after the load, the application still up. */
  private static void loadWithoutBlocking(Map<String, Object> properties, Runnable whileRunning) throws Exception {
    try (GatewayApp.Running app = GatewayApp.start(properties, ForwardingThreads.class)) {
      BLOCKED.clear();
      FORWARDED_ON.clear();
      Map<Integer, Integer> statuses = load(app.base().resolve("/spec/free"));
      assertThat(statuses.keySet()).as("statuses %s", statuses).containsOnly(200, 429);
      assertThat(statuses.get(429)).as("some partitions were refused: the store decided").isPositive();
      whileRunning.run();
    }
    assertThat(ours()).as("blocking calls through Headroom or Lettuce on an event loop").isEmpty();
    // The exchange goes on past Headroom's decision on a Reactor thread, never on the Redis
    // client's I/O thread, whose replies would wait behind the gateway's work (decisions past
    // their deadline, answered by the failure policy, on a healthy Redis).
    assertThat(FORWARDED_ON).as("threads that forwarded admitted requests").isNotEmpty()
        .noneMatch(name -> name.startsWith("lettuce-") || name.startsWith("headroom-"));
  }

  /**
   * The live threads of Lettuce's own I/O event loops ({@code lettuce-epollEventLoop-*},
   * {@code lettuce-nioEventLoop-*}; not its computation pool, {@code lettuce-eventExecutorLoop-*}).
   */
  static Set<String> lettuceLoops() {
    Set<String> names = new TreeSet<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("lettuce-") && t.getName().contains("EventLoop")) {
        names.add(t.getName());
      }
    }
    return names;
  }

  /** Names of the threads on which admitted requests went on to the upstream. */
  static final Set<String> FORWARDED_ON = ConcurrentHashMap.newKeySet();

  /** A global filter just before the routing filter: records the thread that forwards. */
  @Configuration(proxyBeanMethods = false)
  static class ForwardingThreads {
    @Bean
    GlobalFilter recordForwardingThread() {
      class Recording implements GlobalFilter, Ordered {
        @Override
        public Mono<Void> filter(ServerWebExchange exchange,
            GatewayFilterChain chain) {
          FORWARDED_ON.add(Thread.currentThread().getName());
          return chain.filter(exchange);
        }

        @Override
        public int getOrder() {
          return Ordered.LOWEST_PRECEDENCE - 1;
        }
      }
      return new Recording();
    }
  }

  /** {@value #REQUESTS} requests over 100 API keys, {@value #IN_FLIGHT} at a time: statuses counted. */
  static Map<Integer, Integer> load(URI uri) throws Exception {
    HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    Semaphore window = new Semaphore(IN_FLIGHT);
    Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
    List<CompletableFuture<?>> all = new ArrayList<>();
    for (int i = 0; i < REQUESTS; i++) {
      if (!window.tryAcquire(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new AssertionError("no answer within " + TIMEOUT + " with " + IN_FLIGHT + " requests in flight");
      }
      HttpRequest req = HttpRequest.newBuilder(uri).timeout(TIMEOUT).header("X-Api-Key", "key-" + (i % 100)).build();
      all.add(client.sendAsync(req, HttpResponse.BodyHandlers.discarding())
          .whenComplete((res, e) -> {
            window.release();
            statuses.merge(e == null ? res.statusCode() : -1, 1, Integer::sum);
          }));
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    return statuses;
  }
}
