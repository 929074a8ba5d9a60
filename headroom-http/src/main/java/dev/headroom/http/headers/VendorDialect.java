package dev.headroom.http.headers;

import java.util.List;

/**
 * A vendor's own rate-limit fields, read (never written) beside the {@link HeaderDialect}s: the
 * forms the APIs Java code calls most send instead of the IETF drafts. Each is read by one small
 * reader that cites the vendor's documentation; {@link RateLimitFields#vendors()} names the ones a
 * response was read in, and {@link ServiceLimitItem#vendor()} the one each limit came from.
 *
 * <p>What a vendor reports becomes the same items the drafts' fields do: a {@link QuotaPolicyItem}
 * (the limit, its unit, its window when stated) and a {@link ServiceLimitItem} (remaining, reset)
 * of the same name, in the {@link HeaderDialect} whose shape the fields have ({@link
 * HeaderDialect#X_RATELIMIT} for the de-facto forms, {@link HeaderDialect#IETF} for a prefixed
 * IETF form). Units: {@code requests}, {@code tokens}, {@code input-tokens}, {@code output-tokens}.
 */
public enum VendorDialect {
  /** {@code x-ratelimit-{limit,remaining,reset}-{requests,tokens}}, Go duration resets; {@code retry-after-ms}. */
  OPENAI("openai", "OpenAI (and Azure OpenAI)", List.of("x-ratelimit-limit-requests", "x-ratelimit-remaining-requests",
      "x-ratelimit-reset-requests", "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens",
      "retry-after-ms")),
  /** {@code anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}}, RFC 3339 resets. */
  ANTHROPIC("anthropic", "Anthropic", List.of("anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-limit",
      "anthropic-ratelimit-*-remaining", "anthropic-ratelimit-*-reset")),
  /** {@code x-ratelimit-{limit,remaining,used,reset}} (epoch seconds) and {@code x-ratelimit-resource}. */
  GITHUB("github", "GitHub", List.of("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-used",
      "x-ratelimit-reset", "x-ratelimit-resource")),
  /** {@code x-ratelimit-{limit,remaining,reset,reset-after}}, {@code x-ratelimit-bucket}, {@code -global}, {@code -scope}. */
  DISCORD("discord", "Discord", List.of("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset",
      "x-ratelimit-reset-after", "x-ratelimit-bucket", "x-ratelimit-global", "x-ratelimit-scope")),
  /** {@code X-RateLimit-{Limit,Remaining,Reset}} (ISO 8601 reset), {@code X-RateLimit-NearLimit}, {@code Beta-RateLimit*}. */
  ATLASSIAN("atlassian", "Atlassian (Jira, Confluence)", List.of("X-RateLimit-Limit", "X-RateLimit-Remaining",
      "X-RateLimit-Reset", "X-RateLimit-NearLimit", "RateLimit-Reason", "Beta-RateLimit-Policy", "Beta-RateLimit")),
  /** {@code x-ms-ratelimit-remaining-subscription-{reads,writes,deletes}}, {@code x-ms-ratelimit-remaining-resource}. */
  AZURE_RESOURCE_MANAGER("azure-resource-manager", "Azure Resource Manager", List.of(
      "x-ms-ratelimit-remaining-subscription-{reads,writes,deletes}", "x-ms-ratelimit-remaining-resource",
      "retry-after-ms", "x-ms-retry-after-ms")),
  /** {@code X-Rate-Limit-{Limit,Remaining,Reset}} (epoch seconds). */
  X_RATE_LIMIT("x-rate-limit", "Okta, X", List.of("X-Rate-Limit-Limit", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset")),
  /**
   * {@code X-RateLimit-{Limit,Remaining}-{Second,...,Year}} and Rate Limiting Advanced's
   * {@code X-RateLimit-{Limit,Remaining}-<seconds>}, with {@code RateLimit-{Limit,Remaining,Reset}}.
   */
  KONG("kong", "Kong Gateway", List.of("X-RateLimit-Limit-{Second,Minute,Hour,Day,Month,Year}",
      "X-RateLimit-Remaining-{Second,...,Year}", "X-RateLimit-{Limit,Remaining}-<seconds>", "RateLimit-Limit",
      "RateLimit-Remaining", "RateLimit-Reset")),
  /** {@code X-Shopify-Shop-Api-Call-Limit: 32/40}, a leaky bucket. */
  SHOPIFY("shopify", "Shopify (REST Admin API)", List.of("X-Shopify-Shop-Api-Call-Limit"));

  private final String token;
  private final String vendor;
  private final List<String> fields;

  VendorDialect(String token, String vendor, List<String> fields) {
    this.token = token;
    this.vendor = vendor;
    this.fields = fields;
  }

  /** The dialect's name as {@code headroom check} prints it: {@code openai}, {@code github}, ... */
  public String token() {
    return token;
  }

  /** Who speaks it. */
  public String vendor() {
    return vendor;
  }

  /** The fields read, as the vendor spells them (braces and {@code *} abbreviate families). */
  public List<String> fieldNames() {
    return fields;
  }

  @Override
  public String toString() {
    return token;
  }
}
