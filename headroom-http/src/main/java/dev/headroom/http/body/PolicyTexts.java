package dev.headroom.http.body;

import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import java.util.Optional;

/**
 * What the operator says about one policy, to callers: why it exists, how to name it, and where
 * to go instead (Graceful Boundaries sections 2 and 3). Used by refusals ({@link LimitRefusals})
 * and by the discovery document. Only {@code why} is required; everything else has a default
 * derived from the policy.
 *
 * <p>Texts are checked when built ({@link Builder#build()}): {@code why} names no mechanism (SC-2)
 * and restates nothing, no text instructs agents (SC-16), URLs are relative or http(s). Whether
 * machine-actionable URLs are same-origin (SC-6) is checked where the origin is known, in
 * {@link LimitRefusals.Builder#build()}. Immutable.
 */
public final class PolicyTexts {

  private final String why;
  private final String limit;
  private final String description;
  private final String error;
  private final String limitId;
  private final LimitType limitType;
  private final String cachedResultUrl;
  private final String alternativeEndpoint;
  private final String upgradeUrl;
  private final String humanUrl;

  private PolicyTexts(Builder b) {
    this.why = b.why;
    this.limit = b.limit;
    this.description = b.description;
    this.error = b.error;
    this.limitId = b.limitId;
    this.limitType = b.limitType;
    this.cachedResultUrl = b.cachedResultUrl;
    this.alternativeEndpoint = b.alternativeEndpoint;
    this.upgradeUrl = b.upgradeUrl;
    this.humanUrl = b.humanUrl;
  }

  /** Starts the texts with the one required field, {@code why}. */
  public static Builder builder(String why) {
    return new Builder().why(why);
  }

  /** A builder holding these texts. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.why = why;
    b.limit = limit;
    b.description = description;
    b.error = error;
    b.limitId = limitId;
    b.limitType = limitType;
    b.cachedResultUrl = cachedResultUrl;
    b.alternativeEndpoint = alternativeEndpoint;
    b.upgradeUrl = upgradeUrl;
    b.humanUrl = humanUrl;
    return b;
  }

  /** Why the limit exists: a category of protection, never a mechanism. */
  public String why() {
    return why;
  }

  /** The configured limit text, if any; see {@link #limit(QuotaPolicy)} for the one sent. */
  public Optional<String> limit() {
    return Optional.ofNullable(limit);
  }

  /**
   * The limit in concrete terms: the configured text, or one made from the policy, such as
   * {@code 100 requests per hour per client address} or {@code 10 concurrent requests per API key}.
   */
  public String limit(QuotaPolicy policy) {
    return limit != null ? limit : describe(policy);
  }

  /** The discovery description: the configured one, or the limit text as a sentence. */
  public String description(QuotaPolicy policy) {
    return description != null ? description : capitalise(limit(policy)) + ".";
  }

  /** The {@code error} token to send, when not the problem type's. */
  public Optional<String> error() {
    return Optional.ofNullable(error);
  }

  /** The stable limit id: the configured one, or the policy's name. */
  public String limitId(QuotaPolicy policy) {
    return limitId != null ? limitId : policy.name();
  }

  /** The limit type: the configured one, or {@link LimitType#classify(QuotaPolicy)}. */
  public LimitType limitType(QuotaPolicy policy) {
    return limitType != null ? limitType : LimitType.classify(policy);
  }

  /** Where a cached result can be had. */
  public Optional<String> cachedResultUrl() {
    return Optional.ofNullable(cachedResultUrl);
  }

  /** Another endpoint that may serve the need. */
  public Optional<String> alternativeEndpoint() {
    return Optional.ofNullable(alternativeEndpoint);
  }

  /** Where to get higher limits. */
  public Optional<String> upgradeUrl() {
    return Optional.ofNullable(upgradeUrl);
  }

  /** Where a human can follow up. */
  public Optional<String> humanUrl() {
    return Optional.ofNullable(humanUrl);
  }

  /**
   * Whether a refusal under this policy offers constructive guidance in the sense of Graceful
   * Boundaries Level 3 (CONFORMANCE.md): a cached result, an alternative endpoint or an upgrade.
   */
  public boolean isConstructive() {
    return cachedResultUrl != null || alternativeEndpoint != null || upgradeUrl != null;
  }

  static String describe(QuotaPolicy policy) {
    LimitScope scope = LimitScope.of(policy);
    String per;
    switch (scope) {
      case IP:
        per = " per client address";
        break;
      case KEY:
        per = " per API key";
        break;
      case USER:
        per = " per user";
        break;
      default:
        per = " across all callers";
    }
    long q = policy.quota();
    if (policy.unit() == QuotaUnit.CONCURRENT_REQUESTS) {
      return q + (q == 1 ? " concurrent request" : " concurrent requests") + per;
    }
    String unit = policy.unit() == QuotaUnit.CONTENT_BYTES ? (q == 1 ? " byte" : " bytes") : (q == 1 ? " request" : " requests");
    return q + unit + " per " + window(policy.windowSeconds()) + per;
  }

  static String window(long seconds) {
    String[] names = {"day", "hour", "minute", "second"};
    long[] sizes = {86_400, 3_600, 60, 1};
    for (int i = 0; i < sizes.length; i++) {
      if (seconds % sizes[i] == 0) {
        long n = seconds / sizes[i];
        return n == 1 ? names[i] : n + " " + names[i] + "s";
      }
    }
    return seconds + " seconds";
  }

  private static String capitalise(String s) {
    return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
  }

  @Override
  public String toString() {
    return "PolicyTexts{why=" + why + "}";
  }

  /** Builds {@link PolicyTexts}. Not thread-safe. */
  public static final class Builder {
    private String why;
    private String limit;
    private String description;
    private String error;
    private String limitId;
    private LimitType limitType;
    private String cachedResultUrl;
    private String alternativeEndpoint;
    private String upgradeUrl;
    private String humanUrl;

    private Builder() {}

    /** Required: why the limit exists, such as "Limits keep the service available for everyone." */
    public Builder why(String why) {
      this.why = why;
      return this;
    }

    /** The limit in concrete terms; defaults to one made from the policy. */
    public Builder limit(String limit) {
      this.limit = limit;
      return this;
    }

    /** The discovery description; defaults to the limit text as a sentence. */
    public Builder description(String description) {
      this.description = description;
      return this;
    }

    /** The snake_case {@code error} token; defaults to the problem type's. */
    public Builder error(String error) {
      this.error = error;
      return this;
    }

    /** The stable limit id; defaults to the policy name. */
    public Builder limitId(String limitId) {
      this.limitId = limitId;
      return this;
    }

    /**
     * The published limit type, when classification from the policy is not the truth (a
     * {@code cooldown} or {@code burst-rate}, say).
     */
    public Builder limitType(LimitType limitType) {
      this.limitType = limitType;
      return this;
    }

    /** Where a cached result can be had: relative or same-origin (SC-6). */
    public Builder cachedResultUrl(String url) {
      this.cachedResultUrl = url;
      return this;
    }

    /** Another endpoint that may serve the need: relative or same-origin (SC-6). */
    public Builder alternativeEndpoint(String url) {
      this.alternativeEndpoint = url;
      return this;
    }

    /** Where to get higher limits; any http(s) URL. */
    public Builder upgradeUrl(String url) {
      this.upgradeUrl = url;
      return this;
    }

    /** Where a human can follow up; any http(s) URL. */
    public Builder humanUrl(String url) {
      this.humanUrl = url;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the field, the value and what is expected
     */
    public PolicyTexts build() {
      OperatorTextChecks.optional("limit", limit, OperatorTextChecks.MAX_SHORT);
      OperatorTextChecks.why("why", why, limit);
      OperatorTextChecks.optional("description", description, OperatorTextChecks.MAX_TEXT);
      if (error != null) {
        OperatorTextChecks.errorToken("error", error);
      }
      OperatorTextChecks.optional("limitId", limitId, 128);
      OperatorTextChecks.url("cachedResultUrl", cachedResultUrl, false, null);
      OperatorTextChecks.url("alternativeEndpoint", alternativeEndpoint, false, null);
      OperatorTextChecks.url("upgradeUrl", upgradeUrl, false, null);
      OperatorTextChecks.url("humanUrl", humanUrl, false, null);
      return new PolicyTexts(this);
    }
  }
}
