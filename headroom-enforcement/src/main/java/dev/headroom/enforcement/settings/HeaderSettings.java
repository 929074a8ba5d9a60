package dev.headroom.enforcement.settings;

import java.time.Duration;

/**
 * How the RateLimit fields of responses are written for every route: the field rules, jitter 0s
 * (none) by default, and whether redirects carry them.
 */
public class HeaderSettings extends FieldRuleSettings {

  /**
   * Leave the RateLimit fields off 3xx responses (draft-ietf-httpapi-ratelimit-headers-09 section
   * 6: a low remaining quota on a redirect can stall a client that follows it).
   */
  private boolean omitOnRedirect;

  public HeaderSettings() {
    setJitter(Duration.ZERO);
  }

  public boolean isOmitOnRedirect() {
    return omitOnRedirect;
  }

  public void setOmitOnRedirect(boolean omitOnRedirect) {
    this.omitOnRedirect = omitOnRedirect;
  }
}
