package dev.headroom.http.headers;

import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.http.sf.StructuredFields;

/**
 * The parts of a policy's fields that never change between responses, serialised once: the
 * -08+ {@code RateLimit-Policy} member without {@code pk}, the {@code RateLimit} member up to
 * {@code r=}, and the pre -08 {@code q;w=w} quota policy. The hot path appends {@code r}, {@code t}
 * and {@code pk} to these. Immutable.
 */
final class PolicyFormat {
  final String ietfPolicy;
  final String ietfLimitPrefix;
  final String legacyPolicy;

  PolicyFormat(String name, long quota, String unit, long windowSeconds) {
    quota = RateLimitHeaders.sfInteger(quota);
    StringBuilder sb = StructuredFields.appendString(new StringBuilder(48), name);
    int nameEnd = sb.length();
    sb.append(";q=").append(quota);
    if (unit != null && !unit.equals(QuotaUnit.REQUESTS.token())) {
      StructuredFields.appendString(sb.append(";qu="), unit);
    }
    if (windowSeconds > 0) {
      sb.append(";w=").append(windowSeconds);
    }
    this.ietfPolicy = sb.toString();
    this.ietfLimitPrefix = sb.substring(0, nameEnd) + ";r=";
    this.legacyPolicy = windowSeconds > 0 ? quota + ";w=" + windowSeconds : Long.toString(quota);
  }

  static PolicyFormat of(QuotaPolicy p) {
    return new PolicyFormat(p.name(), p.quota(), p.unit().token(), p.windowSeconds());
  }
}
