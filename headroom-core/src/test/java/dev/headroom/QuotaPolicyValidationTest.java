package dev.headroom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every invalid {@link QuotaPolicy} is refused with a message that names the field, the value and
 * what is expected (draft-ietf-httpapi-ratelimit-headers-09 section 3.1: {@code q}, {@code qu},
 * {@code w}).
 */
class QuotaPolicyValidationTest {

  private static QuotaPolicy.Builder valid() {
    return QuotaPolicy.builder("api").quota(100).window(Duration.ofSeconds(60));
  }

  static Stream<Arguments> invalidPolicies() {
    String nameRule = "name: expected 1 to 64 characters of letters, digits and - _ . : / starting with a letter, got ";
    String quotaRule = "policy 'api': quota: expected an integer from 1 to 999999999999999, got ";
    String windowRule = "policy 'api': window: expected a whole number of seconds from 1 to 31622400 (366 days), got ";
    return Stream.of(
        Arguments.of("null name", valid().name(null), nameRule + "null"),
        Arguments.of("empty name", valid().name(""), nameRule + "''"),
        Arguments.of("65-character name", valid().name("a".repeat(65)), nameRule + "'" + "a".repeat(65) + "'"),
        Arguments.of("name with a space", valid().name("my api"), nameRule + "'my api'"),
        Arguments.of("name starting with a digit", valid().name("1api"), nameRule + "'1api'"),
        Arguments.of("name with a quote", valid().name("a\"b"), nameRule + "'a\"b'"),
        Arguments.of("name with a control character", valid().name("a\nb"), nameRule + "'a\\u000ab'"),
        Arguments.of("name with a non-ASCII letter", valid().name("caf\u00e9"), nameRule + "'caf\\u00e9'"),
        Arguments.of("missing quota", QuotaPolicy.builder("api").window(Duration.ofSeconds(60)),
            quotaRule + "nothing (quota is required)"),
        Arguments.of("quota 0", valid().quota(0), quotaRule + "0"),
        Arguments.of("quota -1", valid().quota(-1), quotaRule + "-1"),
        Arguments.of("quota Long.MIN_VALUE", valid().quota(Long.MIN_VALUE), quotaRule + Long.MIN_VALUE),
        Arguments.of("quota above MAX_QUOTA", valid().quota(QuotaPolicy.MAX_QUOTA + 1), quotaRule + "1000000000000000"),
        Arguments.of("null unit", valid().unit(null),
            "policy 'api': unit: expected requests, content-bytes or concurrent-requests, got null"),
        Arguments.of("missing window", QuotaPolicy.builder("api").quota(1),
            "policy 'api': window: expected a whole number of seconds from 1 to 31622400, got nothing (window is required)"),
        Arguments.of("zero window", valid().window(Duration.ZERO), windowRule + "PT0S"),
        Arguments.of("negative window", valid().window(Duration.ofSeconds(-60)), windowRule + "PT-1M"),
        Arguments.of("fractional window", valid().window(Duration.ofMillis(1500)), windowRule + "PT1.5S"),
        Arguments.of("sub-second window", valid().window(Duration.ofNanos(1)), windowRule + "PT0.000000001S"),
        Arguments.of("window above 366 days", valid().window(Duration.ofDays(366).plusSeconds(1)), windowRule + "PT8784H1S"),
        Arguments.of("huge window", valid().window(Duration.ofSeconds(Long.MAX_VALUE)),
            windowRule + Duration.ofSeconds(Long.MAX_VALUE)),
        Arguments.of("token bucket quota above the window in nanoseconds",
            valid().quota(1_000_000_001).algorithm(Algorithm.TOKEN_BUCKET).window(Duration.ofSeconds(1)),
            "policy 'api': quota: a token bucket refills at most one unit per nanosecond, so quota must not exceed "
                + "the window in nanoseconds (1000000000), got 1000000001; use a longer window or a fixed or sliding window"),
        Arguments.of("concurrency algorithm with unit requests", valid().algorithm(Algorithm.CONCURRENCY),
            "policy 'api': algorithm: the concurrency algorithm goes with unit concurrent-requests and only with it, "
                + "got algorithm concurrency with unit requests"),
        Arguments.of("concurrency algorithm with unit content-bytes",
            valid().unit(QuotaUnit.CONTENT_BYTES).algorithm(Algorithm.CONCURRENCY),
            "policy 'api': algorithm: the concurrency algorithm goes with unit concurrent-requests and only with it, "
                + "got algorithm concurrency with unit content-bytes"),
        Arguments.of("unit concurrent-requests with a fixed window",
            valid().unit(QuotaUnit.CONCURRENT_REQUESTS).algorithm(Algorithm.FIXED_WINDOW),
            "policy 'api': algorithm: the concurrency algorithm goes with unit concurrent-requests and only with it, "
                + "got algorithm fixed-window with unit concurrent-requests"),
        Arguments.of("concurrency quota above 100000", valid().quota(100_001).unit(QuotaUnit.CONCURRENT_REQUESTS),
            "policy 'api': quota: a concurrency policy tracks each lease, expected at most 100000 concurrent requests, got 100001"),
        Arguments.of("empty partitioning", valid().partitioning(""),
            "policy 'api': partitioning: expected components client-ip, api-key, header:Name, user, client-cert, route, method or "
                + "global joined by + and | (at most 256 characters), got ''"),
        Arguments.of("257-character partitioning", valid().partitioning("p".repeat(257)),
            "policy 'api': partitioning: expected components client-ip, api-key, header:Name, user, client-cert, route, method or "
                + "global joined by + and | (at most 256 characters), got '" + "p".repeat(80) + "...(257 chars)'"),
        Arguments.of("partitioning with a tab", valid().partitioning("client\tip"),
            "policy 'api': partitioning: in 'client\\u0009ip' at position 0: expected one of client-ip, api-key, "
                + "header:Name, user, client-cert, route, method or global, got 'client\\u0009ip'"),
        Arguments.of("free-text partitioning", valid().partitioning("per customer"),
            "policy 'api': partitioning: in 'per customer' at position 0: expected one of client-ip, api-key, "
                + "header:Name, user, client-cert, route, method or global, got 'per customer'"),
        Arguments.of("zero lease timeout", valid().unit(QuotaUnit.CONCURRENT_REQUESTS).leaseTimeout(Duration.ZERO),
            "policy 'api': leaseTimeout: expected more than zero and at most PT24H, got PT0S"),
        Arguments.of("negative lease timeout", valid().unit(QuotaUnit.CONCURRENT_REQUESTS).leaseTimeout(Duration.ofSeconds(-1)),
            "policy 'api': leaseTimeout: expected more than zero and at most PT24H, got PT-1S"),
        Arguments.of("lease timeout above a day", valid().unit(QuotaUnit.CONCURRENT_REQUESTS).leaseTimeout(Duration.ofHours(25)),
            "policy 'api': leaseTimeout: expected more than zero and at most PT24H, got PT25H"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidPolicies")
  void refusedWithAMessageNamingFieldValueAndExpectation(String what, QuotaPolicy.Builder builder, String message) {
    assertThatThrownBy(builder::build).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
  }

  @Test
  @DisplayName("the limits themselves are accepted: 64-character name, MAX_QUOTA, MAX_WINDOW, one-day lease timeout")
  void limitsAreAccepted() {
    QuotaPolicy p = QuotaPolicy.builder("a" + "-_.:/9".repeat(10) + "abc").quota(QuotaPolicy.MAX_QUOTA)
        .window(QuotaPolicy.MAX_WINDOW).unit(QuotaUnit.CONTENT_BYTES).algorithm(Algorithm.TOKEN_BUCKET)
        .partitioning("header:" + "~".repeat(64)).build();
    assertThat(p.name()).hasSize(64);
    assertThat(p.windowSeconds()).isEqualTo(31_622_400);
    QuotaPolicy c = QuotaPolicy.builder("c").quota(100_000).window(QuotaPolicy.MAX_WINDOW)
        .unit(QuotaUnit.CONCURRENT_REQUESTS).leaseTimeout(QuotaPolicy.MAX_LEASE_TIMEOUT).build();
    assertThat(c.leaseTimeout()).isEqualTo(Duration.ofDays(1));
  }

  @Test
  @DisplayName("defaults: unit requests, token bucket (concurrency for concurrent-requests), lease timeout the window capped at a day")
  void defaults() {
    QuotaPolicy p = valid().build();
    assertThat(p.unit()).isEqualTo(QuotaUnit.REQUESTS);
    assertThat(p.algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
    assertThat(p.partitioning()).isEmpty();
    assertThat(p.leaseTimeout()).isEqualTo(Duration.ofSeconds(60));
    QuotaPolicy c = QuotaPolicy.builder("c").quota(2).window(Duration.ofDays(7)).unit(QuotaUnit.CONCURRENT_REQUESTS).build();
    assertThat(c.algorithm()).isEqualTo(Algorithm.CONCURRENCY);
    assertThat(c.leaseTimeout()).isEqualTo(Duration.ofDays(1));
  }

  @Test
  @DisplayName("a builder can be reused: build() resolves its defaults without writing them back")
  void builderReuse() {
    QuotaPolicy.Builder b = QuotaPolicy.builder("reused").quota(5).window(Duration.ofSeconds(60))
        .unit(QuotaUnit.CONCURRENT_REQUESTS);
    assertThat(b.build().algorithm()).isEqualTo(Algorithm.CONCURRENCY);
    QuotaPolicy requests = b.unit(QuotaUnit.REQUESTS).build();
    assertThat(requests.algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
    QuotaPolicy longer = b.window(Duration.ofSeconds(600)).build();
    assertThat(longer.leaseTimeout()).as("the default follows the new window").isEqualTo(Duration.ofSeconds(600));
  }

  @Test
  @DisplayName("toBuilder derives an equal policy, and a changed one that differs")
  void toBuilder() {
    QuotaPolicy p = valid().partitioning("client-ip").build();
    assertThat(p.toBuilder().build()).isEqualTo(p).hasSameHashCodeAs(p);
    assertThat(p.toBuilder().quota(101).build()).isNotEqualTo(p);
    assertThat(p.toString()).isEqualTo("QuotaPolicy{api;q=100;qu=requests;w=60;algorithm=token-bucket;partitioning=client-ip}");
  }

  @Test
  @DisplayName("unit and algorithm names parse, and a bad one names the value and the accepted names")
  void tokens() {
    assertThat(QuotaUnit.fromToken("content-bytes")).isEqualTo(QuotaUnit.CONTENT_BYTES);
    assertThat(Algorithm.fromToken("sliding-window")).isEqualTo(Algorithm.SLIDING_WINDOW);
    assertThatThrownBy(() -> QuotaUnit.fromToken("bytes")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unit: expected one of requests, content-bytes, concurrent-requests, got 'bytes'");
    assertThatThrownBy(() -> Algorithm.fromToken("leaky-bucket")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("algorithm: expected one of fixed-window, sliding-window, token-bucket, concurrency, got 'leaky-bucket'");
  }
}
