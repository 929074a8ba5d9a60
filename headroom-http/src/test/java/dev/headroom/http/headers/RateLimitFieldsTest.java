package dev.headroom.http.headers;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.QuotaUnit;
import dev.headroom.http.headers.Diagnostic.Kind;
import dev.headroom.http.sf.StructuredFields;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Parsing every dialect; malformed input is ignored and reported (draft-09 section 7), never thrown. */
class RateLimitFieldsTest {

  static final Instant NOW = Instant.parse("2025-03-04T12:00:00Z");

  static RateLimitFields parse(String... fields) {
    Map<String, List<String>> h = new LinkedHashMap<>();
    for (int i = 0; i < fields.length; i += 2) {
      h.computeIfAbsent(fields[i], k -> new ArrayList<>()).add(fields[i + 1]);
    }
    return RateLimitFields.parse(h, NOW);
  }

  static List<Kind> kinds(RateLimitFields f) {
    return f.diagnostics().stream().map(Diagnostic::kind).toList();
  }

  @Test
  void ietfPoliciesAndLimitsWithEveryParameter_draft09s3_1s4_1() {
    RateLimitFields f = parse("RateLimit-Policy", "\"peruser\";q=65535;qu=\"content-bytes\";w=10;pk=:QXBwLTk5OQ==:, \"burst\";q=100;w=60",
        "RateLimit", "\"peruser\";r=300;t=6;pk=:QXBwLTk5OQ==:, \"burst\";r=50;t=30");
    assertThat(f.diagnostics()).isEmpty();
    QuotaPolicyItem p = f.policies().get(0);
    assertThat(p.name()).contains("peruser");
    assertThat(p.quota()).isEqualTo(65535);
    assertThat(p.quotaUnit()).contains(QuotaUnit.CONTENT_BYTES);
    assertThat(p.window()).contains(Duration.ofSeconds(10));
    assertThat(p.partitionKey().orElseThrow()).isEqualTo("App-999".getBytes(StandardCharsets.US_ASCII));
    assertThat(f.policy("burst").orElseThrow().unit()).isEqualTo("requests");
    ServiceLimitItem l = f.limits().get(0);
    assertThat(l.remaining()).hasValue(300);
    assertThat(l.reset()).contains(Duration.ofSeconds(6));
    assertThat(f.dialects()).containsExactly(HeaderDialect.IETF);
  }

  @Test
  void listsSplitOverSeveralFieldLinesAreOneList_draft09s3s4() {
    RateLimitFields f = parse("RateLimit-Policy", "\"a\";q=1", "ratelimit-policy", "\"b\";q=2");
    assertThat(f.policies()).extracting(x -> x.name().orElseThrow()).containsExactly("a", "b");
  }

  @Test
  void badStructuredFieldSyntaxIgnoresTheWholeField() {
    RateLimitFields f = parse("RateLimit", "\"default\";r=50;t=30,", "RateLimit-Policy", "\"default\";q=100");
    assertThat(f.limits()).isEmpty();
    assertThat(f.policies()).hasSize(1);
    assertThat(kinds(f)).containsExactly(Kind.SYNTAX);
    assertThat(f.diagnostics().get(0).reference()).contains("draft-09 section 7");
  }

  @Test
  void malformedMembersAreDroppedOthersKept() {
    RateLimitFields f = parse("RateLimit-Policy", "\"neg\";q=-1, \"nowindow\";q=5;w=0, \"noq\";w=5, 42;w=1, (\"inner\"), ?1;q=3, \"ok\";q=7, \"badpk\";q=1;pk=\"x\", \"badqu\";q=1;qu=bytes",
        "RateLimit", "\"ok\";r=-1, \"ok\";r=1.5, \"ok\";t=?1;r=1, \"ok\";r=3;t=4");
    assertThat(f.policies()).extracting(QuotaPolicyItem::quota).containsExactly(42L, 7L);
    assertThat(f.limits()).hasSize(1);
    assertThat(kinds(f)).contains(Kind.BAD_PARAMETER, Kind.MISSING_QUOTA, Kind.INNER_LIST, Kind.BAD_NAME);
  }

  @Test
  void unknownParametersAreCommentsAndUnknownUnitsWarnings_draft09s3_1() {
    RateLimitFields f = parse("RateLimit-Policy", "\"sliding\";q=100;w=60;acme-burst=1000;qu=\"tokens\"");
    assertThat(f.policies()).hasSize(1);
    assertThat(f.policies().get(0).quotaUnit()).isEmpty();
    assertThat(f.diagnostics()).extracting(Diagnostic::kind).containsExactly(Kind.UNKNOWN_PARAMETER, Kind.UNKNOWN_QUOTA_UNIT);
    assertThat(f.diagnostics().get(0).severity()).isEqualTo(Diagnostic.Severity.NOTE);
  }

  @Test
  void remainingAboveQuotaAndUnknownPolicyAreReported() {
    RateLimitFields f = parse("RateLimit-Policy", "\"default\";q=10", "RateLimit", "\"default\";r=11, \"other\";r=1");
    assertThat(kinds(f)).containsExactly(Kind.REMAINING_ABOVE_QUOTA, Kind.UNKNOWN_POLICY);
    RateLimitFields legacy = parse("RateLimit-Limit", "10", "RateLimit-Remaining", "20");
    assertThat(kinds(legacy)).containsExactly(Kind.REMAINING_ABOVE_QUOTA);
  }

  @Test
  void resetThatDisagreesWithRetryAfterIsReported_draft09s6() {
    assertThat(kinds(parse("Retry-After", "20", "RateLimit", "\"d\";r=0;t=20"))).isEmpty();
    assertThat(kinds(parse("Retry-After", "20", "RateLimit", "\"d\";r=0;t=60"))).containsExactly(Kind.RESET_DISAGREES_WITH_RETRY_AFTER);
    assertThat(kinds(parse("Retry-After", "20", "RateLimit-Reset", "60"))).containsExactly(Kind.RESET_DISAGREES_WITH_RETRY_AFTER);
  }

  @Test
  void duplicatePoliciesAndTokenIdentifiersAreWarnings() {
    RateLimitFields f = parse("RateLimit-Policy", "\"a\";q=1, a;q=2");
    assertThat(f.policies()).hasSize(2);
    assertThat(kinds(f)).containsExactly(Kind.NAME_IS_TOKEN, Kind.DUPLICATE_POLICY);
  }

  @Test
  void draft07DictionaryAndIntegerPolicies() {
    RateLimitFields f = parse("RateLimit", "limit=10, remaining=7, reset=2400", "RateLimit-Policy", "10;w=3600");
    assertThat(f.dialects()).containsExactly(HeaderDialect.DRAFT_07);
    assertThat(f.limits().get(0).limit()).hasValue(10);
    assertThat(f.policies().get(0).name()).isEmpty();
    assertThat(f.policies().get(0).window()).contains(Duration.ofHours(1));
    assertThat(kinds(parse("RateLimit", "limit=10, remaining=\"7\""))).containsExactly(Kind.BAD_PARAMETER);
    assertThat(kinds(parse("RateLimit", "foo=1"))).containsExactly(Kind.SYNTAX);
  }

  @Test
  void legacyFieldsThatRepeatOrAreNotIntegersAreIgnored_draftPolli02s3() {
    RateLimitFields f = parse("RateLimit-Limit", "10", "RateLimit-Remaining", "5", "RateLimit-Remaining", "6",
        "RateLimit-Reset", "soon");
    assertThat(f.limits()).hasSize(1);
    assertThat(f.limits().get(0).remaining()).isEmpty();
    assertThat(f.limits().get(0).reset()).isEmpty();
    assertThat(kinds(f)).containsExactly(Kind.REPEATED_FIELD, Kind.SYNTAX);
    assertThat(parse("RateLimit-Limit", "10", "RateLimit-Policy", "10;w=1").dialects()).containsExactly(HeaderDialect.DRAFT_06);
    assertThat(parse("RateLimit-Limit", "10, 10;w=1").dialects()).containsExactly(HeaderDialect.DRAFT_03);
  }

  @Test
  void xRateLimitResetAsDeltaEpochSecondsEpochMillisOrDate() {
    long epoch = NOW.getEpochSecond() + 30;
    assertThat(parse("X-RateLimit-Reset", "30").limits().get(0).reset()).contains(Duration.ofSeconds(30));
    RateLimitFields f = parse("X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "59", "X-RateLimit-Reset", Long.toString(epoch));
    assertThat(f.limits().get(0).reset()).contains(Duration.ofSeconds(30));
    assertThat(f.limits().get(0).limit()).hasValue(60);
    assertThat(kinds(f)).containsExactly(Kind.EPOCH_RESET);
    assertThat(parse("X-RateLimit-Reset", Long.toString(epoch * 1000)).limits().get(0).reset()).contains(Duration.ofSeconds(30));
    assertThat(parse("X-RateLimit-Reset", "Tue, 04 Mar 2025 12:00:30 GMT").limits().get(0).reset()).contains(Duration.ofSeconds(30));
    assertThat(parse("X-RateLimit-Reset", "0.5").limits().get(0).reset()).contains(Duration.ofSeconds(1));
    assertThat(kinds(parse("X-RateLimit-Remaining", "-3"))).containsExactly(Kind.SYNTAX);
  }

  @Test
  void oversizedFieldsAreIgnoredBeforeParsing_draft09s8_5_1() {
    String huge = "\"a\";q=1, ".repeat(1000) + "\"a\";q=1";
    RateLimitFields f = parse("RateLimit-Policy", huge);
    assertThat(f.policies()).isEmpty();
    assertThat(kinds(f)).containsExactly(Kind.FIELD_TOO_LARGE);
    String manySeparators = "a;" + "b;".repeat(StructuredFields.MAX_SEPARATORS) + "c";
    assertThat(kinds(parse("RateLimit", manySeparators))).containsExactly(Kind.FIELD_TOO_LARGE);
    assertThat(kinds(parse("RateLimit", "\"Ünïcode\";r=1"))).containsExactly(Kind.SYNTAX);
  }

  @Test
  void javaNetHttpHeadersAndCaseInsensitiveMapsFit() {
    HttpHeaders headers = HttpHeaders.of(Map.of("ratelimit", List.of("\"default\";r=5;t=1"),
        "RETRY-AFTER", List.of("1"), "x-ratelimit-remaining", List.of("5")), (a, b) -> true);
    RateLimitFields f = RateLimitFields.parse(headers, NOW);
    assertThat(f.limits()).hasSize(2);
    assertThat(f.retryAfter()).isPresent();
    assertThat(f.dialects()).containsExactly(HeaderDialect.IETF, HeaderDialect.X_RATELIMIT);
    assertThat(kinds(f)).contains(Kind.MIXED_DIALECTS);
    assertThat(RateLimitFields.parse(Map.of("rAtElImIt", List.of("\"d\";r=1")), NOW).limits()).hasSize(1);
  }

  @Test
  void badRetryAfterIsIgnoredAndReported() {
    RateLimitFields f = parse("Retry-After", "tomorrow", "RateLimit", "\"d\";r=0;t=5");
    assertThat(f.retryAfter()).isEmpty();
    assertThat(kinds(f)).containsExactly(Kind.BAD_RETRY_AFTER);
  }
}
