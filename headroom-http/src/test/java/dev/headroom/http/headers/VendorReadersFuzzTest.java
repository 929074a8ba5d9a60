package dev.headroom.http.headers;

import static dev.headroom.http.headers.RateLimitFieldsFuzzTest.check;
import static dev.headroom.http.headers.RateLimitFieldsFuzzTest.lines;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Hostile input for every vendor reader ({@link VendorReaders}): each fuzz test fills one
 * vendor's fields (and the fields it shares with others) with fuzzed lines. Nothing may throw or
 * fail inside a reader, and what is kept must satisfy the model's ranges
 * ({@link RateLimitFieldsFuzzTest#check}).
 *
 * <p>Plain {@code mvn verify} replays the regression inputs under
 * {@code src/test/resources/dev/headroom/http/headers/VendorReadersFuzzTestInputs/<method>/};
 * {@code JAZZER_FUZZ=1} fuzzes (see headroom-http/README.md).
 */
class VendorReadersFuzzTest {

  private static void fields(FuzzedDataProvider data, String... names) {
    Map<String, List<String>> h = new HashMap<>();
    for (String n : names) {
      h.put(n, lines(data));
    }
    check(h);
  }

  @FuzzTest(maxDuration = "30s")
  void openAi(FuzzedDataProvider data) {
    fields(data, "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests",
        "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens", "retry-after-ms");
  }

  @FuzzTest(maxDuration = "30s")
  void anthropic(FuzzedDataProvider data) {
    fields(data, "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-requests-reset", "anthropic-ratelimit-input-tokens-reset",
        "anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-tokens-limit", "retry-after");
  }

  @FuzzTest(maxDuration = "30s")
  void gitHub(FuzzedDataProvider data) {
    fields(data, "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-used", "x-ratelimit-reset",
        "x-ratelimit-resource");
  }

  @FuzzTest(maxDuration = "30s")
  void discord(FuzzedDataProvider data) {
    fields(data, "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-reset-after",
        "x-ratelimit-bucket", "x-ratelimit-global", "x-ratelimit-scope");
  }

  @FuzzTest(maxDuration = "30s")
  void atlassian(FuzzedDataProvider data) {
    fields(data, "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-NearLimit",
        "RateLimit-Reason", "Beta-RateLimit-Policy", "Beta-RateLimit");
  }

  @FuzzTest(maxDuration = "30s")
  void azureResourceManager(FuzzedDataProvider data) {
    fields(data, "x-ms-ratelimit-remaining-subscription-reads", "x-ms-ratelimit-remaining-subscription-writes",
        "x-ms-ratelimit-remaining-subscription-deletes", "x-ms-ratelimit-remaining-resource", "retry-after-ms",
        "x-ms-retry-after-ms");
  }

  @FuzzTest(maxDuration = "30s")
  void oktaAndX(FuzzedDataProvider data) {
    fields(data, "X-Rate-Limit-Limit", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset");
  }

  @FuzzTest(maxDuration = "30s")
  void kong(FuzzedDataProvider data) {
    fields(data, "X-RateLimit-Limit-Second", "X-RateLimit-Remaining-Second", "X-RateLimit-Limit-Month",
        "X-RateLimit-Remaining-Year", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset");
  }

  @FuzzTest(maxDuration = "30s")
  void shopify(FuzzedDataProvider data) {
    fields(data, "X-Shopify-Shop-Api-Call-Limit");
  }
}
