package dev.headroom.http.headers;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.http.HeaderNames;
import dev.headroom.http.RetryAfter;
import dev.headroom.http.headers.Diagnostic.Kind;
import dev.headroom.http.headers.Diagnostic.Severity;
import dev.headroom.http.sf.StructuredFields;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every example of draft-ietf-httpapi-ratelimit-headers-09 sections 3.2, 4.2 and appendix B (and
 * the other field examples in its text), and of draft-polli-ratelimit-headers-02 sections 3 and 6:
 * each is parsed without error, re-emitted in the dialect it was written in, and compared. The
 * re-emitted fields parse to the same policies, limits and Retry-After; where the original is in
 * canonical form (RFC 9651 section 4.1) and uses only the draft's own vocabulary, the re-emitted
 * text is byte-identical.
 */
class DraftExamplesTest {

  /** The Date of draft-09 appendix B.1.4 and draft-polli-02 section 6.1.4. */
  static final Instant DATE = Instant.parse("2019-08-05T09:27:00Z");

  static Stream<Arguments> examples() {
    List<Arguments> all = new ArrayList<>();
    // draft-09 section 3 and 3.2
    ex(all, "draft-09 s3", "RateLimit-Policy", "\"burst\";q=100;w=60,\"daily\";q=1000;w=86400");
    ex(all, "draft-09 s3.2 window", "RateLimit-Policy", "\"default\";q=100;w=10");
    ex(all, "draft-09 s3.2 multiple policies", "RateLimit-Policy", "\"permin\";q=50;w=60,\"perhr\";q=1000;w=3600");
    ex(all, "draft-09 s3.2 partition key", "RateLimit-Policy", "\"peruser\";q=100;w=60;pk=:cHsdsRa894==:");
    ex(all, "draft-09 s3.2 partition key and unit", "RateLimit-Policy",
        "\"peruser\";q=65535;qu=\"content-bytes\";w=10;pk=:sdfjLJUOUH==:");
    // draft-09 section 4 and 4.2
    ex(all, "draft-09 s4.2 remaining and reset", "RateLimit", "\"default\";r=50;t=30");
    ex(all, "draft-09 s4.2 partition key without reset", "RateLimit", "\"default\";r=999;pk=:dHJpYWwxMjEzMjM=:");
    ex(all, "draft-09 s4.2 300MB", "RateLimit", "\"default\";r=300000000;t=60;pk=:QXBwLTk5OQ==:");
    // draft-09 sections 6, 7, 8.5
    ex(all, "draft-09 s6 redirect", "RateLimit", "\"problemPolicy\";r=0;t=10");
    ex(all, "draft-09 s7", "RateLimit", "\"default\";r=1;t=7");
    ex(all, "draft-09 s8.5 daily", "RateLimit", "\"daily\";r=1;t=36400");
    ex(all, "draft-09 s8.5 large window", "RateLimit-Policy", "\"somepolicy\";q=10000;w=1000",
        "RateLimit", "\"somepolicy\";r=10000;t=10");
    // draft-09 appendix B
    ex(all, "draft-09 B.1.1 first", "RateLimit", "\"default\";r=0;t=50");
    ex(all, "draft-09 B.1.1 second", "RateLimit", "\"default\";r=0;t=48");
    ex(all, "draft-09 B.1.2", "RateLimit", "\"dayLimit\";r=100;t=36000");
    ex(all, "draft-09 B.1.3 first", "RateLimit-Policy", "\"basic\";q=100;w=60", "RateLimit", "\"basic\";r=60;t=58");
    ex(all, "draft-09 B.1.3 second", "RateLimit-Policy", "\"basic\";q=100;w=60", "RateLimit", "\"basic\";r=20;t=56");
    ex(all, "draft-09 B.1.4", "Date", "Mon, 05 Aug 2019 09:27:00 GMT", "Retry-After", "Mon, 05 Aug 2019 09:27:05 GMT",
        "RateLimit", "\"default\";r=0;t=5");
    ex(all, "draft-09 B.2.1", "RateLimit", "\"fixedwindow\";r=99;t=50", "RateLimit-Policy", "\"fixedwindow\";q=100;w=60");
    ex(all, "draft-09 B.2.2", "RateLimit-Policy", "\"dynamic\";q=100;w=60", "RateLimit", "\"dynamic\";r=9;t=50");
    ex(all, "draft-09 B.2.3", "RateLimit-Policy", "\"dynamic\";q=15;w=20", "RateLimit", "\"dynamic\";r=0;t=20");
    ex(all, "draft-09 B.3", "Retry-After", "20", "RateLimit-Policy", "\"dynamic\";q=100;w=60",
        "RateLimit", "\"dynamic\";r=15;t=40");
    ex(all, "draft-09 B.3.1 first", "RateLimit-Policy", "quota;q=100;w=1", "RateLimit", "quota;t=1");
    ex(all, "draft-09 B.3.1 second", "RateLimit-Policy", "quota;q=10", "RateLimit", "quota;t=1");
    ex(all, "draft-09 B.3.2", "RateLimit-Policy", "\"hour\";q=1000;w=3600, \"day\";q=5000;w=86400",
        "RateLimit", "\"day\";r=100;t=36000");
    // draft-09 FAQ and "RateLimit header fields currently used on the web"
    ex(all, "draft-09 FAQ 8 simplest", "RateLimit", "\"default\";r=50;t=60");
    ex(all, "draft-09 FAQ 8 policy key", "RateLimit-Policy", "\"sliding\";q=100;w=60;burst=1000",
        "RateLimit-Policy", "\"fixed\";q=5000;w=3600;burst=0", "RateLimit", "\"sliding\";r=50;t=44");
    ex(all, "draft-09 on the web, 50%", "RateLimit-Policy", "\"sliding\";q=12;w=1", "RateLimit", "\"sliding\";q=12;r=6;t=1");
    ex(all, "draft-09 on the web, 100%", "RateLimit-Policy", "\"sliding\";q=12;w=1", "RateLimit", "\"sliding\";q=12;r=1;t=1");
    // draft-polli-ratelimit-headers-02 section 3
    ex(all, "draft-polli-02 s3.1 plain", "RateLimit-Limit", "100");
    ex(all, "draft-polli-02 s3.1 window", "RateLimit-Limit", "100, 100;w=10");
    ex(all, "draft-polli-02 s3.1 multiple", "RateLimit-Limit", "10, 10;w=1, 50;w=60, 1000;w=3600, 5000;w=86400");
    ex(all, "draft-polli-02 s3.1 comment", "RateLimit-Limit", "10, 10;w=1;burst=1000, 1000;w=3600");
    ex(all, "draft-polli-02 s4", "RateLimit-Limit", "10", "RateLimit-Remaining", "1", "RateLimit-Reset", "7");
    // draft-polli-ratelimit-headers-02 section 6
    ex(all, "draft-polli-02 6.1.1", "RateLimit-Limit", "100", "Ratelimit-Remaining", "0", "Ratelimit-Reset", "50");
    ex(all, "draft-polli-02 6.1.2", "acme-RateLimit-DayLimit", "5000", "acme-RateLimit-HourLimit", "1000",
        "RateLimit-Limit", "5000", "RateLimit-Remaining", "100", "RateLimit-Reset", "36000");
    ex(all, "draft-polli-02 6.1.3 first", "RateLimit-Limit", "100", "RateLimit-Remaining", "60", "RateLimit-Reset", "58");
    ex(all, "draft-polli-02 6.1.3 second", "RateLimit-Limit", "100", "RateLimit-Remaining", "20", "RateLimit-Reset", "56");
    ex(all, "draft-polli-02 6.1.4", "Date", "Mon, 05 Aug 2019 09:27:00 GMT", "Retry-After", "Mon, 05 Aug 2019 09:27:05 GMT",
        "RateLimit-Reset", "5", "RateLimit-Limit", "100", "Ratelimit-Remaining", "0");
    ex(all, "draft-polli-02 6.2.1", "RateLimit-Limit", "100, 100;w=60", "Ratelimit-Remaining", "99", "Ratelimit-Reset", "50");
    ex(all, "draft-polli-02 6.2.2", "RateLimit-Limit", "10, 100;w=60", "Ratelimit-Remaining", "9", "Ratelimit-Reset", "50");
    ex(all, "draft-polli-02 6.2.3", "RateLimit-Limit", "0, 15;w=20", "Ratelimit-Remaining", "0", "Ratelimit-Reset", "20");
    ex(all, "draft-polli-02 6.3", "Retry-After", "20", "RateLimit-Limit", "15, 100;w=60", "Ratelimit-Remaining", "15",
        "Ratelimit-Reset", "40");
    ex(all, "draft-polli-02 6.3.1", "RateLimit-Limit", "10", "Ratelimit-Reset", "1");
    ex(all, "draft-polli-02 6.3.2", "RateLimit-Limit", "5000, 1000;w=3600, 5000;w=86400", "RateLimit-Remaining", "100",
        "RateLimit-Reset", "36000");
    // Graceful Boundaries spec section 4 and its reference implementation (draft-07 form)
    ex(all, "graceful-boundaries s4", "RateLimit", "limit=10, remaining=7, reset=2400", "RateLimit-Policy", "10;w=3600");
    ex(all, "graceful-boundaries refusal", "Retry-After", "2400", "RateLimit", "limit=10, remaining=0, reset=2400",
        "RateLimit-Policy", "10;w=3600");
    return all.stream();
  }

  private static void ex(List<Arguments> all, String name, String... fields) {
    Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    for (int i = 0; i < fields.length; i += 2) {
      headers.computeIfAbsent(fields[i], k -> new ArrayList<>()).add(fields[i + 1]);
    }
    all.add(Arguments.of(Named.of(name, headers)));
  }

  @ParameterizedTest
  @MethodSource("examples")
  void parsesWithoutErrorAndReEmitsTheSameFields(Map<String, List<String>> headers) {
    RateLimitFields parsed = RateLimitFields.parse(headers, DATE);
    assertThat(parsed.diagnostics()).noneMatch(d -> d.severity() == Severity.ERROR);
    assertThat(parsed.dialects()).hasSize(1);
    assertThat(parsed.isEmpty()).isFalse();

    RateLimitHeaders emitter = RateLimitHeaders.builder().dialects(parsed.dialects()).build();
    Map<String, List<String>> emitted = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    emitter.write(parsed.policies(), parsed.limits(), parsed.retryAfter().map(RetryAfter::delay), 200,
        (n, v) -> emitted.computeIfAbsent(n, k -> new ArrayList<>()).add(v));

    RateLimitFields reparsed = RateLimitFields.parse(emitted, DATE);
    assertThat(reparsed.policies()).isEqualTo(parsed.policies());
    assertThat(reparsed.limits()).isEqualTo(parsed.limits());
    assertThat(reparsed.retryAfter().map(RetryAfter::delay)).isEqualTo(parsed.retryAfter().map(RetryAfter::delay));
    assertThat(reparsed.dialects()).isEqualTo(parsed.dialects());

    Set<String> rateLimitFields = Stream.of(parsed.dialects().iterator().next().fieldNames())
        .flatMap(Set::stream).collect(Collectors.toSet());
    Set<String> withVendorSyntax = parsed.diagnostics().stream()
        .filter(d -> d.kind() == Kind.NAME_IS_TOKEN || d.kind() == Kind.UNKNOWN_PARAMETER)
        .map(Diagnostic::field).collect(Collectors.toSet());
    for (String field : rateLimitFields) {
      List<String> original = headers.get(field);
      if (original == null || original.size() != 1 || withVendorSyntax.contains(field) || !canonical(original.get(0))) {
        continue;
      }
      assertThat(emitted.get(field)).as(field).containsExactly(original.get(0));
    }
  }

  /** Whether a value is already in the form RFC 9651 section 4.1 serialises (List or Dictionary). */
  private static boolean canonical(String value) {
    try {
      return StructuredFields.serialise(StructuredFields.parseList(List.of(value))).equals(value);
    } catch (IllegalArgumentException notAList) {
      return StructuredFields.serialise(StructuredFields.parseDictionary(List.of(value))).equals(value);
    }
  }

  @ParameterizedTest
  @MethodSource("examples")
  void reportsTheDraftsOwnDeviationsAsDiagnostics(Map<String, List<String>> headers) {
    RateLimitFields parsed = RateLimitFields.parse(headers, DATE);
    Set<Kind> kinds = parsed.diagnostics().stream().map(Diagnostic::kind)
        .collect(Collectors.toCollection(() -> EnumSet.noneOf(Kind.class)));
    String raw = headers.toString();
    if (raw.contains("quota;")) {
      // B.3.1 sends Token identifiers and no r.
      assertThat(kinds).contains(Kind.NAME_IS_TOKEN, Kind.MISSING_REMAINING);
    } else if (raw.contains("burst=") || raw.contains("q=12;r=")) {
      assertThat(kinds).contains(Kind.UNKNOWN_PARAMETER);
    } else if (raw.contains("r=15;t=40") || raw.contains("Ratelimit-Reset=[40]")) {
      // B.3 and draft-polli-02 6.3: Retry-After 20 with a reset of 40 seconds.
      assertThat(kinds).contains(Kind.RESET_DISAGREES_WITH_RETRY_AFTER);
    } else if (raw.contains("r=10000;t=10")) {
      assertThat(kinds).isEmpty();
    } else if (raw.contains("remaining=0, reset=2400") || raw.contains("r=0;t=5")) {
      // Retry-After and the reset agree: no diagnostic.
      assertThat(kinds).isEmpty();
    }
  }

  @Test
  void retryAfterAsHttpDateAgreesWithResetInAppendixB14() {
    Map<String, List<String>> h = new LinkedHashMap<>();
    h.put(HeaderNames.RETRY_AFTER, List.of("Mon, 05 Aug 2019 09:27:05 GMT"));
    h.put(HeaderNames.RATELIMIT, List.of("\"default\";r=0;t=5"));
    RateLimitFields f = RateLimitFields.parse(h, DATE);
    assertThat(f.retryAfter().orElseThrow().delay()).isEqualTo(Duration.ofSeconds(5));
    assertThat(f.diagnostics()).isEmpty();
  }
}
