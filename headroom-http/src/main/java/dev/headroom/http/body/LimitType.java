package dev.headroom.http.body;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import java.time.Duration;
import java.util.Objects;

/**
 * A Graceful Boundaries limit category (spec section 1, "Limit types"), as sent in a discovery
 * entry's {@code type} and a refusal's {@code limitType}. Services may define more types, so this
 * is a validated token rather than an enum. Immutable.
 */
public final class LimitType {

  /** Requests per IP address per time window. */
  public static final LimitType IP_RATE = new LimitType("ip-rate");
  /** Requests per API key per time window. */
  public static final LimitType KEY_RATE = new LimitType("key-rate");
  /** Requests per authenticated user per time window. */
  public static final LimitType USER_RATE = new LimitType("user-rate");
  /** Requests across all callers per time window. */
  public static final LimitType GLOBAL_RATE = new LimitType("global-rate");
  /** One operation per resource per time window. */
  public static final LimitType RESOURCE_DEDUP = new LimitType("resource-dedup");
  /** Minimum interval between successive requests of a type. */
  public static final LimitType COOLDOWN = new LimitType("cooldown");
  /** Maximum simultaneous in-flight requests. */
  public static final LimitType CONCURRENCY = new LimitType("concurrency");
  /** Fixed allocation per billing period or other long-lived window. */
  public static final LimitType QUOTA = new LimitType("quota");
  /** Requests consume variable units such as tokens, credits or bytes. */
  public static final LimitType COST_LIMIT = new LimitType("cost-limit");
  /** Short-window allowance constraining bursts. */
  public static final LimitType BURST_RATE = new LimitType("burst-rate");

  /** Fixed windows this long or longer are a {@link #QUOTA}, an allocation rather than a rate. */
  public static final Duration QUOTA_WINDOW = Duration.ofDays(1);

  private final String token;

  private LimitType(String token) {
    this.token = token;
  }

  /**
   * A type by its token: one of the spec's or a service-defined one.
   *
   * @throws IllegalArgumentException unless 1 to 64 lowercase letters, digits and hyphens
   */
  public static LimitType of(String token) {
    if (token == null || token.isEmpty() || token.length() > 64 || !token.matches("[a-z0-9][a-z0-9-]*")) {
      throw new IllegalArgumentException("limitType: expected 1 to 64 lowercase letters, digits and hyphens "
          + "such as ip-rate or cost-limit, got " + (token == null ? "null" : "'" + OperatorTextChecks.printable(token) + "'"));
    }
    return new LimitType(token);
  }

  /**
   * The type a policy is published as, from what it counts and how it is partitioned:
   * {@code concurrent-requests} is {@link #CONCURRENCY}; {@code content-bytes} is
   * {@link #COST_LIMIT} (cost metric {@code bytes}); a fixed window of a day or more is a
   * {@link #QUOTA}; otherwise the partitioning's scope decides: ip, key, user or global rate.
   * Reads the policy's typed partitioning, which was parsed when the policy was built: nothing is
   * parsed here, on the refusal path.
   */
  public static LimitType classify(QuotaPolicy policy) {
    if (policy.unit() == QuotaUnit.CONCURRENT_REQUESTS) {
      return CONCURRENCY;
    }
    if (policy.unit() == QuotaUnit.CONTENT_BYTES) {
      return COST_LIMIT;
    }
    if (policy.algorithm() == Algorithm.FIXED_WINDOW && policy.window().compareTo(QUOTA_WINDOW) >= 0) {
      return QUOTA;
    }
    switch (LimitScope.of(policy)) {
      case IP:
        return IP_RATE;
      case KEY:
        return KEY_RATE;
      case USER:
        return USER_RATE;
      default:
        return GLOBAL_RATE;
    }
  }

  /** The token. */
  public String token() {
    return token;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LimitType && ((LimitType) o).token.equals(token);
  }

  @Override
  public int hashCode() {
    return Objects.hashCode(token);
  }

  @Override
  public String toString() {
    return token;
  }
}
