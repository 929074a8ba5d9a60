package dev.headroom.http.headers;

import static dev.headroom.http.headers.RateLimitFieldsTest.parse;
import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.http.headers.Diagnostic.Kind;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Each vendor's fields as its documentation shows them (cited in each reader's class comment),
 * read at {@link RateLimitFieldsTest#NOW} (2025-03-04T12:00:00Z): the budgets, their units, and
 * which dialect read them; a field several vendors share is read by the one its other fields or
 * its value name, and by no other.
 */
class VendorDialectsTest {

  static ServiceLimitItem limit(RateLimitFields f, String name) {
    return f.limits().stream().filter(l -> l.name().filter(name::equals).isPresent()).findFirst().orElseThrow();
  }

  static void budget(RateLimitFields f, String name, String unit, long quota, long remaining, long resetSeconds) {
    ServiceLimitItem l = limit(f, name);
    assertThat(l.remaining()).hasValue(remaining);
    assertThat(l.reset()).contains(Duration.ofSeconds(resetSeconds));
    QuotaPolicyItem p = f.policyOf(l).orElseThrow();
    assertThat(p.quota()).isEqualTo(quota);
    assertThat(p.unit()).isEqualTo(unit);
  }

  @Test
  void openAiRequestAndTokenBudgetsWithGoDurationResets() {
    RateLimitFields f = parse("x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "59",
        "x-ratelimit-reset-requests", "1s", "x-ratelimit-limit-tokens", "150000", "x-ratelimit-remaining-tokens", "149984",
        "x-ratelimit-reset-tokens", "6m0s");
    assertThat(f.vendors()).containsExactly(VendorDialect.OPENAI);
    assertThat(f.dialects()).isEmpty();
    budget(f, "requests", "requests", 60, 59, 1);
    budget(f, "tokens", "tokens", 150000, 149984, 360);
    assertThat(limit(f, "tokens").vendor()).contains(VendorDialect.OPENAI);
    assertThat(f.diagnostics()).isEmpty();
  }

  @Test
  void openAiOnAzureSaysRetryAfterInMilliseconds() {
    RateLimitFields f = parse("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "12ms",
        "Retry-After", "2", "retry-after-ms", "1500");
    assertThat(limit(f, "requests").reset()).contains(Duration.ofSeconds(1));
    assertThat(f.retryAfter().orElseThrow().delay()).isEqualTo(Duration.ofMillis(1500));
  }

  @Test
  void anthropicFourBudgetsWithRfc3339Resets() {
    RateLimitFields f = parse("anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "49",
        "anthropic-ratelimit-requests-reset", "2025-03-04T12:00:01Z",
        "anthropic-ratelimit-input-tokens-limit", "40000", "anthropic-ratelimit-input-tokens-remaining", "39000",
        "anthropic-ratelimit-input-tokens-reset", "2025-03-04T12:00:01.5Z",
        "anthropic-ratelimit-output-tokens-limit", "8000", "anthropic-ratelimit-output-tokens-remaining", "7900",
        "anthropic-ratelimit-output-tokens-reset", "2025-03-04T13:00:30+01:00",
        "anthropic-ratelimit-tokens-limit", "48000", "anthropic-ratelimit-tokens-remaining", "46900",
        "anthropic-ratelimit-tokens-reset", "2025-03-04T12:00:01Z");
    assertThat(f.vendors()).containsExactly(VendorDialect.ANTHROPIC);
    budget(f, "requests", "requests", 50, 49, 1);
    budget(f, "input-tokens", "input-tokens", 40000, 39000, 2);
    budget(f, "output-tokens", "output-tokens", 8000, 7900, 30);
    budget(f, "tokens", "tokens", 48000, 46900, 1);
  }

  @Test
  void gitHubOneBudgetPerResourceWithAnEpochReset() {
    long reset = RateLimitFieldsTest.NOW.getEpochSecond() + 1800;
    RateLimitFields f = parse("x-ratelimit-limit", "5000", "x-ratelimit-remaining", "4999", "x-ratelimit-used", "1",
        "x-ratelimit-reset", Long.toString(reset), "x-ratelimit-resource", "core");
    assertThat(f.vendors()).containsExactly(VendorDialect.GITHUB);
    assertThat(f.dialects()).as("the generic X-RateLimit reader leaves GitHub's fields alone").isEmpty();
    budget(f, "core", "requests", 5000, 4999, 1800);
    RateLimitFields search = parse("x-ratelimit-limit", "30", "x-ratelimit-used", "12", "x-ratelimit-reset",
        Long.toString(reset), "x-ratelimit-resource", "search");
    budget(search, "search", "requests", 30, 18, 1800);
  }

  @Test
  void discordBucketWithAFractionalResetAfter() {
    RateLimitFields f = parse("X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "1", "X-RateLimit-Reset",
        (RateLimitFieldsTest.NOW.getEpochSecond() + 1) + ".123", "X-RateLimit-Reset-After", "1.123",
        "X-RateLimit-Bucket", "abcd1234");
    assertThat(f.vendors()).containsExactly(VendorDialect.DISCORD);
    assertThat(f.dialects()).isEmpty();
    budget(f, "abcd1234", "requests", 5, 1, 2);
    RateLimitFields global = parse("X-RateLimit-Global", "true", "X-RateLimit-Scope", "global", "Retry-After", "65");
    assertThat(global.vendors()).containsExactly(VendorDialect.DISCORD);
    assertThat(global.diagnostics()).extracting(Diagnostic::detail).anyMatch(d -> d.contains("scope global"));
  }

  @Test
  void atlassianIsoResetIsAnInstantNotTenMinutes() {
    RateLimitFields f = parse("X-RateLimit-Limit", "350", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset",
        "2025-03-04T12:01Z", "X-RateLimit-NearLimit", "true", "RateLimit-Reason", "jira-burst-based");
    assertThat(f.vendors()).containsExactly(VendorDialect.ATLASSIAN);
    assertThat(f.dialects()).isEmpty();
    budget(f, "atlassian", "requests", 350, 0, 60);
    assertThat(f.diagnostics()).extracting(Diagnostic::detail).anyMatch(d -> d.contains("jira-burst-based"));
  }

  @Test
  void atlassianBetaPrefixedIetfFormIsReadByTheIetfReader() {
    RateLimitFields f = parse("Beta-RateLimit-Policy", "\"tenant-app-quota\";q=100100;w=3600",
        "Beta-RateLimit", "\"tenant-app-quota\";r=17842;t=2107", "X-RateLimit-Limit", "350", "X-RateLimit-Remaining", "349");
    assertThat(f.vendors()).containsExactly(VendorDialect.ATLASSIAN);
    budget(f, "tenant-app-quota", "requests", 100100, 17842, 2107);
    assertThat(limit(f, "tenant-app-quota").vendor()).contains(VendorDialect.ATLASSIAN);
    assertThat(f.policyOf(limit(f, "tenant-app-quota")).orElseThrow().window()).contains(Duration.ofSeconds(3600));
    assertThat(limit(f, "atlassian").remaining()).hasValue(349);
  }

  @Test
  void azureResourceManagerBudgetsStateOnlyWhatRemains() {
    RateLimitFields f = parse("x-ms-ratelimit-remaining-subscription-reads", "11999",
        "x-ms-ratelimit-remaining-subscription-writes", "1199",
        "x-ms-ratelimit-remaining-resource", "Microsoft.Compute/HighCostGet3Min;107,Microsoft.Compute/HighCostGet30Min;1197",
        "x-ms-retry-after-ms", "2500");
    assertThat(f.vendors()).containsExactly(VendorDialect.AZURE_RESOURCE_MANAGER);
    assertThat(limit(f, "subscription-reads").remaining()).hasValue(11999);
    assertThat(limit(f, "subscription-writes").remaining()).hasValue(1199);
    assertThat(limit(f, "Microsoft.Compute/HighCostGet3Min").remaining()).hasValue(107);
    assertThat(limit(f, "Microsoft.Compute/HighCostGet30Min").remaining()).hasValue(1197);
    assertThat(f.limits()).allSatisfy(l -> {
      assertThat(l.reset()).as("Azure states no reset, and none is invented").isEmpty();
      assertThat(l.limit()).isEmpty();
    });
    assertThat(f.retryAfter().orElseThrow().delay()).isEqualTo(Duration.ofMillis(2500));
  }

  @Test
  void oktaAndXEpochSecondResets() {
    RateLimitFields f = parse("X-Rate-Limit-Limit", "600", "X-Rate-Limit-Remaining", "598", "X-Rate-Limit-Reset",
        Long.toString(RateLimitFieldsTest.NOW.getEpochSecond() + 45));
    assertThat(f.vendors()).containsExactly(VendorDialect.X_RATE_LIMIT);
    budget(f, "x-rate-limit", "requests", 600, 598, 45);
  }

  @Test
  void kongOneBudgetPerWindowOnUtcBoundaries() {
    // 12:00:00 on the Date: the minute window resets at 12:01, the hour at 13:00.
    RateLimitFields f = parse("X-RateLimit-Limit-Minute", "10", "X-RateLimit-Remaining-Minute", "9",
        "X-RateLimit-Limit-Hour", "100", "X-RateLimit-Remaining-Hour", "90",
        "RateLimit-Limit", "10", "RateLimit-Remaining", "9", "RateLimit-Reset", "59");
    assertThat(f.vendors()).containsExactly(VendorDialect.KONG);
    assertThat(f.dialects()).as("the RateLimit-* triple is Kong's here, not draft-03").isEmpty();
    budget(f, "minute", "requests", 10, 9, 59);
    budget(f, "hour", "requests", 100, 90, 3600);
    assertThat(f.policyOf(limit(f, "hour")).orElseThrow().window()).contains(Duration.ofHours(1));
  }

  /**
   * Kong's Rate Limiting Advanced names each window by its size in seconds (its examples:
   * {@code X-RateLimit-Limit-30: 5}, {@code X-RateLimit-Remaining-30: 3}): one budget per size, that
   * window, the {@code RateLimit-*} reset for the one they describe and none for the others.
   */
  @Test
  void kongWindowsOfItsOwnSizes() {
    RateLimitFields f = parse("X-RateLimit-Limit-30", "5", "X-RateLimit-Remaining-30", "4",
        "X-RateLimit-Limit-300", "50", "X-RateLimit-Remaining-300", "40",
        "RateLimit-Limit", "5", "RateLimit-Remaining", "4", "RateLimit-Reset", "12");
    assertThat(f.vendors()).containsExactly(VendorDialect.KONG);
    assertThat(f.dialects()).as("the RateLimit-* triple is Kong's here, not draft-03").isEmpty();
    budget(f, "30", "requests", 5, 4, 12);
    assertThat(f.policyOf(limit(f, "30")).orElseThrow().window()).contains(Duration.ofSeconds(30));
    assertThat(limit(f, "300").remaining()).hasValue(40);
    assertThat(limit(f, "300").reset()).as("not the window the RateLimit-* fields describe").isEmpty();
    assertThat(f.policyOf(limit(f, "300")).orElseThrow().window()).contains(Duration.ofSeconds(300));
    assertThat(f.limits()).as("the triple described the 30 s window: no budget of its own").hasSize(2);
    RateLimitFields zero = parse("X-RateLimit-Limit-0", "5", "X-RateLimit-Remaining-0", "4");
    assertThat(zero.vendors()).as("a window of no seconds is no Kong window").isEmpty();
  }

  @Test
  void shopifyLeakyBucket() {
    RateLimitFields f = parse("X-Shopify-Shop-Api-Call-Limit", "32/40");
    assertThat(f.vendors()).containsExactly(VendorDialect.SHOPIFY);
    budget(f, "shopify", "requests", 40, 8, 16);
    assertThat(f.policyOf(limit(f, "shopify")).orElseThrow().window()).contains(Duration.ofSeconds(20));
  }

  @Test
  void theGenericXRateLimitReaderStillReadsWhatNoVendorClaims() {
    RateLimitFields f = parse("X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "9", "X-RateLimit-Reset", "5");
    assertThat(f.vendors()).isEmpty();
    assertThat(f.dialects()).containsExactly(HeaderDialect.X_RATELIMIT);
    RateLimitFields legacy = parse("RateLimit-Limit", "10", "RateLimit-Remaining", "9", "RateLimit-Reset", "5");
    assertThat(legacy.vendors()).isEmpty();
    assertThat(legacy.dialects()).containsExactly(HeaderDialect.DRAFT_03);
  }

  @Test
  void aFieldIsReadByOneDialectOnly() {
    // Discord is asked first and claims the shared fields; GitHub's marker alone reads nothing.
    RateLimitFields f = parse("X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "1", "X-RateLimit-Bucket", "b1",
        "X-RateLimit-Resource", "core", "X-RateLimit-Reset", "2025-03-04T12:01Z");
    assertThat(f.vendors()).containsExactly(VendorDialect.DISCORD);
    assertThat(f.limits()).singleElement().satisfies(l -> assertThat(l.name()).contains("b1"));
    assertThat(f.dialects()).isEmpty();
  }

  @Test
  void aRepeatedVendorFieldIsReportedOnce() {
    RateLimitFields f = parse("x-ratelimit-remaining-requests", "5", "x-ratelimit-remaining-requests", "6");
    assertThat(f.diagnostics()).filteredOn(d -> d.kind() == Kind.REPEATED_FIELD).hasSize(1);
    assertThat(f.limits()).isEmpty();
  }

  @Test
  void malformedVendorValuesAreReportedAndLeftOut() {
    RateLimitFields f = parse("x-ratelimit-remaining-requests", "-1", "x-ratelimit-reset-requests", "99999x",
        "anthropic-ratelimit-requests-reset", "9999-12-31T23:59:59Z", "anthropic-ratelimit-requests-remaining", "",
        "X-Shopify-Shop-Api-Call-Limit", "40");
    assertThat(f.diagnostics()).extracting(Diagnostic::kind).contains(Kind.SYNTAX).doesNotContain(Kind.INTERNAL);
    assertThat(f.limits()).as("nothing well-formed is left of OpenAI's").noneMatch(l -> l.vendor().equals(
        Optional.of(VendorDialect.OPENAI)));
    assertThat(f.limits()).filteredOn(l -> l.vendor().equals(Optional.of(VendorDialect.ANTHROPIC)))
        .singleElement().satisfies(l -> assertThat(l.reset().orElseThrow()).isGreaterThan(Duration.ofDays(365 * 7000L)));
    assertThat(f.vendors()).doesNotContain(VendorDialect.SHOPIFY);
    assertThat(List.copyOf(f.vendors())).containsExactly(VendorDialect.ANTHROPIC);
  }
}
