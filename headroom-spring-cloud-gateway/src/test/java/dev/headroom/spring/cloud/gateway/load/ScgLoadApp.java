package dev.headroom.spring.cloud.gateway.load;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

/**
 * The Spring Cloud Gateway application {@code headroom-benchmarks/load/scg-load.sh} measures: one
 * route {@code /**} to the upstream, limited per API key ({@code X-Api-Key}) by a token bucket
 * that never refuses at the load's rate, in one of these configurations (the first argument):
 *
 * <ul>
 * <li>{@code redis-default}: {@code RequestRateLimiter} with Spring Cloud Gateway's
 *   {@code RedisRateLimiter} as its documentation configures it (headers included);</li>
 * <li>{@code redis-best}: the same without its {@code X-RateLimit-*} headers
 *   ({@code spring.cloud.gateway.server.webflux.redis-rate-limiter.include-headers: false}), the least work per
 *   request its documented settings allow;</li>
 * <li>{@code headroom-limiter}: {@code RequestRateLimiter} with {@link
 *   dev.headroom.spring.cloud.gateway.HeadroomRateLimiter} on the Redis store (IETF fields and
 *   Retry-After), the store's connection where the auto-configuration puts it by default;
 *   {@code headroom-limiter-own-loops} and {@code headroom-limiter-server-loops} the same with
 *   {@code headroom.cloud-gateway.store.redis-event-loops} {@code own} and {@code server}.</li>
 * <li>{@code headroom-filter}: the {@code Headroom} filter on the Redis store (fields, Graceful
 *   Boundaries refusals, discovery).</li>
 * <li>{@code none}: the same route with no limiter at all: the ceiling every limiter's throughput
 *   and CPU per request are read against (a limiter at 1.2x another needs the other's own cost to
 *   be at least a sixth of this ceiling's time per request).</li>
 * </ul>
 *
 * <p>Arguments: configuration, port, upstream URL, Redis URI, key prefix. Not a test: started by the
 * script, on the test class path (where the peer, spring-boot-starter-data-redis-reactive, is).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ScgLoadApp {

  /** A token bucket this generous never refuses at the rates a 2-core machine reaches. */
  static final long RATE = 1_000_000;

  @Bean
  KeyResolver apiKeyResolver() {
    return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Api-Key"));
  }

  public static void main(String[] args) {
    if (args.length != 5) {
      throw new IllegalArgumentException("arguments: expected configuration port upstream redis-uri key-prefix, got "
          + args.length);
    }
    String configuration = args[0];
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("server.address", "127.0.0.1");
    p.put("server.port", args[1]);
    p.put("spring.main.banner-mode", "off");
    p.put("logging.level.root", "warn");
    String r = "spring.cloud.gateway.server.webflux.routes[0].";
    p.put(r + "id", "bench");
    p.put(r + "uri", args[2]);
    p.put(r + "predicates[0]", "Path=/**");
    URI redis = URI.create(args[3]);
    p.put("spring.data.redis.host", redis.getHost());
    p.put("spring.data.redis.port", Integer.toString(redis.getPort()));
    if (!configuration.equals("headroom-filter") && !configuration.equals("none")) {
      p.put(r + "filters[0].name", "RequestRateLimiter");
      p.put(r + "filters[0].args.key-resolver", "#{@apiKeyResolver}");
    }
    switch (configuration) {
      case "redis-default", "redis-best" -> {
        p.put("headroom.cloud-gateway.enabled", "false");
        p.put(r + "filters[0].args.redis-rate-limiter.replenishRate", Long.toString(RATE));
        p.put(r + "filters[0].args.redis-rate-limiter.burstCapacity", Long.toString(RATE));
        p.put(r + "filters[0].args.redis-rate-limiter.requestedTokens", "1");
        if (configuration.equals("redis-best")) {
          p.put("spring.cloud.gateway.server.webflux.redis-rate-limiter.include-headers", "false");
        }
      }
      case "headroom-limiter", "headroom-limiter-own-loops", "headroom-limiter-server-loops" -> {
        p.put("headroom.cloud-gateway.store.type", "redis");
        if (!configuration.equals("headroom-limiter")) {
          p.put("headroom.cloud-gateway.store.redis-event-loops",
              configuration.equals("headroom-limiter-own-loops") ? "own" : "server");
        }
        p.put("headroom.cloud-gateway.store.redis-uri", args[3]);
        p.put("headroom.cloud-gateway.store.key-prefix", args[4]);
        p.put(r + "filters[0].args.headroom-rate-limiter.quota", Long.toString(RATE));
        p.put(r + "filters[0].args.headroom-rate-limiter.window", "1s");
        p.put(r + "filters[0].args.headroom-rate-limiter.algorithm", "token-bucket");
      }
      case "headroom-filter" -> {
        p.put("headroom.cloud-gateway.store.type", "redis");
        p.put("headroom.cloud-gateway.store.redis-uri", args[3]);
        p.put("headroom.cloud-gateway.store.key-prefix", args[4]);
        p.put("headroom.cloud-gateway.policies.bench.quota", Long.toString(RATE));
        p.put("headroom.cloud-gateway.policies.bench.window", "1s");
        p.put("headroom.cloud-gateway.policies.bench.algorithm", "token-bucket");
        p.put("headroom.cloud-gateway.policies.bench.partitioning", "api-key");
        p.put(r + "filters[0].name", "Headroom");
        p.put(r + "filters[0].args.policies", "bench");
      }
      case "none" -> p.put("headroom.cloud-gateway.enabled", "false");
      default -> throw new IllegalArgumentException("configuration: expected redis-default, redis-best, "
          + "headroom-limiter, headroom-limiter-own-loops, headroom-limiter-server-loops, headroom-filter or none, got '" + configuration + "'");
    }
    new SpringApplicationBuilder(ScgLoadApp.class).web(WebApplicationType.REACTIVE).properties(p).run();
  }
}
