package dev.headroom.http.headers;

import dev.headroom.http.HeaderNames;
import java.util.Set;

/**
 * A generation of the RateLimit header fields. A route chooses which ones it sends; a parser
 * recognises all of them.
 *
 * <table>
 * <caption>What each dialect writes</caption>
 * <tr><th>dialect</th><th>fields</th></tr>
 * <tr><td>{@link #IETF}</td><td>{@code RateLimit-Policy: "burst";q=100;w=60} and
 *   {@code RateLimit: "burst";r=50;t=30}, every policy, with {@code qu} and {@code pk}
 *   (draft-ietf-httpapi-ratelimit-headers-08 to -10)</td></tr>
 * <tr><td>{@link #DRAFT_07}</td><td>{@code RateLimit: limit=10, remaining=7, reset=2400} (a
 *   Dictionary for the most constraining policy) and {@code RateLimit-Policy: 10;w=3600} (as
 *   Graceful Boundaries section 4 shows)</td></tr>
 * <tr><td>{@link #DRAFT_06}</td><td>{@code RateLimit-Limit: 10}, {@code RateLimit-Remaining},
 *   {@code RateLimit-Reset} and {@code RateLimit-Policy: 10;w=1, 50;w=60} (draft-04 to -06, where
 *   the policies were split out of RateLimit-Limit)</td></tr>
 * <tr><td>{@link #DRAFT_03}</td><td>{@code RateLimit-Limit: 10, 10;w=1, 50;w=60} (expiring limit,
 *   then the quota policies), {@code RateLimit-Remaining}, {@code RateLimit-Reset}
 *   (draft-polli-ratelimit-headers-02 section 3, draft-ietf -00 to -03)</td></tr>
 * <tr><td>{@link #X_RATELIMIT}</td><td>{@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining},
 *   {@code X-RateLimit-Reset} (delta or epoch seconds), the de-facto form</td></tr>
 * </table>
 *
 * <p>Two dialects that write the same field name cannot be sent together
 * ({@link RateLimitHeaders.Builder#build()} refuses them); {@link #X_RATELIMIT} combines with any.
 */
public enum HeaderDialect {
  IETF("ietf", Set.of(HeaderNames.RATELIMIT, HeaderNames.RATELIMIT_POLICY)),
  DRAFT_07("draft-07", Set.of(HeaderNames.RATELIMIT, HeaderNames.RATELIMIT_POLICY)),
  DRAFT_06("draft-06", Set.of(HeaderNames.RATELIMIT_LIMIT, HeaderNames.RATELIMIT_REMAINING,
      HeaderNames.RATELIMIT_RESET, HeaderNames.RATELIMIT_POLICY)),
  DRAFT_03("draft-03", Set.of(HeaderNames.RATELIMIT_LIMIT, HeaderNames.RATELIMIT_REMAINING,
      HeaderNames.RATELIMIT_RESET)),
  X_RATELIMIT("x-ratelimit", Set.of(HeaderNames.X_RATELIMIT_LIMIT, HeaderNames.X_RATELIMIT_REMAINING,
      HeaderNames.X_RATELIMIT_RESET));

  private final String token;
  private final Set<String> fields;

  HeaderDialect(String token, Set<String> fields) {
    this.token = token;
    this.fields = fields;
  }

  /** The name used in configuration: {@code ietf}, {@code draft-07}, {@code draft-06}, {@code draft-03}, {@code x-ratelimit}. */
  public String token() {
    return token;
  }

  /** The field names this dialect writes. */
  public Set<String> fieldNames() {
    return fields;
  }

  /**
   * The dialect for a configuration name. Besides the tokens, the names of the drafts each dialect
   * covers are accepted: {@code draft-08}, {@code draft-09}, {@code draft-10} (ietf),
   * {@code draft-04}, {@code draft-05} (draft-06), {@code draft-00} to {@code draft-02} and
   * {@code draft-polli-02} (draft-03).
   *
   * @throws IllegalArgumentException naming the value and the accepted names
   */
  public static HeaderDialect fromToken(String name) {
    if (name != null) {
      switch (name.trim().toLowerCase(java.util.Locale.ROOT)) {
        case "ietf": case "draft-08": case "draft-09": case "draft-10":
          return IETF;
        case "draft-07":
          return DRAFT_07;
        case "draft-06": case "draft-05": case "draft-04":
          return DRAFT_06;
        case "draft-03": case "draft-02": case "draft-01": case "draft-00": case "draft-polli-02":
          return DRAFT_03;
        case "x-ratelimit":
          return X_RATELIMIT;
        default:
          break;
      }
    }
    throw new IllegalArgumentException("dialect: expected one of ietf (draft-08 to draft-10), draft-07, "
        + "draft-06 (draft-04 to draft-06), draft-03 (draft-00 to draft-03, draft-polli-02), x-ratelimit, got "
        + (name == null ? "null" : "'" + name + "'"));
  }

  @Override
  public String toString() {
    return token;
  }
}
