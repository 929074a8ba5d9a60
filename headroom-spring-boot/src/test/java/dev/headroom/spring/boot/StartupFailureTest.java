package dev.headroom.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.Store;
import dev.headroom.conformance.RedisProcess;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.redis.RedisStore;
import dev.headroom.redis.RedisUnavailableException;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** Bad headroom.* properties stop startup with a message naming the property, the value and what is expected. */
class StartupFailureTest {

  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(HeadroomAutoConfiguration.class))
      .withPropertyValues("headroom.policies.burst.quota=10", "headroom.policies.burst.window=60s");

  private String failure(String... properties) {
    String[] message = new String[1];
    runner.withPropertyValues(properties).run(ctx -> {
      assertThat(ctx).hasFailed();
      Throwable t = ctx.getStartupFailure();
      HeadroomConfigurationException cause = null;
      for (Throwable c = t; c != null; c = c.getCause()) {
        if (c instanceof HeadroomConfigurationException) {
          cause = (HeadroomConfigurationException) c;
        }
      }
      assertThat(cause).as("a HeadroomConfigurationException in %s", t).isNotNull();
      FailureAnalysis analysis = new HeadroomFailureAnalyzer().analyze(t);
      assertThat(analysis.getDescription()).startsWith("Invalid Headroom configuration: " + cause.getMessage());
      assertThat(analysis.getAction()).contains(cause.property());
      message[0] = cause.getMessage();
    });
    return message[0];
  }

  @Test
  void validConfigurationStarts() {
    runner.withPropertyValues("headroom.routes[0].path=/api/{id}", "headroom.routes[0].policies[0]=burst")
        .run(ctx -> assertThat(ctx).hasNotFailed().hasBean("headroomFilter"));
  }

  @Test
  void everyRuleOfARouteNamesItsOwnProperty() {
    assertThat(failure("headroom.routes[0].path=/api/{id}", "headroom.routes[0].policies[0]=burst",
        "headroom.routes[0].when[other][0]=POST", "headroom.routes[0].count[burst]=sometimes",
        "headroom.routes[0].charge-header=X-Tokens", "headroom.routes[0].pk=plain"))
        .startsWith("4 problems")
        .contains("\n  - headroom.routes[0].count.burst: expected all, failures (responses 400 and up) or "
            + "successes (below 400), got 'sometimes'")
        .contains("\n  - headroom.routes[0].when.other: expected a policy of the route [burst], got 'other'")
        .contains("\n  - headroom.routes[0].max-cost: expected the largest cost a header may state")
        .contains("\n  - headroom.routes[0].pk: expected off, hash or hmac, got 'plain'");
  }

  @Test
  void quotaOutOfRange() {
    assertThat(failure("headroom.policies.burst.quota=0"))
        .isEqualTo("headroom.policies.burst.quota: expected an integer from 1 to " + QuotaPolicy.MAX_QUOTA + ", got '0'");
  }

  @Test
  void missingWindow() {
    assertThat(failure("headroom.policies.daily.quota=5"))
        .isEqualTo("headroom.policies.daily.window: expected a duration of whole seconds such as 60s or 1h, got nothing");
  }

  @Test
  void fractionalWindow() {
    assertThat(failure("headroom.policies.burst.window=1500ms"))
        .startsWith("headroom.policies.burst.window: expected a whole number of seconds").endsWith("got 'PT1.5S'");
  }

  @Test
  void unknownUnit() {
    assertThat(failure("headroom.policies.burst.unit=bytes"))
        .isEqualTo("headroom.policies.burst.unit: expected requests, content-bytes or concurrent-requests, got 'bytes'");
  }

  @Test
  void unknownAlgorithm() {
    assertThat(failure("headroom.policies.burst.algorithm=leaky"))
        .isEqualTo("headroom.policies.burst.algorithm: expected fixed-window, sliding-window, token-bucket or concurrency, got 'leaky'");
  }

  @Test
  void unknownPartitioning() {
    assertThat(failure("headroom.policies.burst.partitioning=cookie"))
        .startsWith("headroom.policies.burst.partitioning: expected components client-ip, api-key").endsWith("got 'cookie'");
  }

  @Test
  void unknownDialect() {
    assertThat(failure("headroom.dialects=ietf,draft-99"))
        .isEqualTo("headroom.dialects[1]: expected one of ietf (draft-10, draft-11), ietf-next (the editor's draft "
            + "after draft-11), draft-09 (draft-08, draft-09), draft-07, draft-06 (draft-04 to draft-06), "
            + "draft-03 (draft-00 to draft-03, draft-polli-02), x-ratelimit, got 'draft-99'");
  }

  @Test
  void dialectsThatCannotBeSentTogether() {
    assertThat(failure("headroom.dialects=ietf,draft-07"))
        .startsWith("headroom.dialects: expected dialects that can be sent together").contains("RateLimit");
  }

  @Test
  void routeNamingAnUnknownPolicy() {
    assertThat(failure("headroom.routes[0].path=/api/{id}", "headroom.routes[0].policies[0]=brust"))
        .isEqualTo("headroom.routes[0].policies[0]: expected the name of a policy of headroom.policies [burst], got 'brust'");
  }

  @Test
  void routeWithoutPath() {
    assertThat(failure("headroom.routes[0].policies[0]=burst"))
        .isEqualTo("headroom.routes[0].path: expected a path template such as /api/items/{id}, got nothing");
  }

  @Test
  void storeTypeRedisWithoutTheModule() {
    WebApplicationContextRunner withoutRedis = runner.withClassLoader(
        new FilteredClassLoader("dev.headroom.redis"));
    withoutRedis.withPropertyValues("headroom.store.type=redis").run(ctx -> {
      assertThat(ctx).hasFailed();
      Throwable t = ctx.getStartupFailure();
      while (!(t instanceof HeadroomConfigurationException) && t.getCause() != null) {
        t = t.getCause();
      }
      assertThat(t.getMessage()).startsWith("headroom.store.type: expected in-memory, or a Store bean")
          .contains("headroom-redis").endsWith("got 'redis'");
    });
  }

  @Test
  void storeTypeRedisUsesTheRedisStore() {
    runner.withPropertyValues("headroom.store.type=redis", "headroom.store.redis-uri=redis://127.0.0.1:6379",
        "headroom.routes[0].path=/api/{id}", "headroom.routes[0].policies[0]=burst").run(ctx -> {
          assertThat(ctx).hasNotFailed();
          Store store = ctx.getBean(Store.class);
          assertThat(store).isInstanceOf(RedisStore.class);
          QuotaPolicy burst = ctx.getBean(HeadroomAutoConfiguration.HeadroomPolicies.class).byName().get("burst");
          PartitionKey key = PartitionKey.of("spring-boot-test-" + UUID.randomUUID());
          assertThat(QuotaLimiter.of(store).acquire(burst, key).outcomes().get(0).remaining()).isEqualTo(9);
        });
  }

  @Test
  void refusalMemoryOutOfRange() {
    assertThat(failure("headroom.store.type=redis", "headroom.store.refusal-memory=2h"))
        .startsWith("headroom.store.refusal-memory: expected a duration from 0 (every request to Redis) to 1h")
        .endsWith("got 'PT2H'");
    runner.withPropertyValues("headroom.store.type=redis", "headroom.store.refusal-memory=0",
        "headroom.routes[0].path=/api/{id}", "headroom.routes[0].policies[0]=burst").run(ctx ->
          assertThat(ctx).hasNotFailed().getBean(Store.class).isInstanceOf(RedisStore.class));
  }

  /**
   * {@code headroom.store.replica-acknowledgements} reaches the Redis store: the shared Redis has
   * fewer than 100 replicas, so the admission is unacknowledged and surfaces as a store failure
   * (on-failure decides), counted by the store. Bad values name the property.
   */
  @Test
  void replicaAcknowledgementsReachTheRedisStore() throws Exception {
    // A Redis of the test's own, at hz 100: Redis ends a WAIT at its timeout only when its event
    // loop next wakes, which on an idle server at the default hz 10 is up to 100 ms later (a
    // WAIT 100 20 measured 70 to 80 ms), past the starter's 100 ms decision deadline.
    try (RedisProcess redis = RedisProcess.launch("--hz", "100")) {
      replicaAcknowledgementsReachTheRedisStore(redis.uri());
    }
  }

  private void replicaAcknowledgementsReachTheRedisStore(String uri) {
    runner.withPropertyValues("headroom.store.type=redis", "headroom.store.redis-uri=" + uri,
        "headroom.store.replica-acknowledgements.replicas=100",
        "headroom.store.replica-acknowledgements.timeout=20ms",
        "headroom.routes[0].path=/api/{id}", "headroom.routes[0].policies[0]=burst").run(ctx -> {
          assertThat(ctx).hasNotFailed();
          RedisStore store = (RedisStore) ctx.getBean(Store.class);
          QuotaPolicy burst = ctx.getBean(HeadroomAutoConfiguration.HeadroomPolicies.class).byName().get("burst");
          PartitionKey key = PartitionKey.of("spring-boot-test-" + UUID.randomUUID());
          // The first decisions of a new store may miss the fixed 100 ms deadline on a loaded
          // machine (connecting, loading the function) before WAIT's shortfall can answer: a
          // few tries, until the failure is the shortfall's.
          Throwable failure = null;
          for (int attempt = 0; attempt < 10; attempt++) {
            failure = org.assertj.core.api.Assertions.catchThrowable(() -> QuotaLimiter.of(store).acquire(burst, key));
            if (failure == null || String.valueOf(failure.getMessage()).contains("replicaAcknowledgements")) {
              break;
            }
          }
          assertThat(failure).isInstanceOf(RedisUnavailableException.class).hasMessageContaining("replicaAcknowledgements");
          assertThat(store.replicaUnacknowledged()).isPositive();
        });
    assertThat(failure("headroom.store.type=redis", "headroom.store.replica-acknowledgements.replicas=0"))
        .isEqualTo("headroom.store.replica-acknowledgements.replicas: expected an integer from 1 to 100, got '0'");
    assertThat(failure("headroom.store.type=redis", "headroom.store.replica-acknowledgements.replicas=1",
        "headroom.store.replica-acknowledgements.timeout=100ms"))
        .startsWith("headroom.store.replica-acknowledgements.timeout: expected a duration from 1ms to less than the "
            + "decision deadline (100ms)").endsWith("got 'PT0.1S'");
  }

  /**
   * {@code headroom.store.decision-deadline} reaches the Redis store: a replica acknowledgement's
   * 150ms wait, refused under the default 100ms deadline, is taken under a 300ms one (the store's
   * builder refuses a wait not shorter than its deadline, so the deadline it was given is 300ms).
   */
  @Test
  void decisionDeadlineReachesTheRedisStore() {
    assertThat(failure("headroom.store.type=redis", "headroom.store.decision-deadline=2m"))
        .startsWith("headroom.store.decision-deadline: expected a duration from 1ms to 1m").endsWith("got 'PT2M'");
    assertThat(failure("headroom.store.type=redis", "headroom.store.decision-deadline=0ms"))
        .startsWith("headroom.store.decision-deadline: expected a duration from 1ms to 1m").endsWith("got 'PT0S'");
    assertThat(failure("headroom.store.type=redis", "headroom.store.replica-acknowledgements.replicas=1",
        "headroom.store.replica-acknowledgements.timeout=150ms"))
        .startsWith("headroom.store.replica-acknowledgements.timeout: expected a duration from 1ms to less than the "
            + "decision deadline (100ms)");
    runner.withPropertyValues("headroom.store.type=redis", "headroom.store.decision-deadline=300ms",
        "headroom.store.replica-acknowledgements.replicas=1", "headroom.store.replica-acknowledgements.timeout=150ms",
        "headroom.routes[0].path=/api/{id}", "headroom.routes[0].policies[0]=burst").run(ctx ->
          assertThat(ctx).hasNotFailed().getBean(Store.class).isInstanceOf(RedisStore.class));
  }

  @Test
  void badRedisUri() {
    assertThat(failure("headroom.store.type=redis", "headroom.store.redis-uri=http://nowhere"))
        .startsWith("headroom.store.redis-uri: expected a Redis URI").endsWith("got 'http://nowhere'");
  }

  @Test
  void unknownStoreType() {
    assertThat(failure("headroom.store.type=memcached"))
        .isEqualTo("headroom.store.type: expected in-memory or redis, got 'memcached'");
  }

  @Test
  void unknownFailureMode() {
    assertThat(failure("headroom.store.on-failure=maybe"))
        .isEqualTo("headroom.store.on-failure: expected allow or refuse, got 'maybe'");
  }

  @Test
  void whyThatRestatesTheError() {
    assertThat(failure("headroom.why=Rate limit exceeded")).startsWith("headroom.why: expected one sentence saying why");
  }

  @Test
  void jitterOfFractionalSeconds() {
    assertThat(failure("headroom.headers.jitter=1500ms"))
        .isEqualTo("headroom.headers.jitter: expected a whole number of seconds from 0s to 1h, such as 5s, got 'PT1.5S'");
  }

  @Test
  void jitterBeyondAnHour() {
    assertThat(failure("headroom.headers.jitter=2h"))
        .isEqualTo("headroom.headers.jitter: expected a whole number of seconds from 0s to 1h, such as 5s, got 'PT2H'");
  }

  @Test
  void negativeJitter() {
    assertThat(failure("headroom.headers.jitter=-5s"))
        .isEqualTo("headroom.headers.jitter: expected a whole number of seconds from 0s to 1h, such as 5s, got 'PT-5S'");
  }

  @Test
  void nearExhaustionOutsideAShare() {
    assertThat(failure("headroom.headers.only-near-exhaustion=1.5"))
        .isEqualTo("headroom.headers.only-near-exhaustion: expected a share above 0 and at most 1, such as 0.8, got '1.5'");
  }

  @Test
  void badTrustedProxy() {
    assertThat(failure("headroom.client-ip.trusted-proxies=10.0.0.0/33"))
        .startsWith("headroom.client-ip.trusted-proxies[0]: expected a CIDR range").endsWith("got '10.0.0.0/33'");
  }

  @Test
  void everyProblemIsReportedAtOnceEachNamingItsProperty() {
    assertThat(failure("headroom.policies.burst.quota=0", "headroom.policies.burst.unit=bytes",
        "headroom.dialects=draft-99", "headroom.store.on-failure=maybe"))
        .isEqualTo("4 problems"
            + "\n  - headroom.policies.burst.quota: expected an integer from 1 to " + QuotaPolicy.MAX_QUOTA
            + ", got '0'"
            + "\n  - headroom.policies.burst.unit: expected requests, content-bytes or concurrent-requests, got 'bytes'"
            + "\n  - headroom.dialects[0]: expected one of " + HeaderDialect.NAMES
            + ", got 'draft-99'"
            + "\n  - headroom.store.on-failure: expected allow or refuse, got 'maybe'");
  }

  @Test
  void textsEscalationsAndAllowListsNameTheirOwnProperty_gracefulBoundaries_sc6() {
    assertThat(failure("headroom.service.origin=https://api.example.com",
        "headroom.policies.burst.alternative-endpoint=https://elsewhere.example/items",
        "headroom.policies.burst.escalation-threshold=3", "headroom.policies.burst.escalation-block=1500ms",
        "headroom.policies.burst.allow.api-keys=my-raw-key"))
        .startsWith("3 problems")
        .contains("\n  - headroom.policies.burst.alternative-endpoint: expected a relative path or a URL on the "
            + "service's origin (Graceful Boundaries SC-6")
        .contains("\n  - headroom.policies.burst.escalation-block: expected a whole number of seconds, at least 1s, "
            + "got 'PT1.5S'")
        .contains("\n  - headroom.policies.burst.allow.api-keys[0]: expected the SHA-256 hex digest of a key")
        .doesNotContain("my-raw-key");
  }

  @Test
  void rateLimitedNamingAnUnknownPolicy() {
    runner.withConfiguration(AutoConfigurations.of(BootLine.WEB_MVC_AUTO_CONFIGURATION))
        .withUserConfiguration(BadController.class).run(ctx -> {
          assertThat(ctx).hasFailed();
          Throwable t = ctx.getStartupFailure();
          while (!(t instanceof HeadroomConfigurationException) && t.getCause() != null) {
            t = t.getCause();
          }
          assertThat(t.getMessage()).isEqualTo("@RateLimited on Controller.get: expected the name of a policy of "
              + "headroom.policies [burst], got 'missing'");
        });
  }

  @Configuration(proxyBeanMethods = false)
  static class BadController {
    @Bean
    Controller controller() {
      return new Controller();
    }
  }

  @RestController
  static class Controller {
    @GetMapping("/x")
    @RateLimited("missing")
    String get() {
      return "x";
    }
  }
}
