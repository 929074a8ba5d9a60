package dev.headroom.http.headers;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.Decision;
import dev.headroom.InMemoryStore;
import dev.headroom.ManualTicker;
import dev.headroom.PartitionKey;
import dev.headroom.Partitioning;
import dev.headroom.QuotaLimiter;
import dev.headroom.QuotaPolicy;
import dev.headroom.http.headers.Diagnostic.Kind;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The drafts after -09 on the same scenarios, decided by a real in-memory store: {@code t} as
 * draft-ietf-httpapi-ratelimit-headers-09 section 4.1.2 means it (until the quota resets,
 * {@code draft-09}) and as draft-10 and -11 section 4.1.2 mean it (until more quota is available,
 * {@code ietf}, the default), and the editor's draft after -11 (ietf-wg-httpapi/ratelimit-headers
 * pull request 166: {@code a}, {@code w}, {@code c}, {@code RateLimit-Partition}), written and read
 * back.
 */
class DraftGenerationsTest {

  static final Instant NOW = Instant.parse("2026-06-01T00:00:00Z");
  final ManualTicker ticker = ManualTicker.at(NOW);
  final QuotaLimiter limiter = QuotaLimiter.of(InMemoryStore.builder().ticker(ticker).build());
  final PartitionKey key = PartitionKey.of("198.51.100.7");

  static Map<String, List<String>> write(HeaderDialect dialect, Decision d, int status) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    RateLimitHeaders.builder().dialects(dialect).build()
        .write(d, status, (n, v) -> out.computeIfAbsent(n, k -> new ArrayList<>()).add(v));
    return out;
  }

  @Test
  void tokenBucketFivePerTenAfterTwoRequests_draft09t4_draft10t2() {
    QuotaPolicy p = QuotaPolicy.builder("burst").quota(5).window(Duration.ofSeconds(10))
        .algorithm(Algorithm.TOKEN_BUCKET).build();
    limiter.acquire(p, key);
    Decision second = limiter.acquire(p, key);
    assertThat(write(HeaderDialect.DRAFT_09, second, 200)).containsEntry("RateLimit", List.of("\"burst\";r=3;t=4"));
    assertThat(write(HeaderDialect.IETF, second, 200)).containsEntry("RateLimit", List.of("\"burst\";r=3;t=2"));
    assertThat(write(HeaderDialect.IETF_NEXT, second, 200)).containsEntry("RateLimit", List.of("\"burst\";a=3;w=2"));
  }

  @Test
  void starterDefaultOfTwoAMinute_draft09t60ThenRetryAfter30_draft10t30Throughout() {
    QuotaPolicy p = QuotaPolicy.builder("default").quota(2).window(Duration.ofMinutes(1))
        .algorithm(Algorithm.TOKEN_BUCKET).build();
    limiter.acquire(p, key);
    Decision ok = limiter.acquire(p, key);
    ticker.advance(Duration.ofMillis(10));
    Decision refused = limiter.acquire(p, key);
    assertThat(refused.allowed()).isFalse();

    assertThat(write(HeaderDialect.DRAFT_09, ok, 200)).containsEntry("RateLimit", List.of("\"default\";r=0;t=60"));
    Map<String, List<String>> draft09 = write(HeaderDialect.DRAFT_09, refused, 429);
    assertThat(draft09).containsEntry("Retry-After", List.of("30"))
        .containsEntry("RateLimit", List.of("\"default\";r=0;t=30"));

    assertThat(write(HeaderDialect.IETF, ok, 200)).containsEntry("RateLimit", List.of("\"default\";r=0;t=30"));
    Map<String, List<String>> ietf = write(HeaderDialect.IETF, refused, 429);
    assertThat(ietf).containsEntry("Retry-After", List.of("30"))
        .containsEntry("RateLimit", List.of("\"default\";r=0;t=30"));

    // t and Retry-After reference the same moment on the refusal in both (draft-09 section 6):
    // no reader finds them apart.
    for (Map<String, List<String>> refusal : List.of(draft09, ietf)) {
      assertThat(RateLimitFields.parse(refusal, NOW).diagnostics()).isEmpty();
    }
  }

  @Test
  void costWeightedRefusal_retryAfterLaterThanT_asDraft10Allows() {
    QuotaPolicy p = QuotaPolicy.builder("tokens").quota(10).window(Duration.ofSeconds(10))
        .algorithm(Algorithm.TOKEN_BUCKET).build();
    limiter.acquire(List.of(Acquisition.of(p, key, 8)));
    Decision refused = limiter.acquire(List.of(Acquisition.of(p, key, 5)));
    assertThat(refused.allowed()).isFalse();
    // r = 2; a third unit comes in 1 s; five units fit in 3 s.
    Map<String, List<String>> ietf = write(HeaderDialect.IETF, refused, 429);
    assertThat(ietf).containsEntry("Retry-After", List.of("3")).containsEntry("RateLimit", List.of("\"tokens\";r=2;t=1"));
    Map<String, List<String>> draft09 = write(HeaderDialect.DRAFT_09, refused, 429);
    assertThat(draft09).containsEntry("Retry-After", List.of("3")).containsEntry("RateLimit", List.of("\"tokens\";r=2;t=3"));
    Map<String, List<String>> next = write(HeaderDialect.IETF_NEXT, refused, 429);
    assertThat(next).containsEntry("RateLimit", List.of("\"tokens\";a=2;w=1;c=0"));

    RateLimitFields read = RateLimitFields.parse(ietf, NOW);
    assertThat(read.diagnostics()).extracting(Diagnostic::kind).containsExactly(Kind.RESET_BEFORE_RETRY_AFTER);
    assertThat(read.diagnostics().get(0).severity()).isEqualTo(Diagnostic.Severity.NOTE);
    assertThat(RateLimitFields.parse(draft09, NOW).diagnostics()).isEmpty();
  }

  @Test
  void slidingWindowTenPerTen_draft09WaitsForTheEstimateToEmpty_draft10ForTheNextUnit() {
    QuotaPolicy p = QuotaPolicy.builder("sliding").quota(10).window(Duration.ofSeconds(10))
        .algorithm(Algorithm.SLIDING_WINDOW).build();
    long epoch = NOW.getEpochSecond();
    ticker.advance(Duration.ofSeconds(10 - epoch % 10 + 4)); // 4 s into a window
    Decision d = limiter.acquire(List.of(Acquisition.of(p, key, 10)));
    assertThat(write(HeaderDialect.DRAFT_09, d, 200)).containsEntry("RateLimit", List.of("\"sliding\";r=0;t=16"));
    assertThat(write(HeaderDialect.IETF, d, 200)).containsEntry("RateLimit", List.of("\"sliding\";r=0;t=7"));
  }

  @Test
  void ietfNextWritesCostOnWeightedRequestsAndPartitionsItCanName() {
    QuotaPolicy perUser = QuotaPolicy.builder("per-user").quota(100).window(Duration.ofMinutes(1))
        .partitioning(Partitioning.parse("user+method")).build();
    QuotaPolicy perIp = QuotaPolicy.builder("per-ip").quota(1000).window(Duration.ofHours(1))
        .partitioning(Partitioning.CLIENT_IP).build();
    Decision d = limiter.acquire(List.of(Acquisition.of(perUser, key, 3), Acquisition.of(perIp, key, 1)));
    Map<String, List<String>> out = write(HeaderDialect.IETF_NEXT, d, 200);
    assertThat(out).containsEntry("RateLimit-Policy", List.of("\"per-user\";q=100;w=60, \"per-ip\";q=1000;w=3600"))
        // Token buckets (the default): a unit comes back every 0.6 s and every 3.6 s.
        .containsEntry("RateLimit", List.of("\"per-user\";a=97;w=1;c=3, \"per-ip\";a=999;w=4"))
        .containsEntry("RateLimit-Partition", List.of("\"per-user\";method;user_id"));

    RateLimitFields read = RateLimitFields.parse(out, NOW);
    assertThat(read.diagnostics()).isEmpty();
    ServiceLimitItem user = read.limits().get(0);
    assertThat(user.dialect()).isEqualTo(HeaderDialect.IETF_NEXT);
    assertThat(user.remaining()).hasValue(97);
    assertThat(user.reset()).contains(Duration.ofSeconds(1));
    assertThat(user.cost()).hasValue(3);
    assertThat(read.policyOf(user)).map(QuotaPolicyItem::quota).contains(100L);
    assertThat(read.limits().get(1).cost()).isEmpty();
    assertThat(read.partitions()).containsExactly(
        new PartitionItem("per-user", Set.of("user_id", "method"), Map.of()));
  }

  @Test
  void theClientReadsBothSpellings_unknownParametersIgnored() {
    RateLimitFields old = RateLimitFields.parse(Map.of("RateLimit", List.of("\"day\";r=5;t=30;acme-a=99")), NOW);
    assertThat(old.limits()).singleElement().satisfies(l -> {
      assertThat(l.dialect()).isEqualTo(HeaderDialect.IETF);
      assertThat(l.remaining()).hasValue(5);
      assertThat(l.reset()).contains(Duration.ofSeconds(30));
    });
    RateLimitFields next = RateLimitFields.parse(Map.of(
        "RateLimit", List.of("\"day\";a=7;w=12;c=2;r=1;t=999;acme-burst=4"),
        "RateLimit-Partition", List.of("\"day\";user_id;method=\"POST\";weight=2")), NOW);
    assertThat(next.limits()).singleElement().satisfies(l -> {
      assertThat(l.dialect()).isEqualTo(HeaderDialect.IETF_NEXT);
      assertThat(l.remaining()).hasValue(7);
      assertThat(l.reset()).contains(Duration.ofSeconds(12));
      assertThat(l.cost()).hasValue(2);
    });
    assertThat(next.diagnostics()).extracting(Diagnostic::kind).containsOnly(Kind.UNKNOWN_PARAMETER).hasSize(4);
    assertThat(next.partitions()).containsExactly(
        new PartitionItem("day", Set.of("user_id"), Map.of("method", "POST")));
  }

  @Test
  void relayedItemsKeepTheirSpelling() {
    ServiceLimitItem limit = ServiceLimitItem.builder().name("day").remaining(4).reset(Duration.ofSeconds(9)).cost(2).build();
    QuotaPolicyItem policy = QuotaPolicyItem.builder().name("day").quota(10).window(Duration.ofSeconds(60)).build();
    for (HeaderDialect d : List.of(HeaderDialect.IETF, HeaderDialect.DRAFT_09, HeaderDialect.IETF_NEXT)) {
      Map<String, String> out = new LinkedHashMap<>();
      RateLimitHeaders.builder().dialects(d).build().write(List.of(policy), List.of(limit), Optional.empty(), 200,
          out::put);
      assertThat(out.get("RateLimit")).as(d.token())
          .isEqualTo(d == HeaderDialect.IETF_NEXT ? "\"day\";a=4;w=9;c=2" : "\"day\";r=4;t=9");
    }
  }

  /**
   * Property: every {@code a}, {@code w}, {@code c} the grammar allows (non-negative Integers up to
   * RFC 9651's 15 digits) is read back exactly; a negative, a Decimal, a String or 16 digits drops
   * the member with a BAD_PARAMETER or SYNTAX diagnostic, never anything else.
   */
  @Test
  void everyAllowedValueIsReadAndEveryOtherDropped() {
    SplittableRandom random = new SplittableRandom(32);
    String[] bad = {"-1", "1.5", "\"7\"", "1234567890123456", "?1", ":AA==:"};
    for (int i = 0; i < 2000; i++) {
      long a = random.nextLong(QuotaPolicyItem.MAX_INTEGER + 1);
      long w = random.nextInt(4) == 0 ? random.nextLong(QuotaPolicyItem.MAX_INTEGER + 1) : random.nextLong(100_000);
      long c = random.nextLong(1_000_000);
      String[] values = {Long.toString(a), Long.toString(w), Long.toString(c)};
      int broken = random.nextInt(4) - 1; // -1: none
      if (broken >= 0) {
        values[broken] = bad[random.nextInt(bad.length)];
      }
      String field = "\"p\";a=" + values[0] + ";w=" + values[1] + ";c=" + values[2];
      RateLimitFields f = RateLimitFields.parse(Map.of("RateLimit", List.of(field)), NOW);
      if (broken < 0) {
        assertThat(f.diagnostics()).as(field).isEmpty();
        assertThat(f.limits()).as(field).singleElement().satisfies(l -> {
          assertThat(l.remaining()).hasValue(a);
          assertThat(l.reset()).contains(Duration.ofSeconds(w));
          assertThat(l.cost()).hasValue(c);
        });
      } else {
        assertThat(f.limits()).as(field).isEmpty();
        assertThat(f.diagnostics()).as(field).extracting(Diagnostic::kind).containsAnyOf(Kind.BAD_PARAMETER, Kind.SYNTAX)
            .doesNotContain(Kind.INTERNAL);
      }
    }
  }
}
