package dev.headroom.http.headers;

import dev.headroom.http.HeaderNames;
import java.util.Locale;
import java.util.Set;

/**
 * A generation of the RateLimit header fields. A route chooses which ones it sends; a parser
 * recognises all of them.
 *
 * <table>
 * <caption>What each dialect writes</caption>
 * <tr><th>dialect</th><th>fields</th><th>what {@code t} (or reset) means</th></tr>
 * <tr><td>{@link #IETF} (the default)</td><td>{@code RateLimit-Policy: "burst";q=100;w=60} and
 *   {@code RateLimit: "burst";r=50;t=2}, every policy, with {@code qu} and {@code pk}
 *   (draft-ietf-httpapi-ratelimit-headers-10 and -11)</td><td>seconds until more quota is
 *   available (section 4.1.2 of -10 and -11); on a refusal Retry-After may be later than
 *   {@code t} (section 6)</td></tr>
 * <tr><td>{@link #IETF_NEXT} (opt-in)</td><td>{@code RateLimit-Policy} as {@link #IETF},
 *   {@code RateLimit: "burst";a=50;w=2;c=1} ({@code c} on cost-weighted routes) and
 *   {@code RateLimit-Partition: "burst";user_id}, the editor's draft after -11
 *   (ietf-wg-httpapi/ratelimit-headers pull request 166), which renames {@code r} to {@code a} and
 *   {@code t} to {@code w} and says unknown parameters MUST be ignored</td><td>as {@link #IETF}</td></tr>
 * <tr><td>{@link #DRAFT_09}</td><td>as {@link #IETF} (draft-08 and -09)</td><td>seconds until the
 *   quota resets, whole again (section 4.1.2 of -09); on a refusal the same moment as Retry-After
 *   (section 6)</td></tr>
 * <tr><td>{@link #DRAFT_07}</td><td>{@code RateLimit: limit=10, remaining=7, reset=2400} (a
 *   Dictionary for the most constraining policy) and {@code RateLimit-Policy: 10;w=3600} (as
 *   Graceful Boundaries section 4 shows)</td><td rowspan="4">seconds until the quota resets</td></tr>
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
 * <p>The two meanings of {@code t} differ for a token bucket and a sliding window: 5 per 10 s after
 * two requests, a token bucket sends {@code r=3;t=2} as {@link #IETF} (the next token) and
 * {@code r=3;t=4} as {@link #DRAFT_09} (the bucket full again). For a fixed window they agree out of
 * debt. The algorithm classes of headroom-core work out both with numbers.
 *
 * <p>Two dialects that write the same field name cannot be sent together
 * ({@link RateLimitHeaders.Builder#build()} refuses them); {@link #X_RATELIMIT} combines with any.
 * A parser cannot tell {@link #IETF} from {@link #DRAFT_09} on the wire, since only the meaning of
 * {@code t} changed: it reports both as {@link #IETF}.
 */
public enum HeaderDialect {
  IETF("ietf", Set.of(HeaderNames.RATELIMIT, HeaderNames.RATELIMIT_POLICY)),
  IETF_NEXT("ietf-next", Set.of(HeaderNames.RATELIMIT, HeaderNames.RATELIMIT_POLICY, HeaderNames.RATELIMIT_PARTITION)),
  DRAFT_09("draft-09", Set.of(HeaderNames.RATELIMIT, HeaderNames.RATELIMIT_POLICY)),
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

  /**
   * The name used in configuration: {@code ietf}, {@code ietf-next}, {@code draft-09},
   * {@code draft-07}, {@code draft-06}, {@code draft-03}, {@code x-ratelimit}.
   */
  public String token() {
    return token;
  }

  /** The field names this dialect writes. */
  public Set<String> fieldNames() {
    return fields;
  }

  /**
   * Whether the dialect names its policies and limits (draft-08 and later): {@link #IETF},
   * {@link #IETF_NEXT} and {@link #DRAFT_09}.
   */
  public boolean namesPolicies() {
    return this == IETF || this == IETF_NEXT || this == DRAFT_09;
  }

  /**
   * Whether {@code t} (or {@code w}) means the time until more quota is available (draft-10 and
   * later) rather than until the quota resets.
   */
  public boolean tUntilMoreQuota() {
    return this == IETF || this == IETF_NEXT;
  }

  /**
   * The dialect for a configuration name. Besides the tokens, the names of the drafts each dialect
   * covers are accepted: {@code draft-10}, {@code draft-11} (ietf), {@code draft-08} (draft-09),
   * {@code draft-04}, {@code draft-05} (draft-06), {@code draft-00} to {@code draft-02} and
   * {@code draft-polli-02} (draft-03).
   *
   * @throws IllegalArgumentException naming the value and the accepted names
   */
  public static HeaderDialect fromToken(String name) {
    if (name != null) {
      switch (name.trim().toLowerCase(Locale.ROOT)) {
        case "ietf": case "draft-10": case "draft-11":
          return IETF;
        case "ietf-next":
          return IETF_NEXT;
        case "draft-09": case "draft-08":
          return DRAFT_09;
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
    throw new IllegalArgumentException("dialect: expected one of " + NAMES + ", got "
        + (name == null ? "null" : "'" + name + "'"));
  }

  /** Every accepted name, as error messages list them: {@value}. */
  public static final String NAMES = "ietf (draft-10, draft-11), ietf-next (the editor's draft after draft-11), "
      + "draft-09 (draft-08, draft-09), draft-07, draft-06 (draft-04 to draft-06), "
      + "draft-03 (draft-00 to draft-03, draft-polli-02), x-ratelimit";

  @Override
  public String toString() {
    return token;
  }
}
