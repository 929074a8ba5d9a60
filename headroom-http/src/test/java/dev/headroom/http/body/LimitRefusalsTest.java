package dev.headroom.http.body;

import static dev.headroom.http.body.GracefulBoundariesSchemas.REFUSAL;
import static dev.headroom.http.body.GracefulBoundariesSchemas.REFUSAL_429;
import static dev.headroom.http.body.GracefulBoundariesSchemas.violations;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A refused decision becomes one body that is RFC 9457 problem details with a draft-09 problem
 * type (sections 5, 10.2) and a Graceful Boundaries limit-class refusal (sections 2, 3).
 */
class LimitRefusalsTest {

  private static final QuotaPolicy HOURLY = QuotaPolicy.builder("hourly").quota(2).window(Duration.ofHours(1))
      .algorithm(Algorithm.FIXED_WINDOW).partitioning("client-ip").build();
  private static final QuotaPolicy DAILY = QuotaPolicy.builder("daily").quota(1).window(Duration.ofDays(1))
      .algorithm(Algorithm.FIXED_WINDOW).partitioning("api-key").build();
  private static final PolicyTexts WHY = PolicyTexts.builder("Limits keep this free service available for everyone.").build();

  private ManualTicker ticker;
  private QuotaLimiter limiter;

  @BeforeEach
  void setUp() {
    ticker = ManualTicker.atFixedInstant();
    limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
  }

  private Decision refuseHourly() {
    PartitionKey client = PartitionKey.of("ip:203.0.113.7");
    limiter.acquire(HOURLY, client);
    limiter.acquire(HOURLY, client);
    ticker.advance(Duration.ofSeconds(1200));
    Decision d = limiter.acquire(HOURLY, client);
    assertThat(d.allowed()).isFalse();
    return d;
  }

  @Test
  void quotaExceededIsAt429WithEveryMemberOfBothSpecifications() {
    LimitRefusals refusals = LimitRefusals.builder().ticker(ticker).defaults(WHY)
        .texts("hourly", WHY.toBuilder().alternativeEndpoint("/api/result?id=example.com")
            .humanUrl("https://help.example.org/limits").build())
        .build();
    Refusal r = refusals.refusal(refuseHourly());

    assertThat(r.toJson()).isEqualTo("{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
        + "\"title\":\"Quota Exceeded\",\"status\":429,"
        + "\"detail\":\"The limit of 2 requests per hour per client address has been reached. Try again in 2400 seconds.\","
        + "\"error\":\"rate_limit_exceeded\",\"why\":\"Limits keep this free service available for everyone.\","
        + "\"limit\":\"2 requests per hour per client address\",\"retryAfterSeconds\":2400,\"limitId\":\"hourly\","
        + "\"limitType\":\"ip-rate\",\"scope\":\"ip\",\"windowResetAt\":\"2026-01-01T01:00:00Z\","
        + "\"violated-policies\":[\"hourly\"],\"alternativeEndpoint\":\"/api/result?id=example.com\","
        + "\"humanUrl\":\"https://help.example.org/limits\"}");
    assertThat(violations(REFUSAL_429, r.toJson())).isEmpty();
    assertThat(r.isConformant()).isTrue();
  }

  @Test
  void allViolatedPoliciesAreNamedAndTheLongestWaitIsReported_section5_1() {
    PartitionKey key = PartitionKey.of("key:abc");
    limiter.acquire(List.of(Acquisition.of(HOURLY, key), Acquisition.of(DAILY, key)));
    limiter.acquire(HOURLY, key);
    Decision d = limiter.acquire(List.of(Acquisition.of(HOURLY, key), Acquisition.of(DAILY, key)));
    LimitRefusals refusals = LimitRefusals.builder().ticker(ticker).defaults(WHY).build();
    Refusal r = refusals.refusal(d);
    assertThat(r.violatedPolicies()).containsExactly("hourly", "daily");
    assertThat(r.limitId()).contains("daily");
    assertThat(r.limitType()).contains("quota");
    assertThat(r.scope()).contains("key");
    assertThat(r.retryAfterSeconds()).hasValue(86_400);
    assertThat(r.windowResetAt()).contains(Instant.parse("2026-01-02T00:00:00Z"));
  }

  @Test
  void reducedCapacityIs503AndAbnormalUsageIs429_section5_2_and_5_3() {
    LimitRefusals refusals = LimitRefusals.builder().ticker(ticker).defaults(WHY).build();
    Decision d = refuseHourly();
    Refusal reduced = refusals.refusal(d, ProblemType.TEMPORARY_REDUCED_CAPACITY);
    assertThat(reduced.status()).isEqualTo(503);
    assertThat(reduced.type()).contains("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity");
    assertThat(reduced.error()).contains("temporary_reduced_capacity");
    assertThat(violations(REFUSAL, reduced.toJson())).isEmpty();
    Refusal abnormal = refusals.refusal(d, ProblemType.ABNORMAL_USAGE_DETECTED);
    assertThat(abnormal.status()).isEqualTo(429);
    assertThat(abnormal.title()).contains("Abnormal Usage Detected");
    assertThat(violations(REFUSAL_429, abnormal.toJson())).isEmpty();
  }

  @Test
  void aCostLargerThanTheWholeQuotaIs413WithoutRetry() {
    QuotaPolicy bytes = QuotaPolicy.builder("upload").quota(1000).window(Duration.ofMinutes(1))
        .unit(QuotaUnit.CONTENT_BYTES).partitioning("user").build();
    Decision d = limiter.acquire(List.of(Acquisition.of(bytes, PartitionKey.of("user:alice"), 5000)));
    Refusal r = LimitRefusals.builder().ticker(ticker).defaults(WHY).build().refusal(d);
    assertThat(r.status()).isEqualTo(413);
    assertThat(r.retryAfterSeconds()).isEmpty();
    assertThat(r.limitType()).contains("cost-limit");
    assertThat(r.detail().orElseThrow()).contains("5000 content-bytes").contains("1000 bytes per minute per user");
    assertThat(violations(REFUSAL, r.toJson())).isEmpty();
  }

  @Test
  void anAllowedDecisionIsNoRefusal() {
    Decision d = limiter.acquire(HOURLY, PartitionKey.of("ip:1.2.3.4"));
    LimitRefusals refusals = LimitRefusals.builder().ticker(ticker).defaults(WHY).build();
    assertThatThrownBy(() -> refusals.refusal(d)).hasMessageStartingWith("decision: expected a refused decision");
  }

  @Test
  void sameOriginAbsoluteGuidanceNeedsTheOrigin_SC6() {
    PolicyTexts absolute = WHY.toBuilder().cachedResultUrl("https://api.example.com/cache/1").build();
    assertThatThrownBy(() -> LimitRefusals.builder().ticker(ticker).defaults(WHY).texts("hourly", absolute).build())
        .hasMessageContaining("texts for policy 'hourly': cachedResultUrl")
        .hasMessageContaining("SC-6").hasMessageContaining("https://api.example.com/cache/1");
    LimitRefusals ok = LimitRefusals.builder().ticker(ticker).defaults(WHY).texts("hourly", absolute)
        .origin(URI.create("https://api.example.com")).build();
    assertThat(ok.refusal(refuseHourly()).cachedResultUrl()).contains("https://api.example.com/cache/1");
    PolicyTexts elsewhere = WHY.toBuilder().alternativeEndpoint("https://evil.example/api").build();
    assertThatThrownBy(() -> LimitRefusals.builder().ticker(ticker).defaults(WHY).texts("hourly", elsewhere)
        .origin(URI.create("https://api.example.com")).build())
        .hasMessageContaining("alternativeEndpoint").hasMessageContaining("for origin https://api.example.com");
  }

  @Test
  void configurationIsRequired() {
    assertThatThrownBy(() -> LimitRefusals.builder().defaults(WHY).build()).hasMessageStartingWith("ticker: required");
    assertThatThrownBy(() -> LimitRefusals.builder().ticker(ticker).build()).hasMessageStartingWith("defaults: required");
    assertThatThrownBy(() -> LimitRefusals.builder().ticker(ticker).defaults(WHY).origin(URI.create("https://a.example/path")).build())
        .hasMessageContaining("origin: expected an origin");
  }

  @Test
  void limitTextsAreMadeFromThePolicy() {
    assertThat(PolicyTexts.describe(HOURLY)).isEqualTo("2 requests per hour per client address");
    assertThat(PolicyTexts.describe(QuotaPolicy.builder("c").quota(1).window(Duration.ofSeconds(90))
        .unit(QuotaUnit.CONCURRENT_REQUESTS).build())).isEqualTo("1 concurrent request across all callers");
    assertThat(PolicyTexts.window(90)).isEqualTo("90 seconds");
    assertThat(PolicyTexts.window(7200)).isEqualTo("2 hours");
    assertThat(WHY.description(DAILY)).isEqualTo("1 request per day per API key.");
  }
}
