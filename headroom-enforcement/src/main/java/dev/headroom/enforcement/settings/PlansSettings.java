package dev.headroom.enforcement.settings;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Named plans, each a set of overrides of the policies' quota, window and algorithm, and the
 * fallback plan of a caller whose plan cannot be found. {@link SettingsReader} turns them into
 * headroom-http's {@code Plans}. Mutable, for binders.
 */
public class PlansSettings {

  /** The plan of callers with no identity, an unknown plan, or a resolver that fails or is too slow. */
  private String fallback;

  /** The longest a request waits for the plan resolver before the fallback plan applies. */
  private Duration deadline = Duration.ofMillis(200);

  /** The plans by name, smallest first: a refusal suggests the next plan. */
  private Map<String, Plan> catalog = new LinkedHashMap<>();

  public String getFallback() {
    return fallback;
  }

  public void setFallback(String fallback) {
    this.fallback = fallback;
  }

  public Duration getDeadline() {
    return deadline;
  }

  public void setDeadline(Duration deadline) {
    this.deadline = deadline;
  }

  public Map<String, Plan> getCatalog() {
    return catalog;
  }

  public void setCatalog(Map<String, Plan> catalog) {
    this.catalog = catalog;
  }

  /** One plan. */
  public static class Plan {
    /** The plan's page (relative or on the service's origin). */
    private String url;

    /** Overrides by policy name. */
    private Map<String, Override> policies = new LinkedHashMap<>();

    public String getUrl() {
      return url;
    }

    public void setUrl(String url) {
      this.url = url;
    }

    public Map<String, Override> getPolicies() {
      return policies;
    }

    public void setPolicies(Map<String, Override> policies) {
      this.policies = policies;
    }
  }

  /** What a plan changes in one policy; what is not set is the policy's own. */
  public static class Override {
    /** q under this plan. */
    private Long quota;

    /** w under this plan, whole seconds. */
    private Duration window;

    /** The algorithm under this plan: fixed-window, sliding-window, token-bucket or concurrency. */
    private String algorithm;

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

    public String getAlgorithm() {
      return algorithm;
    }

    public void setAlgorithm(String algorithm) {
      this.algorithm = algorithm;
    }
  }
}
