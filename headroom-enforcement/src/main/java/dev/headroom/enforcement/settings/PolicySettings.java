package dev.headroom.enforcement.settings;

import java.time.Duration;

/**
 * One quota policy (draft-ietf-httpapi-ratelimit-headers-09 section 3), what callers are told about
 * it (Graceful Boundaries sections 2 and 3), its escalation and who bypasses it: the part of the
 * settings model every binding shares. {@link SettingsReader} turns it into a {@code QuotaPolicy},
 * {@code PolicyTexts}, an {@code Escalation} and an {@code AllowList}.
 *
 * <p>A binding with other defaults sets them in a subclass's constructor. Mutable, for binders.
 */
public class PolicySettings {
  /** q: the quota, 1 or more units per window. */
  private Long quota;

  /** w: the window, whole seconds, such as 60s or 1h. */
  private Duration window;

  /** qu: requests, content-bytes or concurrent-requests. */
  private String unit = "requests";

  /**
   * fixed-window, sliding-window, token-bucket or concurrency; token-bucket when unset
   * (concurrency for concurrent-requests).
   */
  private String algorithm;

  /**
   * Who is counted apart: client-ip, api-key, header:Name, user, client-cert, route, method, global, joined by
   * + (composite) and | (alternatives).
   */
  private String partitioning = "global";

  /** For concurrent-requests: the longest a lease is held if a response never completes. */
  private Duration leaseTimeout;

  /** Why this limit exists (Graceful Boundaries section 2); the service's why when unset. */
  private String why;

  /** The limit in words, such as "100 requests per minute per client address". */
  private String limit;

  /** The description in the discovery document. */
  private String description;

  /** The snake_case error of refusals; rate_limit_exceeded by default. */
  private String error;

  /**
   * The published limit type (a token such as cooldown or burst-rate) when the one derived from
   * the policy is not the truth.
   */
  private String limitType;

  /** Where a cached result can be fetched instead (relative or same-origin, Graceful Boundaries SC-6). */
  private String cachedResultUrl;

  /** A different endpoint that may serve the need (relative or same-origin, Graceful Boundaries SC-6). */
  private String alternativeEndpoint;

  /** Where to get higher limits. */
  private String upgradeUrl;

  /** A page for human follow-up. */
  private String humanUrl;

  /**
   * Refusals of one partition while it is told to wait that block it, answered 429
   * abnormal-usage-detected (draft-ietf-httpapi-ratelimit-headers-09 section 5.3); no escalation when unset.
   */
  private Integer escalationThreshold;

  /** How long an escalation blocks a partition, whole seconds of at least 1s; 15m by default. */
  private Duration escalationBlock = Duration.ofMinutes(15);

  /**
   * Requests this policy refuses wait for their turn, up to {@code maxWait}, instead of being
   * refused at once ({@link QueueSettings}); off when unset.
   */
  private QueueSettings queue;

  /** Callers that bypass this policy: neither counted nor refused by it (nor by a plan's version of it). */
  private final AllowSettings allow = new AllowSettings();

  public AllowSettings getAllow() {
    return allow;
  }

  public QueueSettings getQueue() {
    return queue;
  }

  public void setQueue(QueueSettings queue) {
    this.queue = queue;
  }

  public Long getQuota() {
    return quota;
  }

  public void setQuota(Long quota) {
    this.quota = quota;
  }

  public Duration getWindow() {
    return window;
  }

  public void setWindow(Duration window) {
    this.window = window;
  }

  public String getUnit() {
    return unit;
  }

  public void setUnit(String unit) {
    this.unit = unit;
  }

  public String getAlgorithm() {
    return algorithm;
  }

  public void setAlgorithm(String algorithm) {
    this.algorithm = algorithm;
  }

  public String getPartitioning() {
    return partitioning;
  }

  public void setPartitioning(String partitioning) {
    this.partitioning = partitioning;
  }

  public Duration getLeaseTimeout() {
    return leaseTimeout;
  }

  public void setLeaseTimeout(Duration leaseTimeout) {
    this.leaseTimeout = leaseTimeout;
  }

  public String getWhy() {
    return why;
  }

  public void setWhy(String why) {
    this.why = why;
  }

  public String getLimit() {
    return limit;
  }

  public void setLimit(String limit) {
    this.limit = limit;
  }

  public String getDescription() {
    return description;
  }

  public void setDescription(String description) {
    this.description = description;
  }

  public String getError() {
    return error;
  }

  public void setError(String error) {
    this.error = error;
  }

  public String getLimitType() {
    return limitType;
  }

  public void setLimitType(String limitType) {
    this.limitType = limitType;
  }

  public String getCachedResultUrl() {
    return cachedResultUrl;
  }

  public void setCachedResultUrl(String cachedResultUrl) {
    this.cachedResultUrl = cachedResultUrl;
  }

  public String getAlternativeEndpoint() {
    return alternativeEndpoint;
  }

  public void setAlternativeEndpoint(String alternativeEndpoint) {
    this.alternativeEndpoint = alternativeEndpoint;
  }

  public String getUpgradeUrl() {
    return upgradeUrl;
  }

  public void setUpgradeUrl(String upgradeUrl) {
    this.upgradeUrl = upgradeUrl;
  }

  public String getHumanUrl() {
    return humanUrl;
  }

  public void setHumanUrl(String humanUrl) {
    this.humanUrl = humanUrl;
  }

  public Integer getEscalationThreshold() {
    return escalationThreshold;
  }

  public void setEscalationThreshold(Integer escalationThreshold) {
    this.escalationThreshold = escalationThreshold;
  }

  public Duration getEscalationBlock() {
    return escalationBlock;
  }

  public void setEscalationBlock(Duration escalationBlock) {
    this.escalationBlock = escalationBlock;
  }
}
