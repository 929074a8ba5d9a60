package dev.headroom.migration;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BandwidthBuilder.BandwidthBuilderBuildStage;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConfigurationBuilder;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.local.LocalBucketBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * docs/migrating-from-bucket4j.md, checked: one scripted request trace (bursts, idle gaps, refill,
 * two API keys) through bucket4j-spring-boot-starter's configuration ({@code bucket4j-starter.yml})
 * and through Headroom's mapped one ({@code headroom-from-bucket4j.yml}) admits exactly the same
 * requests.
 *
 * <p>The peer is bucket4j's own core: {@code bucket4j.filters[0].rate-limits[0]} is bound with
 * Spring Boot's binder into {@link StarterRateLimit} (the starter's property names and types) and
 * turned into a {@link BucketConfiguration} exactly as the starter's
 * {@code Bucket4JBaseConfiguration.prepareBucket4jConfigurationBuilder} does; one bucket per cache
 * key, created at the key's first request as the starter's proxy manager creates it, on a
 * {@link TimeMeter} the test moves. Headroom's side is a started Spring Boot WebFlux application
 * configured by the {@code headroom.*} properties of the mapped file, on a {@link ManualTicker},
 * asked over HTTP: 200 is an admission, 429 a refusal.
 */
class Bucket4jMigrationTest {

  /** Where both clocks start: aligned to the 2-minute window, as every key's first request is at 0. */
  static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

  /** Generous: on a loaded machine a cold application can take tens of seconds over a request. */
  static final Duration TIMEOUT = Duration.ofMinutes(2);

  /** One step of the trace: at {@code second} after the start, {@code count} requests with {@code key}. */
  record Step(long second, String key, int count) {}

  /**
   * Bursts past the bucket, a refusal between two refills, a token refilled after 10 s, a second
   * key in its own partition, the 2-minute interval bandwidth refusing while the greedy one has
   * tokens (and, being all or nothing, taking none of them), its refill at 120 s, and an idle gap
   * that fills everything.
   */
  static final List<Step> TRACE = List.of(
      new Step(0, "a", 6),     // 5 of the burst, the sixth refused
      new Step(0, "b", 2),
      new Step(5, "a", 1),     // half a token: refused
      new Step(10, "a", 2),    // one token refilled
      new Step(10, "b", 4),    // b's own bucket: 3 left, 1 refilled
      new Step(50, "a", 6),    // 40 s of refill: 4 tokens
      new Step(60, "a", 6),    // one more
      new Step(100, "a", 4),   // 4 refilled, but the 2-minute bandwidth has 1 left
      new Step(119, "a", 1),   // still the same interval: refused
      new Step(120, "a", 3),   // the interval refills 12 at once
      new Step(121, "b", 6),
      new Step(400, "a", 7),   // long idle: full
      new Step(400, "b", 1));

  @Test
  void theTraceIsAdmittedTheSameByBucket4jAndByHeadroomsMappedPolicies() throws Exception {
    StarterRateLimit starter = bindStarter();
    List<Boolean> peer = runBucket4j(starter);
    List<Boolean> headroom = runHeadroom(TRACE);

    assertThat(headroom).as("Headroom's admissions, request by request, against bucket4j's").isEqualTo(peer);
    // the trace is not vacuous: bursts refused, refill admitted, the interval bandwidth binding
    assertThat(render(peer)).isEqualTo(
        "a@0:YYYYYN b@0:YY a@5:N a@10:YN b@10:YYYY a@50:YYYYNN a@60:YNNNNN a@100:YNNN a@119:N a@120:YYY "
            + "b@121:YYYYYN "
            + "a@400:YYYYYNN b@400:Y");
  }

  /**
   * The difference the guide states: bucket4j's interval refill runs from the bucket's first
   * request, Headroom's fixed window from the epoch. A key first seen at 30 s has used 12 of the
   * 2-minute bandwidth by 130 s in bucket4j (its interval ends at 150 s), while Headroom's window
   * started afresh at 120 s.
   */
  @Test
  void anIntervalRefillStartsAtTheFirstRequestWhereAFixedWindowStartsAtTheEpoch() throws Exception {
    List<Step> late = List.of(new Step(30, "a", 5), new Step(80, "a", 5), new Step(130, "a", 3), new Step(150, "a", 1));
    assertThat(render(late, runBucket4j(bindStarter(), late))).isEqualTo("a@30:YYYYY a@80:YYYYY a@130:YYN a@150:Y");
    assertThat(render(late, runHeadroom(late))).isEqualTo("a@30:YYYYY a@80:YYYYY a@130:YYY a@150:Y");
  }

  // ---- the peer

  /** {@code bucket4j.filters[0].rate-limits[0]} bound as the starter binds it. */
  static StarterRateLimit bindStarter() throws Exception {
    Binder binder = new Binder(ConfigurationPropertySources.from(yaml("bucket4j-starter.yml")));
    return binder.bind("bucket4j.filters[0].rate-limits[0]", StarterRateLimit.class)
        .orElseThrow(() -> new AssertionError("bucket4j-starter.yml has no bucket4j.filters[0].rate-limits[0]"));
  }

  static List<Boolean> runBucket4j(StarterRateLimit starter) {
    return runBucket4j(starter, TRACE);
  }

  static List<Boolean> runBucket4j(StarterRateLimit starter, List<Step> trace) {
    BucketConfiguration configuration = starter.bucketConfiguration();
    AtomicLong nanos = new AtomicLong(START.getEpochSecond() * 1_000_000_000L);
    TimeMeter meter = new TimeMeter() {
      @Override
      public long currentTimeNanos() {
        return nanos.get();
      }

      @Override
      public boolean isWallClockBased() {
        return true;
      }
    };
    Map<String, Bucket> buckets = new HashMap<>();
    List<Boolean> admitted = new ArrayList<>();
    for (Step step : trace) {
      nanos.set((START.getEpochSecond() + step.second()) * 1_000_000_000L);
      // the starter's cache key: the url, a dash and the cache-key expression's value
      Bucket bucket = buckets.computeIfAbsent("/api/.*-" + step.key(), k -> {
        LocalBucketBuilder b = Bucket.builder().withCustomTimePrecision(meter);
        for (Bandwidth bw : configuration.getBandwidths()) {
          b.addLimit(bw);
        }
        return b.build();
      });
      for (int i = 0; i < step.count(); i++) {
        admitted.add(bucket.tryConsume(starter.getNumTokens()));
      }
    }
    return admitted;
  }

  // ---- Headroom

  /** A WebFlux application answering every /api/** request, limited by the mapped headroom.* properties. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class Api {
    @Bean
    ManualTicker ticker() {
      return ManualTicker.at(START);
    }

    @Bean
    RouterFunction<ServerResponse> api() {
      return RouterFunctions.route().GET("/api/**", r -> ServerResponse.ok().bodyValue("ok")).build();
    }
  }

  static List<Boolean> runHeadroom(List<Step> trace) throws Exception {
    PropertySource<?> mapped = yaml("headroom-from-bucket4j.yml");
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(Api.class).web(WebApplicationType.REACTIVE)
        .properties("server.address=127.0.0.1", "server.port=0", "server.shutdown=immediate",
            "spring.main.banner-mode=off",
            // this module also carries Spring Cloud Gateway for the other guide's test: off here
            "spring.cloud.gateway.server.webflux.enabled=false", "headroom.cloud-gateway.enabled=false",
            "spring.autoconfigure.exclude=org.springframework.cloud.gateway.config.GatewayRedisAutoConfiguration")
        .initializers(ctx -> ctx.getEnvironment().getPropertySources().addFirst(mapped))
        .run()) {
      URI base = URI.create("http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort());
      ManualTicker ticker = app.getBean(ManualTicker.class);
      // fresh keys per run: the store is in memory, but the keys say which partition is which
      String run = UUID.randomUUID().toString();
      List<Boolean> admitted = new ArrayList<>();
      long at = 0;
      for (Step step : trace) {
        ticker.advance(Duration.ofSeconds(step.second() - at));
        at = step.second();
        for (int i = 0; i < step.count(); i++) {
          // a connection per request, as in SpringCloudGatewayMigrationTest: decisions are compared, not connection reuse
          HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build();
          HttpResponse<String> r = client.send(HttpRequest.newBuilder(base.resolve("/api/items/1")).timeout(TIMEOUT)
              .header("X-Api-Key", step.key() + "-" + run).GET().build(), HttpResponse.BodyHandlers.ofString());
          assertThat(r.statusCode()).as("status of %s's request at %s s: 200 or 429", step.key(), step.second())
              .isIn(200, 429);
          admitted.add(r.statusCode() == 200);
        }
      }
      return admitted;
    }
  }

  // ---- helpers

  static PropertySource<?> yaml(String resource) throws Exception {
    List<PropertySource<?>> sources = new YamlPropertySourceLoader().load(resource, new ClassPathResource(resource));
    assertThat(sources).as(resource).hasSize(1);
    return sources.get(0);
  }

  static String render(List<Boolean> admitted) {
    return render(TRACE, admitted);
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

  /**
   * The starter's {@code RateLimit} properties this guide maps ({@code cache-key}, {@code num-tokens},
   * {@code bandwidths}), with the starter's names and types so that Spring Boot binds the starter's
   * YAML to it as it binds it to the starter's own class.
   */
  public static class StarterRateLimit {
    private String cacheKey = "1";
    private Integer numTokens = 1;
    private List<StarterBandWidth> bandwidths = new ArrayList<>();

    public String getCacheKey() {
      return cacheKey;
    }

    public void setCacheKey(String cacheKey) {
      this.cacheKey = cacheKey;
    }

    public Integer getNumTokens() {
      return numTokens;
    }

    public void setNumTokens(Integer numTokens) {
      this.numTokens = numTokens;
    }

    public List<StarterBandWidth> getBandwidths() {
      return bandwidths;
    }

    public void setBandwidths(List<StarterBandWidth> bandwidths) {
      this.bandwidths = bandwidths;
    }

    /** What {@code Bucket4JBaseConfiguration.prepareBucket4jConfigurationBuilder} builds of them. */
    BucketConfiguration bucketConfiguration() {
      ConfigurationBuilder config = BucketConfiguration.builder();
      for (StarterBandWidth bw : bandwidths) {
        long refillCapacity = bw.getRefillCapacity() != null ? bw.getRefillCapacity() : bw.getCapacity();
        Duration refillPeriod = Duration.of(bw.getTime(), bw.getUnit());
        BandwidthBuilderBuildStage b = switch (bw.getRefillSpeed()) {
          case GREEDY -> Bandwidth.builder().capacity(bw.getCapacity()).refillGreedy(refillCapacity, refillPeriod)
              .id(bw.getId());
          case INTERVAL -> Bandwidth.builder().capacity(bw.getCapacity()).refillIntervally(refillCapacity, refillPeriod)
              .id(bw.getId());
        };
        if (bw.getInitialCapacity() != null) {
          b = b.initialTokens(bw.getInitialCapacity());
        }
        config = config.addLimit(b.build());
      }
      return config.build();
    }
  }

  /** The starter's {@code RefillSpeed}. */
  public enum RefillSpeed { GREEDY, INTERVAL }

  /** The starter's {@code BandWidth} properties. */
  public static class StarterBandWidth {
    private String id;
    private long capacity;
    private Long refillCapacity;
    private long time;
    private ChronoUnit unit;
    private Long initialCapacity;
    private RefillSpeed refillSpeed = RefillSpeed.GREEDY;

    public String getId() {
      return id;
    }

    public void setId(String id) {
      this.id = id;
    }

    public long getCapacity() {
      return capacity;
    }

    public void setCapacity(long capacity) {
      this.capacity = capacity;
    }

    public Long getRefillCapacity() {
      return refillCapacity;
    }

    public void setRefillCapacity(Long refillCapacity) {
      this.refillCapacity = refillCapacity;
    }

    public long getTime() {
      return time;
    }

    public void setTime(long time) {
      this.time = time;
    }

    public ChronoUnit getUnit() {
      return unit;
    }

    public void setUnit(ChronoUnit unit) {
      this.unit = unit;
    }

    public Long getInitialCapacity() {
      return initialCapacity;
    }

    public void setInitialCapacity(Long initialCapacity) {
      this.initialCapacity = initialCapacity;
    }

    public RefillSpeed getRefillSpeed() {
      return refillSpeed;
    }

    public void setRefillSpeed(RefillSpeed refillSpeed) {
      this.refillSpeed = refillSpeed;
    }
  }
}
