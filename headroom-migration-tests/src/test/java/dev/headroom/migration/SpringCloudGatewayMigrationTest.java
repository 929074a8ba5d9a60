package dev.headroom.migration;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.headroom.ManualTicker;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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
 * the route itself over HTTP, each step placed early in a Redis second and bracketed by two
 * {@code TIME} readings. Headroom's routes are asked over HTTP on a {@link ManualTicker} standing
 * at the trace's second.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpringCloudGatewayMigrationTest {

  static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
  static final Duration TIMEOUT = Duration.ofSeconds(30);

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
      new Step(30, "b", 8));

  /** What the peer admits of TRACE, worked out by hand from its script (the test's own check of the trace). */
  static final Map<String, String> EXPECTED = Map.of(
      "peer-burst", "a@0:YYYYYYNN b@0:YYY a@1:YYN a@2:Y b@3:YYYY a@6:YYYYYYNN a@7:YY a@10:Y a@30:YYYYYYNN b@30:YYYYYYNN",
      "peer-costly", "a@0:YYNNNNNN b@0:YYN a@1:NNN a@2:Y b@3:YNNN a@6:YYNNNNNN a@7:NN a@10:Y a@30:YYNNNNNN b@30:YYNNNNNN");

  /** The real-time trace: short, since each second is a real one. */
  static final List<Step> REAL_TIME_TRACE = List.of(
      new Step(0, "a", 8),
      new Step(0, "b", 3),
      new Step(1, "a", 3),
      new Step(2, "a", 1),
      new Step(3, "b", 4),
      new Step(6, "a", 8));

  /** Attempts of the real-time trace before a machine too slow to keep a step inside its second fails it. */
  static final int REAL_TIME_ATTEMPTS = 3;

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

  HttpServer upstream;
  ConfigurableApplicationContext app;
  URI base;
  final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

  @BeforeAll
  void start() throws Exception {
    upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    upstream.createContext("/", exchange -> {
      byte[] ok = "ok".getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, ok.length);
      exchange.getResponseBody().write(ok);
      exchange.close();
    });
    upstream.start();
    List<PropertySource<?>> routes = new YamlPropertySourceLoader()
        .load("spring-cloud-gateway-routes.yml", new ClassPathResource("spring-cloud-gateway-routes.yml"));
    app = new SpringApplicationBuilder(Gateway.class).web(WebApplicationType.REACTIVE)
        .properties("server.address=127.0.0.1", "server.port=0", "server.shutdown=immediate",
            "spring.main.banner-mode=off",
            "spring.data.redis.host=127.0.0.1", "spring.data.redis.port=6379",
            "migration.upstream=http://127.0.0.1:" + upstream.getAddress().getPort(),
            // this module also carries the Spring Boot starter for the other guide's test: off here
            "headroom.enabled=false")
        .initializers(ctx -> ctx.getEnvironment().getPropertySources().addFirst(routes.get(0)))
        .run();
    base = URI.create("http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort());
    // one request per peer route binds its arguments (RedisRateLimiter reads them per route)
    for (String peer : MAPPINGS.keySet()) {
      assertThat(get(peer, "warm-up-" + UUID.randomUUID()).statusCode()).as(peer).isEqualTo(200);
    }
  }

  @AfterAll
  void stop() {
    if (app != null) {
      app.close();
    }
    if (upstream != null) {
      upstream.stop(0);
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
    Map<String, List<Boolean>> peerAdmitted = null;
    List<String> slips = new ArrayList<>();
    for (int attempt = 1; attempt <= REAL_TIME_ATTEMPTS && peerAdmitted == null; attempt++) {
      peerAdmitted = peerInRealTime(slips);
    }
    assertThat(peerAdmitted)
        .as("a run of the real-time trace whose every step stayed in its Redis second; slips: %s", slips).isNotNull();
    for (String peerRoute : MAPPINGS.keySet()) {
      String peer = render(REAL_TIME_TRACE, peerAdmitted.get(peerRoute));
      assertThat(EXPECTED.get(peerRoute)).as("the real-time trace is the exact trace's beginning").startsWith(peer);
      for (String headroomRoute : MAPPINGS.get(peerRoute)) {
        assertThat(render(REAL_TIME_TRACE, headroom(headroomRoute, REAL_TIME_TRACE)))
            .as("Headroom's route %s, mapped from %s", headroomRoute, peerRoute).isEqualTo(peer);
      }
    }
  }

  /**
   * REAL_TIME_TRACE through every peer route over HTTP, each step 100 ms into the Redis second it
   * is planned for; null (and a note in {@code slips}) when a step's requests did not all fall in
   * that second, as read from Redis {@code TIME} before and after them.
   */
  Map<String, List<Boolean>> peerInRealTime(List<String> slips) throws Exception {
    String run = UUID.randomUUID().toString();
    Map<String, List<Boolean>> admitted = new LinkedHashMap<>();
    MAPPINGS.keySet().forEach(r -> admitted.put(r, new ArrayList<>()));
    long first = redisMillis() / 1000 + 1;
    for (Step step : REAL_TIME_TRACE) {
      long second = first + step.second();
      long wait = second * 1000 + 100 - redisMillis();
      if (wait > 0) {
        Thread.sleep(wait);
      }
      long before = redisMillis() / 1000;
      for (String peerRoute : MAPPINGS.keySet()) {
        for (int i = 0; i < step.count(); i++) {
          admitted.get(peerRoute).add(status(get(peerRoute, step.key() + "-" + run)));
        }
      }
      long after = redisMillis() / 1000;
      if (before != second || after != second) {
        slips.add("step at " + step.second() + " s ran from second " + (before - first) + " to " + (after - first));
        return null;
      }
    }
    return admitted;
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

  HttpResponse<String> get(String route, String key) throws IOException, InterruptedException {
    return client.send(HttpRequest.newBuilder(base.resolve("/" + route + "/items/1")).timeout(TIMEOUT)
        .header("X-Api-Key", key).GET().build(), HttpResponse.BodyHandlers.ofString());
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
