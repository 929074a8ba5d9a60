package dev.headroom.http.headers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.PolicyOutcome;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.headers.Diagnostic.Severity;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Emitting every dialect from a core {@link Decision}, and the server rules of draft-09 sections 6 and 8. */
class RateLimitHeadersTest {

  static final Instant NOW = Instant.parse("2025-03-04T12:00:00Z");
  static final long S = 1_000_000_000L;

  static final QuotaPolicy BURST = QuotaPolicy.builder("burst").quota(100).window(Duration.ofSeconds(60)).build();
  static final QuotaPolicy DAILY = QuotaPolicy.builder("daily").quota(1000).window(Duration.ofDays(1))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  static final QuotaPolicy BYTES = QuotaPolicy.builder("peruser").quota(65535).unit(QuotaUnit.CONTENT_BYTES)
      .window(Duration.ofSeconds(10)).algorithm(Algorithm.FIXED_WINDOW).build();
  static final QuotaPolicy HOURLY = QuotaPolicy.builder("hourly").quota(10).window(Duration.ofHours(1))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  static final PartitionKey KEY = PartitionKey.of("198.51.100.7");

  static PolicyOutcome allowed(QuotaPolicy p, long r, long tSeconds) {
    return new PolicyOutcome(p, KEY, 1, true, r, tSeconds * S, 0, null);
  }

  static PolicyOutcome refused(QuotaPolicy p, long tSeconds, long retryAfterSeconds) {
    return new PolicyOutcome(p, KEY, 1, false, 0, tSeconds * S, retryAfterSeconds * S, null);
  }

  static Map<String, List<String>> write(RateLimitHeaders h, Decision d, int status) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    h.write(d, status, (n, v) -> out.computeIfAbsent(n, k -> new ArrayList<>()).add(v));
    return out;
  }

  @Test
  void ietfListsEveryPolicyWithUnitAndPartitionKey_draft09s3s4() {
    PartitionKeyExposure pk = (policy, key) -> policy == BYTES
        ? Optional.of("App-999".getBytes(StandardCharsets.US_ASCII)) : Optional.empty();
    RateLimitHeaders h = RateLimitHeaders.builder().exposure(pk).build();
    Map<String, List<String>> out = write(h, Decision.of(List.of(allowed(BURST, 50, 30), allowed(BYTES, 300, 6))), 200);
    assertThat(out).containsExactly(
        Map.entry("RateLimit-Policy", List.of("\"burst\";q=100;w=60, \"peruser\";q=65535;qu=\"content-bytes\";w=10;pk=:QXBwLTk5OQ==:")),
        Map.entry("RateLimit", List.of("\"burst\";r=50;t=30, \"peruser\";r=300;t=6;pk=:QXBwLTk5OQ==:")));
  }

  @Test
  void draft07WritesTheDictionaryOfTheMostConstrainingPolicy_gracefulBoundariesS4() {
    RateLimitHeaders h = RateLimitHeaders.builder().dialects(HeaderDialect.DRAFT_07).build();
    Map<String, List<String>> out = write(h, Decision.of(List.of(allowed(HOURLY, 7, 2400))), 200);
    assertThat(out).containsExactly(
        Map.entry("RateLimit", List.of("limit=10, remaining=7, reset=2400")),
        Map.entry("RateLimit-Policy", List.of("10;w=3600")));
  }

  @Test
  void draft06SplitsPoliciesIntoRateLimitPolicy() {
    RateLimitHeaders h = RateLimitHeaders.builder().dialects(HeaderDialect.DRAFT_06).build();
    Map<String, List<String>> out = write(h, Decision.of(List.of(allowed(BURST, 90, 30), allowed(DAILY, 100, 36000))), 200);
    assertThat(out).containsExactly(
        Map.entry("RateLimit-Limit", List.of("1000")),
        Map.entry("RateLimit-Remaining", List.of("100")),
        Map.entry("RateLimit-Reset", List.of("36000")),
        Map.entry("RateLimit-Policy", List.of("100;w=60, 1000;w=86400")));
  }

  @Test
  void draft03PutsExpiringLimitThenQuotaPolicies_draftPolli02s3_1() {
    RateLimitHeaders h = RateLimitHeaders.builder().dialects(HeaderDialect.DRAFT_03).build();
    Map<String, List<String>> out = write(h, Decision.of(List.of(allowed(BURST, 90, 30), allowed(DAILY, 100, 36000))), 200);
    assertThat(out).containsExactly(
        Map.entry("RateLimit-Limit", List.of("1000, 100;w=60, 1000;w=86400")),
        Map.entry("RateLimit-Remaining", List.of("100")),
        Map.entry("RateLimit-Reset", List.of("36000")));
  }

  @Test
  void xRateLimitResetAsDeltaOrEpochSecondsFromTheTicker() {
    Decision d = Decision.of(List.of(allowed(BURST, 42, 17)));
    RateLimitHeaders delta = RateLimitHeaders.builder().dialects(HeaderDialect.IETF, HeaderDialect.X_RATELIMIT).build();
    assertThat(write(delta, d, 200)).containsEntry("X-RateLimit-Limit", List.of("100"))
        .containsEntry("X-RateLimit-Remaining", List.of("42")).containsEntry("X-RateLimit-Reset", List.of("17"))
        .containsKey("RateLimit");
    ManualTicker ticker = ManualTicker.at(NOW);
    RateLimitHeaders epoch = RateLimitHeaders.builder().dialects(HeaderDialect.X_RATELIMIT)
        .xRateLimitReset(RateLimitHeaders.XRateLimitReset.EPOCH_SECONDS).ticker(ticker).build();
    assertThat(write(epoch, d, 200)).containsEntry("X-RateLimit-Reset", List.of(Long.toString(NOW.getEpochSecond() + 17)));
    ticker.advance(Duration.ofSeconds(100));
    assertThat(write(epoch, d, 200)).containsEntry("X-RateLimit-Reset", List.of(Long.toString(NOW.getEpochSecond() + 117)));
  }

  @Test
  void collidingDialectsAreRefusedNamingTheField() {
    assertThatThrownBy(() -> RateLimitHeaders.builder().dialects(HeaderDialect.IETF, HeaderDialect.DRAFT_07).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ietf and draft-07 both write RateLimit");
    assertThatThrownBy(() -> RateLimitHeaders.builder().dialects(HeaderDialect.DRAFT_03, HeaderDialect.DRAFT_06).build())
        .hasMessageContaining("RateLimit-Limit");
    assertThatThrownBy(() -> RateLimitHeaders.builder().dialects(HeaderDialect.IETF, HeaderDialect.DRAFT_06).build())
        .hasMessageContaining("RateLimit-Policy");
    assertThat(RateLimitHeaders.builder().dialects(HeaderDialect.IETF, HeaderDialect.X_RATELIMIT).build().dialects())
        .containsExactly(HeaderDialect.IETF, HeaderDialect.X_RATELIMIT);
    assertThat(RateLimitHeaders.builder().dialects(HeaderDialect.IETF, HeaderDialect.DRAFT_03).build().dialects())
        .containsExactly(HeaderDialect.IETF, HeaderDialect.DRAFT_03);
  }

  @Test
  void refusalWritesRetryAfterAndTheViolatedPolicysResetIsTheSameMoment_draft09s6() {
    RateLimitHeaders h = RateLimitHeaders.builder().build();
    Decision d = Decision.of(List.of(allowed(BURST, 80, 10), refused(HOURLY, 3000, 1200)));
    Map<String, List<String>> out = new LinkedHashMap<>();
    Optional<Duration> ra = h.write(d, 429, (n, v) -> out.computeIfAbsent(n, k -> new ArrayList<>()).add(v));
    assertThat(ra).contains(Duration.ofSeconds(1200));
    assertThat(out).containsEntry("Retry-After", List.of("1200"))
        .containsEntry("RateLimit", List.of("\"burst\";r=80;t=10, \"hourly\";r=0;t=1200"));
    RateLimitFields parsed = RateLimitFields.parse(out, NOW);
    assertThat(parsed.diagnostics()).filteredOn(x -> x.kind() == Diagnostic.Kind.RESET_DISAGREES_WITH_RETRY_AFTER)
        .extracting(Diagnostic::detail).allMatch(detail -> detail.startsWith("'burst'"));
  }

  @Test
  void jitterIsOneSeededDrawAddedToEveryResetAndToRetryAfter_draft09s8_5() {
    Decision d = Decision.of(List.of(allowed(BURST, 80, 10), refused(HOURLY, 3000, 1200)));
    for (long seed = 0; seed < 50; seed++) {
      RateLimitHeaders h = RateLimitHeaders.builder().jitter(Duration.ofSeconds(30), new SplittableRandom(seed)).build();
      Map<String, List<String>> out = write(h, d, 429);
      RateLimitFields f = RateLimitFields.parse(out, NOW);
      long retry = f.retryAfter().orElseThrow().delaySeconds();
      assertThat(retry).isBetween(1200L, 1230L);
      long jitter = retry - 1200;
      assertThat(f.limits().get(0).reset()).contains(Duration.ofSeconds(10 + jitter));
      assertThat(f.limits().get(1).reset()).contains(Duration.ofSeconds(retry));
      RateLimitHeaders again = RateLimitHeaders.builder().jitter(Duration.ofSeconds(30), new SplittableRandom(seed)).build();
      assertThat(write(again, d, 429)).isEqualTo(out);
    }
  }

  @Test
  void remainingToResetRatioIsCappedForLongWindows_draft09s8_5() {
    QuotaPolicy some = QuotaPolicy.builder("somepolicy").quota(10000).window(Duration.ofSeconds(1000))
        .algorithm(Algorithm.FIXED_WINDOW).build();
    RateLimitHeaders h = RateLimitHeaders.builder().capRemainingToResetRatio(1.0, Duration.ofMinutes(5)).build();
    // The draft's example: r=10000 with t=10 suggests 1000 units/s against a nominal 10/s.
    assertThat(write(h, Decision.of(List.of(allowed(some, 10000, 10))), 200))
        .containsEntry("RateLimit", List.of("\"somepolicy\";r=100;t=10"));
    // Within the nominal throughput nothing changes; short windows are left alone.
    assertThat(write(h, Decision.of(List.of(allowed(some, 50, 10))), 200))
        .containsEntry("RateLimit", List.of("\"somepolicy\";r=50;t=10"));
    assertThat(write(h, Decision.of(List.of(allowed(BURST, 100, 1))), 200))
        .containsEntry("RateLimit", List.of("\"burst\";r=100;t=1"));
    // A remaining unit is never hidden completely.
    assertThat(write(h, Decision.of(List.of(allowed(some, 10000, 0))), 200))
        .containsEntry("RateLimit", List.of("\"somepolicy\";r=10000;t=0"));
  }

  @Test
  void onlyNearExhaustionWritesNothingWhileThereIsHeadroom_draft09s6_2() {
    RateLimitHeaders h = RateLimitHeaders.builder().onlyNearExhaustion(0.8).build();
    assertThat(write(h, Decision.of(List.of(allowed(BURST, 50, 30))), 200)).isEmpty();
    assertThat(write(h, Decision.of(List.of(allowed(BURST, 50, 30), allowed(HOURLY, 1, 30))), 200)).containsKey("RateLimit");
    assertThat(write(h, Decision.of(List.of(refused(BURST, 30, 2))), 429)).containsKeys("Retry-After", "RateLimit");
  }

  @Test
  void redirectsCanGoWithoutTheFields_draft09s6() {
    RateLimitHeaders h = RateLimitHeaders.builder().omitOnRedirect(true).build();
    Decision d = Decision.of(List.of(allowed(BURST, 0, 10)));
    assertThat(write(h, d, 301)).isEmpty();
    assertThat(write(h, d, 200)).containsKey("RateLimit");
    assertThat(write(RateLimitHeaders.builder().build(), d, 301)).containsKey("RateLimit");
  }

  @Test
  void retryAfterCanBeLeftToTheCaller() {
    RateLimitHeaders h = RateLimitHeaders.builder().retryAfter(false).build();
    Map<String, List<String>> out = new LinkedHashMap<>();
    Optional<Duration> ra = h.write(Decision.of(List.of(refused(BURST, 30, 2))), 429,
        (n, v) -> out.computeIfAbsent(n, k -> new ArrayList<>()).add(v));
    assertThat(ra).contains(Duration.ofSeconds(2));
    assertThat(out).doesNotContainKey("Retry-After").containsEntry("RateLimit", List.of("\"burst\";r=0;t=2"));
  }

  @Test
  void builderMessagesNameFieldValueAndExpectation() {
    assertThatThrownBy(() -> RateLimitHeaders.builder().jitter(Duration.ofSeconds(-1)))
        .hasMessage("jitter: expected a whole number of seconds from 0 to 3600, got PT-1S");
    assertThatThrownBy(() -> RateLimitHeaders.builder().onlyNearExhaustion(1.5))
        .hasMessage("onlyNearExhaustion.threshold: expected a share above 0 and at most 1, got 1.5");
    assertThatThrownBy(() -> RateLimitHeaders.builder().capRemainingToResetRatio(0.5, Duration.ZERO))
        .hasMessageStartingWith("capRemainingToResetRatio.factor: expected a finite number of at least 1");
    assertThatThrownBy(() -> RateLimitHeaders.builder().dialects(List.of()))
        .hasMessageStartingWith("dialects: expected at least one of ietf");
    assertThatThrownBy(() -> HeaderDialect.fromToken("draft-12"))
        .hasMessageEndingWith("got 'draft-12'");
    assertThat(HeaderDialect.fromToken("draft-09")).isEqualTo(HeaderDialect.DRAFT_09);
    assertThat(HeaderDialect.fromToken("draft-08")).isEqualTo(HeaderDialect.DRAFT_09);
    assertThat(HeaderDialect.fromToken("draft-10")).isEqualTo(HeaderDialect.IETF);
    assertThat(HeaderDialect.fromToken("draft-11")).isEqualTo(HeaderDialect.IETF);
    assertThat(HeaderDialect.fromToken("ietf-next")).isEqualTo(HeaderDialect.IETF_NEXT);
    assertThat(HeaderDialect.fromToken("draft-05")).isEqualTo(HeaderDialect.DRAFT_06);
  }

  @ParameterizedTest
  @EnumSource(HeaderDialect.class)
  void everyDialectsOutputParsesBackToTheSameNumbers(HeaderDialect dialect) {
    RateLimitHeaders h = RateLimitHeaders.builder().dialects(dialect).policies(List.of(BURST, DAILY)).build();
    Map<String, List<String>> out = write(h, Decision.of(List.of(allowed(BURST, 90, 30), allowed(DAILY, 100, 36000))), 200);
    RateLimitFields f = RateLimitFields.parse(out, NOW);
    assertThat(f.diagnostics()).noneMatch(x -> x.severity() == Severity.ERROR);
    // The wire does not tell draft-09 from draft-10 (only t's meaning changed).
    assertThat(f.dialects()).containsExactly(dialect == HeaderDialect.DRAFT_09 ? HeaderDialect.IETF : dialect);
    ServiceLimitItem daily = f.limits().get(dialect.namesPolicies() ? 1 : 0);
    assertThat(daily.remaining()).hasValue(100);
    assertThat(daily.reset()).contains(Duration.ofSeconds(36000));
  }
}
