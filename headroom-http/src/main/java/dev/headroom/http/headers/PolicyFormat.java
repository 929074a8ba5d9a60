package dev.headroom.http.headers;

import dev.headroom.Partitioning;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.http.sf.StructuredFields;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The parts of a policy's fields that never change between responses, serialised once: the
 * -08+ {@code RateLimit-Policy} member without {@code pk}, the {@code RateLimit} member up to
 * {@code r=} (or {@code a=} in the editor's draft after -11), the {@code RateLimit-Partition} member
 * when the policy's partitioning has registered dimensions, and the pre -08 {@code q;w=w} quota
 * policy. The hot path appends {@code r}, {@code t} and {@code pk} to these. Immutable.
 */
final class PolicyFormat {
  final String ietfPolicy;
  final String ietfLimitPrefix;
  final String nextLimitPrefix;
  /** The {@code RateLimit-Partition} member, or null when the partitioning cannot be told in it. */
  final String partition;
  final String legacyPolicy;

  PolicyFormat(String name, long quota, String unit, long windowSeconds) {
    this(name, quota, unit, windowSeconds, null);
  }

  private PolicyFormat(String name, long quota, String unit, long windowSeconds, Partitioning partitioning) {
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
    this.nextLimitPrefix = sb.substring(0, nameEnd) + ";a=";
    this.partition = partition(sb.substring(0, nameEnd), partitioning);
    this.legacyPolicy = windowSeconds > 0 ? quota + ";w=" + windowSeconds : Long.toString(quota);
  }

  static PolicyFormat of(QuotaPolicy p) {
    return new PolicyFormat(p.name(), p.quota(), p.unit().token(), p.windowSeconds(), p.partitioning().orElse(null));
  }

  /**
   * The {@code RateLimit-Partition} member of a policy: its identifier with one Boolean parameter
   * per dimension its partitions are keyed by, in the names the editor's draft after -11 registers
   * ({@code user_id}, {@code client_id}, {@code method}); a global policy has none. Null when there
   * is no partitioning, when it has alternatives, or when a component has no registered dimension
   * (the client address, the route, a named header): the field then says nothing rather than
   * something partial.
   */
  static String partition(String serialisedName, Partitioning partitioning) {
    if (partitioning == null || partitioning.alternatives().size() != 1) {
      return null;
    }
    SortedSet<String> dimensions = new TreeSet<>();
    for (Partitioning.Part part : partitioning.alternatives().get(0)) {
      String d = switch (part.component()) {
        case USER -> "user_id";
        case API_KEY -> "client_id";
        case METHOD -> "method";
        case GLOBAL -> "";
        default -> null;
      };
      if (d == null) {
        return null;
      }
      if (!d.isEmpty()) {
        dimensions.add(d);
      }
    }
    StringBuilder sb = new StringBuilder(serialisedName);
    for (String d : dimensions) {
      sb.append(';').append(d);
    }
    return sb.toString();
  }
}
