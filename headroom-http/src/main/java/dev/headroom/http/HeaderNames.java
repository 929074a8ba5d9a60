package dev.headroom.http;

/**
 * Every HTTP field name Headroom writes or reads, in one place and in the spelling of the
 * specification that defines it. HTTP field names are case-insensitive (RFC 9110 section 5.1);
 * readers must compare ignoring case.
 */
public final class HeaderNames {

  /** Service limits: -08+ List of Items (draft-ietf-httpapi-ratelimit-headers-09 section 4), -07 Dictionary. */
  public static final String RATELIMIT = "RateLimit";

  /** Quota policies: -08+ List of named Items (draft-09 section 3), -04 to -07 List of Integers. */
  public static final String RATELIMIT_POLICY = "RateLimit-Policy";

  /**
   * The editor's draft after draft-ietf-httpapi-ratelimit-headers-11 (ietf-wg-httpapi/ratelimit-headers
   * pull request 166): the dimensions each policy's partitions are keyed by.
   */
  public static final String RATELIMIT_PARTITION = "RateLimit-Partition";

  /** The expiring limit, with quota policies up to draft-03 (draft-polli-ratelimit-headers-02 section 3.1). */
  public static final String RATELIMIT_LIMIT = "RateLimit-Limit";

  /** Remaining quota units up to draft-06 (draft-polli-ratelimit-headers-02 section 3.2). */
  public static final String RATELIMIT_REMAINING = "RateLimit-Remaining";

  /** Seconds until the quota resets up to draft-06 (draft-polli-ratelimit-headers-02 section 3.3). */
  public static final String RATELIMIT_RESET = "RateLimit-Reset";

  /** The de-facto limit field (draft-09, "RateLimit header fields currently used on the web"). */
  public static final String X_RATELIMIT_LIMIT = "X-RateLimit-Limit";

  /** The de-facto remaining field. */
  public static final String X_RATELIMIT_REMAINING = "X-RateLimit-Remaining";

  /** The de-facto reset field: delta seconds or Unix epoch seconds, depending on the server. */
  public static final String X_RATELIMIT_RESET = "X-RateLimit-Reset";

  /** RFC 9110 section 10.2.3. */
  public static final String RETRY_AFTER = "Retry-After";

  /** RFC 9110 section 6.6.1. */
  public static final String DATE = "Date";

  private HeaderNames() {}
}
