package dev.headroom.http.headers;

import java.util.OptionalLong;

/**
 * Shopify's REST Admin API field, as "Shopify API rate limits", section "REST Admin API rate
 * limits", documents it (https://shopify.dev/docs/api/usage/rate-limits):
 * {@code X-Shopify-Shop-Api-Call-Limit: 32/40}, the requests in a leaky bucket and its size. The
 * bucket leaks a twentieth of its size a second (40 at 2 a second; Shopify Plus, 400 at 20), so
 * it is read as a token bucket: {@code q} the size, {@code w=20} seconds to drain it whole,
 * {@code r} the room left, {@code t} the seconds until it is empty ({@code 32/40}: {@code r=8},
 * {@code t=16}).
 */
final class ShopifyReader implements VendorReader {

  static final String CALL_LIMIT = "X-Shopify-Shop-Api-Call-Limit";
  /** Seconds a full bucket takes to leak empty. */
  static final long DRAIN_SECONDS = 20;

  @Override
  public VendorDialect dialect() {
    return VendorDialect.SHOPIFY;
  }

  @Override
  public boolean read(VendorFields f) {
    String v = f.value(CALL_LIMIT);
    if (v == null) {
      return false;
    }
    f.claim(CALL_LIMIT);
    int slash = v.indexOf('/');
    OptionalLong used = slash < 0 ? OptionalLong.empty() : VendorValues.count(v.substring(0, slash));
    OptionalLong size = slash < 0 ? OptionalLong.empty() : VendorValues.count(v.substring(slash + 1));
    if (used.isEmpty() || size.isEmpty() || size.getAsLong() == 0) {
      f.note(Diagnostic.Kind.SYNTAX, CALL_LIMIT, "'" + v + "', expected used/size such as 32/40");
      return false;
    }
    long u = Math.min(used.getAsLong(), size.getAsLong());
    // Seconds until empty: u / (size / 20), rounded up; u * 20 cannot overflow (both below 10^15 * 20).
    long drain = (u * DRAIN_SECONDS + size.getAsLong() - 1) / size.getAsLong();
    return f.budget(dialect(), null).limit(size).remaining(OptionalLong.of(size.getAsLong() - u))
        .resetSeconds(OptionalLong.of(drain)).windowSeconds(DRAIN_SECONDS).add();
  }
}
