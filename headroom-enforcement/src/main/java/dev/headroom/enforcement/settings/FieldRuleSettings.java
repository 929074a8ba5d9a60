package dev.headroom.enforcement.settings;

import dev.headroom.http.headers.FieldRules;
import java.time.Duration;

/**
 * The optional field rules of draft-ietf-httpapi-ratelimit-headers-09 (headroom-http
 * {@link FieldRules}) for every route or one route; an unset rule is not applied.
 */
public class FieldRuleSettings {

  /**
   * The most whole seconds, from 0s to 1h, added at random to every reset (t) and to Retry-After
   * of a response, so that clients refused together come back spread out (draft-09 section 8.5).
   */
  private Duration jitter;

  /**
   * Write the fields of allowed requests only when some policy's utilisation (1 - r/q) reaches
   * this share, from above 0 to 1 (draft-09 section 6.2); always when unset. Refusals always carry them.
   */
  private Double onlyNearExhaustion;

  /**
   * Cap each policy's remaining/reset ratio (r / t) at this factor, 1 or more, times its nominal
   * throughput q / w (draft-09 sections 6 and 8.5); no cap when unset.
   */
  private Double capRemainingToResetRatio;

  /** The shortest window the ratio cap applies to; 0s (every window) by default. */
  private Duration capMinWindow = Duration.ZERO;

  public Duration getJitter() {
    return jitter;
  }

  public void setJitter(Duration jitter) {
    this.jitter = jitter;
  }

  public Double getOnlyNearExhaustion() {
    return onlyNearExhaustion;
  }

  public void setOnlyNearExhaustion(Double onlyNearExhaustion) {
    this.onlyNearExhaustion = onlyNearExhaustion;
  }

  public Double getCapRemainingToResetRatio() {
    return capRemainingToResetRatio;
  }

  public void setCapRemainingToResetRatio(Double capRemainingToResetRatio) {
    this.capRemainingToResetRatio = capRemainingToResetRatio;
  }

  public Duration getCapMinWindow() {
    return capMinWindow;
  }

  public void setCapMinWindow(Duration capMinWindow) {
    this.capMinWindow = capMinWindow;
  }
}
