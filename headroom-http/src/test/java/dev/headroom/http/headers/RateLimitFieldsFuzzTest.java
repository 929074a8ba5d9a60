package dev.headroom.http.headers;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.RetryAfter;
import dev.headroom.http.headers.Diagnostic.Kind;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Hostile input for every parser entry point: each dialect's fields and Retry-After. Nothing may
 * throw, hang or fail inside the parser (an {@link Kind#INTERNAL} diagnostic), and what is kept
 * must satisfy the draft's ranges.
 *
 * <p>Plain {@code mvn verify} replays the regression inputs under
 * {@code src/test/resources/dev/headroom/http/headers/RateLimitFieldsFuzzTestInputs/<method>/};
 * {@code JAZZER_FUZZ=1} fuzzes (see headroom-http/README.md).
 */
class RateLimitFieldsFuzzTest {

  static final Instant NOW = Instant.parse("2019-08-05T09:27:00Z");

  @FuzzTest(maxDuration = "30s")
  void ietfFields(FuzzedDataProvider data) {
    check(Map.of(HeaderNames.RATELIMIT_POLICY, lines(data), HeaderNames.RATELIMIT, lines(data),
        HeaderNames.RETRY_AFTER, List.of(data.consumeRemainingAsAsciiString())));
  }

  /** The editor's draft after -11: {@code a}, {@code w}, {@code c} and {@code RateLimit-Partition}. */
  @FuzzTest(maxDuration = "30s")
  void ietfNextFields(FuzzedDataProvider data) {
    check(Map.of(HeaderNames.RATELIMIT_POLICY, lines(data), HeaderNames.RATELIMIT_PARTITION, lines(data),
        HeaderNames.RATELIMIT, lines(data), HeaderNames.RETRY_AFTER, List.of(data.consumeRemainingAsAsciiString())));
  }

  @FuzzTest(maxDuration = "30s")
  void draft07Fields(FuzzedDataProvider data) {
    check(Map.of(HeaderNames.RATELIMIT, lines(data), HeaderNames.RATELIMIT_POLICY, lines(data)));
  }

  @FuzzTest(maxDuration = "30s")
  void legacyFields(FuzzedDataProvider data) {
    check(Map.of(HeaderNames.RATELIMIT_LIMIT, lines(data), HeaderNames.RATELIMIT_REMAINING, lines(data),
        HeaderNames.RATELIMIT_RESET, lines(data), HeaderNames.RATELIMIT_POLICY, lines(data)));
  }

  @FuzzTest(maxDuration = "30s")
  void xRateLimitFields(FuzzedDataProvider data) {
    check(Map.of(HeaderNames.X_RATELIMIT_LIMIT, lines(data), HeaderNames.X_RATELIMIT_REMAINING, lines(data),
        HeaderNames.X_RATELIMIT_RESET, lines(data)));
  }

  @FuzzTest(maxDuration = "30s")
  void retryAfter(FuzzedDataProvider data) {
    Instant now = Instant.ofEpochSecond(data.consumeLong(0, 253402300799L));
    String value = data.consumeRemainingAsString();
    RetryAfter.parse(value, now).ifPresent(ra -> assertThat(ra.delay().isNegative()).isFalse());
    RetryAfter.parseHttpDate(value, now);
    check(Map.of(HeaderNames.RETRY_AFTER, List.of(value)));
  }

  static List<String> lines(FuzzedDataProvider data) {
    int n = data.consumeInt(0, 3);
    List<String> lines = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      lines.add(data.consumeString(600));
    }
    return lines;
  }

  static void check(Map<String, List<String>> headers) {
    Map<String, List<String>> ci = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    ci.putAll(headers);
    RateLimitFields f = RateLimitFields.parse(ci, NOW);
    assertThat(f.diagnostics()).noneMatch(d -> d.kind() == Kind.INTERNAL);
    for (QuotaPolicyItem p : f.policies()) {
      assertThat(p.quota()).isBetween(0L, QuotaPolicyItem.MAX_INTEGER);
      p.window().ifPresent(w -> assertThat(w).isPositive());
    }
    for (ServiceLimitItem l : f.limits()) {
      l.remaining().ifPresent(r -> assertThat(r).isNotNegative());
      l.reset().ifPresent(t -> assertThat(t.isNegative()).isFalse());
      l.cost().ifPresent(c -> assertThat(c).isBetween(0L, QuotaPolicyItem.MAX_INTEGER));
    }
    for (PartitionItem p : f.partitions()) {
      assertThat(p.name()).isNotEmpty();
    }
    assertThat(f.diagnostics().size()).isLessThanOrEqualTo(1024);
  }
}
