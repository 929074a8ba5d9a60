package dev.headroom.http.body;

import dev.headroom.Partitioning;
import dev.headroom.QuotaPolicy;

/**
 * Who a limit tells apart: the Graceful Boundaries {@code scope} vocabulary of a refusal and of a
 * discovery entry ({@code ip}, {@code key}, {@code user}, {@code global}; Graceful Boundaries
 * section 3, "Refusal fields"). Read from a policy's typed partitioning, so that the words a caller
 * reads follow from the same partitioning the store decides by.
 */
public enum LimitScope {
  /** One partition per client address. */
  IP("ip"),
  /** One partition per API key, credential header or client certificate. */
  KEY("key"),
  /** One partition per authenticated user. */
  USER("user"),
  /** Callers are not told apart (global, or per route or method only). */
  GLOBAL("global");

  private final String token;

  LimitScope(String token) {
    this.token = token;
  }

  /** The token, as sent in {@code scope}. */
  public String token() {
    return token;
  }

  /**
   * Who a partitioning tells apart: the most specific caller component of its first alternative
   * (user, then key, then ip), or {@link #GLOBAL} when it tells no callers apart.
   */
  public static LimitScope of(Partitioning partitioning) {
    LimitScope best = GLOBAL;
    for (Partitioning.Part p : partitioning.alternatives().get(0)) {
      LimitScope s = of(p.component());
      if (s.rank() > best.rank()) {
        best = s;
      }
    }
    return best;
  }

  /** Who the policy tells apart, from its typed partitioning; {@link #GLOBAL} when it has none. */
  public static LimitScope of(QuotaPolicy policy) {
    return policy.partitioning().map(LimitScope::of).orElse(GLOBAL);
  }

  private static LimitScope of(Partitioning.Component c) {
    switch (c) {
      case CLIENT_IP:
        return IP;
      case API_KEY:
      case HEADER:
      case CLIENT_CERT:
        return KEY;
      case USER:
        return USER;
      default:
        return GLOBAL;
    }
  }

  /** How specific: user over key over ip over global. */
  private int rank() {
    switch (this) {
      case USER:
        return 3;
      case KEY:
        return 2;
      case IP:
        return 1;
      default:
        return 0;
    }
  }
}
