package dev.headroom.http.headers;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * OpenAI's fields, as "Rate limits", section "Rate limits in headers", documents them
 * (https://platform.openai.com/docs/guides/rate-limits): for each budget, {@code requests} and
 * {@code tokens}, {@code x-ratelimit-limit-<budget>} (the most the budget holds),
 * {@code x-ratelimit-remaining-<budget>} and {@code x-ratelimit-reset-<budget>}, the time until the
 * budget is back to its limit as a Go duration ({@code 1s}, {@code 6m0s}, {@code 12ms},
 * {@code 1h2m3.5s}). Deployments on Azure OpenAI add {@code retry-after-ms} to a 429
 * ("Azure OpenAI quotas and limits", https://learn.microsoft.com/azure/ai-services/openai/quotas-limits),
 * which replaces Retry-After's whole seconds.
 *
 * <p>Example: {@code x-ratelimit-limit-requests: 60}, {@code x-ratelimit-remaining-requests: 59},
 * {@code x-ratelimit-reset-requests: 1s} read as the budget {@code "requests";q=60} with
 * {@code r=59;t=1}; {@code -tokens} as {@code "tokens";q=150000;qu="tokens"}.
 */
final class OpenAiReader implements VendorReader {

  static final String RETRY_AFTER_MS = "retry-after-ms";

  @Override
  public VendorDialect dialect() {
    return VendorDialect.OPENAI;
  }

  @Override
  public boolean read(VendorFields f) {
    boolean seen = false;
    for (String budget : new String[] {"requests", "tokens"}) {
      String limit = "x-ratelimit-limit-" + budget;
      String remaining = "x-ratelimit-remaining-" + budget;
      String reset = "x-ratelimit-reset-" + budget;
      if (f.value(limit) == null && f.value(remaining) == null && f.value(reset) == null) {
        continue;
      }
      f.claim(limit, remaining, reset);
      OptionalLong l = f.count(limit);
      OptionalLong r = f.count(remaining);
      seen |= f.budget(dialect(), budget).unit(budget).limit(l).remaining(r)
          .reset(f.read(reset, VendorValues::goDuration, "a Go duration such as 1s, 6m0s or 12ms")).add();
    }
    if (seen) {
      retryAfterMs(f, RETRY_AFTER_MS);
    }
    return seen;
  }

  /** A retry-after in milliseconds (Azure's {@code retry-after-ms}, {@code x-ms-retry-after-ms}). */
  static void retryAfterMs(VendorFields f, String field) {
    Optional<Duration> ms = f.read(field, VendorValues::millis, "milliseconds");
    if (ms.isPresent()) {
      f.claim(field);
      f.retryAfter(ms.get());
    }
  }
}
