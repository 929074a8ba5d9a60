package dev.headroom.enforcement.settings;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The root of a binding of the settings model: why the service limits at all, and its policies by
 * name, which {@link SettingsReader#policies} reads. A binding's properties class extends it (as
 * Resilience4j's Spring properties extend its framework-common shape), with its own policy type
 * when its policies have other defaults.
 *
 * @param <P> the binding's policy settings
 */
public class LimitSettings<P extends PolicySettings> {

  /**
   * Why limits exist, for every policy without a why of its own: a category of protection, shown
   * in refusals and in discovery (Graceful Boundaries section 2).
   */
  private String why;

  /** The quota policies, by name. */
  private Map<String, P> policies = new LinkedHashMap<>();

  /** With the binding's default why. */
  protected LimitSettings(String why) {
    this.why = why;
  }

  public String getWhy() {
    return why;
  }

  public void setWhy(String why) {
    this.why = why;
  }

  public Map<String, P> getPolicies() {
    return policies;
  }

  public void setPolicies(Map<String, P> policies) {
    this.policies = policies;
  }
}
