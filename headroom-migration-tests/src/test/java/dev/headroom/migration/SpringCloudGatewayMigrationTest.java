package dev.headroom.migration;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.ReactiveRedisConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * docs/migrating-from-spring-cloud-gateway.md, checked: one Spring Cloud Gateway application
 * ({@code spring-cloud-gateway-routes.yml}) holds each {@code RedisRateLimiter} route of the peer
 * ({@code replenishRate}, {@code burstCapacity}, {@code requestedTokens}, a {@code KeyResolver})
 * beside its Headroom mappings: {@code RequestRateLimiter} with {@code HeadroomRateLimiter}
 * (quota, window, token-bucket, cost; the same key resolver) and the {@code Headroom} filter
 * ({@code headroom.cloud-gateway.routes.ID}; partitioning {@code api-key} for the key resolver).
 * The same scripted trace (bursts, idle gaps, refill, two keys) is admitted the same by all.
 *
 * <p>The peer runs on the real Redis at 127.0.0.1:6379. {@code RedisRateLimiter}'s script reads
 * Redis {@code TIME} in whole seconds unless its {@code ARGV[3]} supplies {@code now} (the script
 * says so: "for testing"), so the trace is driven twice: exactly, through the script the gateway
 * loaded with the route's bound arguments and a supplied {@code now}; and in real time, through
 * the route itself over HTTP, each step started early in the Redis second it is planned for, and
 * the second each request was decided at read back from the timestamp key the script writes (so a
 * slow machine that pushes a request into the next second changes the trace, never the
 * comparison). Headroom's routes are asked over HTTP on a {@link ManualTicker} standing at each
 * request's second.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpringCloudGatewayMigrationTest {

  static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
  /** Generous: on a loaded machine a cold gateway can take tens of seconds over a request. */
  static final Duration TIMEOUT = Duration.ofMinutes(1);

  /** Requests per route before the traces: enough to be refused. */
  static final int WARM_UP_REQUESTS = 8;

  /** Each peer route and the Headroom routes that map it. */
  static final Map<String, List<String>> MAPPINGS = Map.of(
      "peer-burst", List.of("limiter-burst", "filter-burst"),
      "peer-costly", List.of("limiter-costly", "filter-costly"));

  /** At {@code second} after the start, {@code count} requests with {@code key}. */
  record Step(long second, String key, int count) {}

  /**
   * Bursts past the bucket, refill of whole seconds, a request that costs more than the tokens
   * left, a second key, and idle gaps that fill the bucket (and outlast the peer's key expiry).
   */
  static final List<Step> TRACE = List.of(
      new Step(0, "a", 8),
      new Step(0, "b", 3),
      new Step(1, "a", 3),
      new Step(2, "a", 1),
      new Step(3, "b", 4),
      new Step(6, "a", 8),
      new Step(7, "a", 2),
      new Step(10, "a", 1),
      new Step(30, "a", 8),
      new Step(30, "b", 8),
      new Step(32, "a", 6),    // two seconds of refill after an empty bucket: the rate shows
      new Step(33, "b", 3));

  /** What the peer admits of TRACE, worked out by hand from its script (the test's own check of the trace). */
  static final Map<String, String> EXPECTED = Map.of(
      "peer-burst", "a@0:YYYYYYNN b@0:YYY a@1:YYN a@2:Y b@3:YYYY a@6:YYYYYYNN a@7:YY a@10:Y a@30:YYYYYYNN b@30:YYYYYYNN"
          + " a@32:YYYYNN b@33:YYY",
      "peer-costly", "a@0:YYNNNNNN b@0:YYN a@1:NNN a@2:Y b@3:YNNN a@6:YYNNNNNN a@7:NN a@10:Y a@30:YYNNNNNN b@30:YYNNNNNN"
          + " a@32:YNNNNN b@33:YNN");

  /** The real-time trace: short, since each second is a real one, and few requests a step, so that each fits in its second. */
  static final List<Step> REAL_TIME_TRACE = List.of(
      new Step(0, "a", 7),
      new Step(0, "b", 2),
      new Step(1, "a", 3),
      new Step(2, "a", 1),
      new Step(3, "b", 4),
      new Step(6, "a", 7));

  /** What the peer admits of REAL_TIME_TRACE when every step runs in its planned second. */
  static final Map<String, String> EXPECTED_REAL_TIME = Map.of(
      "peer-burst", "a@0:YYYYYYN b@0:YY a@1:YYN a@2:Y b@3:YYYY a@6:YYYYYYN",
      "peer-costly", "a@0:YYNNNNN b@0:YY a@1:NNN a@2:Y b@3:YNNN a@6:YYNNNNN");

  /** The gateway application: auto-configured, a key resolver reading X-Api-Key, a manual clock for Headroom. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class Gateway {
    @Bean
    KeyResolver apiKeyResolver() {
      return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Api-Key"));
    }

    @Bean
    ManualTicker ticker() {
      return ManualTicker.at(START);
    }
  }

  DisposableServer upstream;
  ConfigurableApplicationContext app;
  URI base;

  @BeforeAll
  void start() throws Exception {
    upstream = HttpServer.create().host("127.0.0.1").port(0)
        .handle((request, response) -> response.sendString(Mono.just("ok"))).bindNow();
    List<PropertySource<?>> routes = new YamlPropertySourceLoader()
        .load("spring-cloud-gateway-routes.yml", new ClassPathResource("spring-cloud-gateway-routes.yml"));
    app = new SpringApplicationBuilder(Gateway.class).web(WebApplicationType.REACTIVE)
        .properties("server.address=127.0.0.1", "server.port=0", "server.shutdown=immediate",
            "spring.main.banner-mode=off",
            "spring.data.redis.host=127.0.0.1", "spring.data.redis.port=6379",
            "migration.upstream=http://127.0.0.1:" + upstream.port(),
            // this module also carries the Spring Boot starter for the other guide's test: off here
            "headroom.enabled=false")
        .initializers(ctx -> ctx.getEnvironment().getPropertySources().addFirst(routes.get(0)))
        .run();
    base = URI.create("http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort());
    // a request per peer route binds its arguments (RedisRateLimiter reads them per route); then
    // every route admits and refuses once before the traces, so that no step of a trace waits for
    // a cold code path
    for (String peer : MAPPINGS.keySet()) {
      assertThat(get(peer, "warm-up-" + UUID.randomUUID()).statusCode()).as(peer).isEqualTo(200);
    }
    MAPPINGS.forEach((peer, headroom) -> {
      List<String> warmed = new ArrayList<>(headroom);
      warmed.add(peer);
      for (String route : warmed) {
        String key = "warm-up-" + UUID.randomUUID();
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < WARM_UP_REQUESTS; i++) {
          statuses.add(uncheckedGet(route, key).statusCode());
        }
        if (route.equals(peer)) {
          // in real time: on a slow machine the bucket may refill as fast as the requests arrive
          assertThat(statuses).as("warm-up of %s", route).contains(200).isSubsetOf(200, 429);
        } else {
          assertThat(statuses).as("warm-up of %s (manual clock)", route).contains(200, 429);
        }
      }
    });
  }

  @AfterAll
  void stop() {
    if (app != null) {
      app.close();
    }
    if (upstream != null) {
      upstream.disposeNow();
    }
  }

  @Test
  void redisRateLimitersScriptWithASuppliedNowAndHeadroomsMappedRoutesAdmitTheSameTrace() throws Exception {
    RedisRateLimiter peer = app.getBean(RedisRateLimiter.class);
    @SuppressWarnings("unchecked")
    RedisScript<List<Long>> script = app.getBean("redisRequestRateLimiterScript", RedisScript.class);
    ReactiveStringRedisTemplate redis = app.getBean(ReactiveStringRedisTemplate.class);
    long redisStart = 1_800_000_000L; // any second: the script only subtracts

    for (String peerRoute : MAPPINGS.keySet()) {
      RedisRateLimiter.Config bound = peer.getConfig().get(peerRoute);
      assertThat(bound).as("RedisRateLimiter's arguments of route %s", peerRoute).isNotNull();
      String run = UUID.randomUUID().toString();
      List<Boolean> peerAdmitted = new ArrayList<>();
      for (Step step : TRACE) {
        // the keys' shape is RedisRateLimiter's: request_rate_limiter.{id}.tokens and .timestamp
        String id = "migration-test." + run + "." + step.key();
        List<String> keys =
            List.of("request_rate_limiter.{" + id + "}.tokens", "request_rate_limiter.{" + id + "}.timestamp");
        for (int i = 0; i < step.count(); i++) {
          List<String> args = List.of(Integer.toString(bound.getReplenishRate()),
              Integer.toString(bound.getBurstCapacity()), Long.toString(redisStart + step.second()),
              Integer.toString(bound.getRequestedTokens()));
          List<Long> answer = redis.execute(script, keys, args).next().block(TIMEOUT);
          assertThat(answer).as("the script's answer { allowed_num, new_tokens }").hasSize(2);
          peerAdmitted.add(answer.get(0) == 1L);
        }
      }
      assertThat(render(TRACE, peerAdmitted)).as("RedisRateLimiter's script, route %s", peerRoute)
          .isEqualTo(EXPECTED.get(peerRoute));
      for (String headroomRoute : MAPPINGS.get(peerRoute)) {
        assertThat(render(TRACE, headroom(headroomRoute, TRACE)))
            .as("Headroom's route %s, mapped from %s", headroomRoute, peerRoute)
            .isEqualTo(render(TRACE, peerAdmitted));
      }
    }
  }

  @Test
  void redisRateLimiterOnRedisTimeAndHeadroomsMappedRoutesAdmitTheSameTraceOverHttp() throws Exception {
    ReactiveStringRedisTemplate redis = app.getBean(ReactiveStringRedisTemplate.class);
    String run = UUID.randomUUID().toString();
    Map<String, List<Step>> seen = new LinkedHashMap<>();
    Map<String, List<Boolean>> admitted = new LinkedHashMap<>();
    MAPPINGS.keySet().forEach(r -> {
      seen.put(r, new ArrayList<>());
      admitted.put(r, new ArrayList<>());
    });
    long first = redisMillis() / 1000 + 1;
    for (Step step : REAL_TIME_TRACE) {
      long wait = (first + step.second()) * 1000 + 50 - redisMillis();
      if (wait > 0) {
        Thread.sleep(wait);
      }
      for (String peerRoute : MAPPINGS.keySet()) {
        String key = step.key() + "-" + run;
        // RedisRateLimiter's keys: request_rate_limiter.{ROUTE.KEY}.tokens and .timestamp, where
        // the script writes the Redis second it decided at
        String timestamp = "request_rate_limiter.{" + peerRoute + "." + key + "}.timestamp";
        for (int i = 0; i < step.count(); i++) {
          admitted.get(peerRoute).add(status(get(peerRoute, key)));
          String second = redis.opsForValue().get(timestamp).block(TIMEOUT);
          assertThat(second).as("the second %s's script decided at (%s)", peerRoute, timestamp).isNotNull();
          seen.get(peerRoute).add(new Step(Long.parseLong(second) - first, step.key(), 1));
        }
      }
    }
    // on a slow machine a step's requests spread over seconds of refill; the costly route (one token
    // a second, two a request) still refuses within the trace
    assertThat(render(steps(seen.get("peer-costly")), admitted.get("peer-costly")))
        .as("RedisRateLimiter, route peer-costly: refuses some and admits some").contains("Y", "N");
    for (String peerRoute : MAPPINGS.keySet()) {
      List<Step> trace = steps(seen.get(peerRoute));
      String peer = render(trace, admitted.get(peerRoute));
      if (trace.equals(REAL_TIME_TRACE)) {
        assertThat(peer).as("RedisRateLimiter, route %s, every step in its planned second", peerRoute)
            .isEqualTo(EXPECTED_REAL_TIME.get(peerRoute));
      }
      for (String headroomRoute : MAPPINGS.get(peerRoute)) {
        assertThat(render(trace, headroom(headroomRoute, trace)))
            .as("Headroom's route %s, mapped from %s, at the seconds the peer decided at", headroomRoute, peerRoute)
            .isEqualTo(peer);
      }
    }
  }

  /** Requests of one key in one second, one after another, as one step. */
  static List<Step> steps(List<Step> requests) {
    List<Step> steps = new ArrayList<>();
    for (Step r : requests) {
      Step last = steps.isEmpty() ? null : steps.get(steps.size() - 1);
      if (last != null && last.second() == r.second() && last.key().equals(r.key())) {
        steps.set(steps.size() - 1, new Step(last.second(), last.key(), last.count() + r.count()));
      } else {
        steps.add(r);
      }
    }
    return steps;
  }

  /** The trace through one Headroom route, the manual clock at each step's second. */
  List<Boolean> headroom(String route, List<Step> trace) throws Exception {
    ManualTicker ticker = app.getBean(ManualTicker.class);
    String run = UUID.randomUUID().toString();
    long at = 0;
    List<Boolean> admitted = new ArrayList<>();
    for (Step step : trace) {
      ticker.advance(Duration.ofSeconds(step.second() - at));
      at = step.second();
      for (int i = 0; i < step.count(); i++) {
        admitted.add(status(get(route, step.key() + "-" + run)));
      }
    }
    // the next trace starts past every bucket's refill: the clock only moves forward
    ticker.advance(Duration.ofHours(1));
    return admitted;
  }

  /**
   * A GET with the key, on a connection of its own. On kept-alive connections, under concurrency on
   * a heavily loaded machine, a request through this gateway now and then gets no answer until the
   * client's time limit: with the JDK client and with curl alike, on Headroom's routes and on a
   * route with no Headroom filter at all, while every exchange the gateway dispatched completes
   * (headroom-spring-cloud-gateway's KeptAliveConnectionTest covers one connection carrying
   * allowed and refused answers). The trace compares decisions, not connection reuse, so each
   * request opens its own.
   */
  HttpResponse<String> get(String route, String key) throws IOException, InterruptedException {
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build();
    return send(client, route, key);
  }

  HttpResponse<String> send(HttpClient client, String route, String key) throws IOException, InterruptedException {
    return client.send(HttpRequest.newBuilder(base.resolve("/" + route + "/items/1")).timeout(TIMEOUT)
        .header("X-Api-Key", key).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> uncheckedGet(String route, String key) {
    try {
      return get(route, key);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static boolean status(HttpResponse<String> r) {
    assertThat(r.statusCode()).as("status of %s: 200 or 429", r.uri()).isIn(200, 429);
    return r.statusCode() == 200;
  }

  long redisMillis() {
    ReactiveRedisConnectionFactory factory = app.getBean(ReactiveRedisConnectionFactory.class);
    ReactiveRedisConnection connection = factory.getReactiveConnection();
    try {
      return connection.serverCommands().time().block(TIMEOUT);
    } finally {
      connection.close();
    }
  }

  /** {@code key@second:} and Y (admitted) or N (refused) per request, steps separated by spaces. */
  static String render(List<Step> trace, List<Boolean> admitted) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    for (Step step : trace) {
      out.append(out.length() == 0 ? "" : " ").append(step.key()).append('@').append(step.second()).append(':');
      for (int n = 0; n < step.count(); n++) {
        out.append(admitted.get(i++) ? 'Y' : 'N');
      }
    }
    return out.toString();
  }
}
