package dev.headroom.http.headers;

import java.util.OptionalLong;

/**
 * Azure Resource Manager's fields, as "Understand how Azure Resource Manager throttles requests",
 * section "Remaining requests", documents them
 * (https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling):
 * {@code x-ms-ratelimit-remaining-subscription-reads}, {@code -writes} and {@code -deletes}, the
 * requests left in the subscription's budget of each kind, and
 * {@code x-ms-ratelimit-remaining-resource}, a resource provider's budgets as
 * {@code Name;count} pairs in one value ({@code Microsoft.Compute/HighCostGet3Min;107,
 * Microsoft.Compute/HighCostGet30Min;1197}); a 429 says {@code retry-after} in seconds, and some
 * providers {@code retry-after-ms} or {@code x-ms-retry-after-ms}, which replace it.
 *
 * <p>Only the remaining units are stated: no limit, no reset, so each budget is read as just that,
 * a {@code ServiceLimitItem} with a remaining count and an empty {@code reset()}; nothing is
 * invented for the fields Azure does not send. headroom-client reads a budget that states neither a
 * reset nor a window as one whose reset is unstated (its {@code ResetMeaning.UNSTATED}): it spends
 * what remains, and once it has run out one request at a time asks, whose refusal says with its
 * Retry-After when quota returns. It is refused at most once per window, instead of waiting blind
 * for a reset it was never told.
 */
final class AzureResourceManagerReader implements VendorReader {

  static final String SUBSCRIPTION = "x-ms-ratelimit-remaining-subscription-";
  static final String RESOURCE = "x-ms-ratelimit-remaining-resource";
  static final String MS_RETRY_AFTER_MS = "x-ms-retry-after-ms";
  /** Most pairs read from one {@code x-ms-ratelimit-remaining-resource} value. */
  static final int MAX_PAIRS = 16;

  @Override
  public VendorDialect dialect() {
    return VendorDialect.AZURE_RESOURCE_MANAGER;
  }

  @Override
  public boolean read(VendorFields f) {
    boolean seen = false;
    for (String kind : new String[] {"reads", "writes", "deletes"}) {
      String field = SUBSCRIPTION + kind;
      if (f.value(field) != null) {
        f.claim(field);
        seen |= remaining(f, "subscription-" + kind, f.count(field));
      }
    }
    String resource = f.value(RESOURCE);
    if (resource != null) {
      f.claim(RESOURCE);
      String[] pairs = resource.split(",", MAX_PAIRS + 1);
      for (int i = 0; i < Math.min(pairs.length, MAX_PAIRS); i++) {
        int semi = pairs[i].lastIndexOf(';');
        OptionalLong n = semi < 0 ? OptionalLong.empty() : VendorValues.count(pairs[i].substring(semi + 1));
        if (n.isEmpty()) {
          f.note(Diagnostic.Kind.SYNTAX, RESOURCE, "'" + pairs[i].strip() + "', expected Name;count");
          continue;
        }
        seen |= remaining(f, pairs[i].substring(0, semi).strip(), n);
      }
    }
    if (seen) {
      OpenAiReader.retryAfterMs(f, OpenAiReader.RETRY_AFTER_MS);
      OpenAiReader.retryAfterMs(f, MS_RETRY_AFTER_MS);
    }
    return seen;
  }

  private boolean remaining(VendorFields f, String name, OptionalLong remaining) {
    return remaining.isPresent() && f.budget(dialect(), name).remaining(remaining).add();
  }
}
