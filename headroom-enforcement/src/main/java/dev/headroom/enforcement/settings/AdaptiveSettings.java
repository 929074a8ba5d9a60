package dev.headroom.enforcement.settings;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A route's adaptive concurrency in the settings model (headroom-enforcement's
 * {@code AdaptiveConcurrency}): a {@code concurrent-requests} policy whose quota is learnt from the
 * route's latency and failures. Present, it turns adaptive concurrency on; every unset value is the
 * default. The gateway's {@code routes[].adaptive}, Spring Boot's {@code headroom.routes[i].adaptive.*}.
 *
 * <p>Mutable, for binders.
 */
public class AdaptiveSettings {

  /** The name of the concurrent-requests policy the learnt limit is advertised under; adaptive by default. */
  private String name;

  /** The least the limit falls to, at least 1; 1 by default. */
  private Integer minLimit;

  /** The most the limit grows to; 1000 by default. */
  private Integer maxLimit;

  /** The limit before anything is learnt, from min-limit to max-limit; 20 (within them) by default. */
  private Integer initialLimit;

  /** How much of each new estimate the limit takes, above 0 and at most 1; 0.2 by default. */
  private Double smoothing;

  /** How far latency may rise over its baseline (the least seen, forgotten slowly) before the limit falls, 1 to 10; 1.5 by default. */
  private Double tolerance;

  /** The shortest window whose responses make one latency sample, 1ms to 1m; 1s by default. */
  private Duration window;

  /** The fewest responses a window needs before it is a sample, 1 to 10000; 10 by default. */
  private Integer windowSamples;

  /** Over how many samples the baseline latency drifts up to a new normal, 1 to 100000; 600 by default. */
  private Integer longWindow;

  /** What the limit is multiplied by for a window with a failure (a 5xx, no answer), above 0 and below 1; 0.9 by default. */
  private Double backoff;

  /** Whether the route's quota policies are reduced by the learnt limit's factor (limit over the highest learnt) and restored with it; true by default. */
  private Boolean scaleQuotas;

  /**
   * Each plan's guaranteed share of the learnt limit under overload, by plan name: fractions above 0
   * and at most 1, together at most 1; a plan may borrow what the others leave idle, and plans not
   * named share what is left. None by default.
   */
  private Map<String, Double> shares = new LinkedHashMap<>();

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public Integer getMinLimit() {
    return minLimit;
  }

  public void setMinLimit(Integer minLimit) {
    this.minLimit = minLimit;
  }

  public Integer getMaxLimit() {
    return maxLimit;
  }

  public void setMaxLimit(Integer maxLimit) {
    this.maxLimit = maxLimit;
  }

  public Integer getInitialLimit() {
    return initialLimit;
  }

  public void setInitialLimit(Integer initialLimit) {
    this.initialLimit = initialLimit;
  }

  public Double getSmoothing() {
    return smoothing;
  }

  public void setSmoothing(Double smoothing) {
    this.smoothing = smoothing;
  }

  public Double getTolerance() {
    return tolerance;
  }

  public void setTolerance(Double tolerance) {
    this.tolerance = tolerance;
  }

  public Duration getWindow() {
    return window;
  }

  public void setWindow(Duration window) {
    this.window = window;
  }

  public Integer getWindowSamples() {
    return windowSamples;
  }

  public void setWindowSamples(Integer windowSamples) {
    this.windowSamples = windowSamples;
  }

  public Integer getLongWindow() {
    return longWindow;
  }

  public void setLongWindow(Integer longWindow) {
    this.longWindow = longWindow;
  }

  public Double getBackoff() {
    return backoff;
  }

  public void setBackoff(Double backoff) {
    this.backoff = backoff;
  }

  public Boolean getScaleQuotas() {
    return scaleQuotas;
  }

  public void setScaleQuotas(Boolean scaleQuotas) {
    this.scaleQuotas = scaleQuotas;
  }

  public Map<String, Double> getShares() {
    return shares;
  }

  public void setShares(Map<String, Double> shares) {
    this.shares = shares;
  }
}
