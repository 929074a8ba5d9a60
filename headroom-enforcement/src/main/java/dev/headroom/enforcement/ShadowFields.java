package dev.headroom.enforcement;

import dev.headroom.PolicyOutcome;

/**
 * The RateLimit item a shadow policy's decision is sent as, when its fields are sent
 * ({@code shadowFields} in the gateway, {@code Route.Builder.shadowPolicy(policy, true)} in the
 * servlet filter). The request is allowed whatever a shadow policy says, so its item must read as
 * part of an allowed response, yet say what the policy would have done:
 *
 * <ul>
 *   <li>would allow: the outcome as it is ({@code r} units left, {@code t} until the quota is whole);
 *   <li>would refuse: {@code r=0} and {@code t} the seconds until the request would be allowed, as a
 *       refusal's violated item says it (draft-ietf-httpapi-ratelimit-headers-09 section 4.1: {@code r}
 *       the remaining units, {@code t} the reset). Section 6 lets the fields go with any status
 *       ("does not mandate any correlation between the RateLimit header field values and the
 *       returned status code") and Appendix B.1.1 shows a 200 with {@code r=0;t=50}: a client reads
 *       that it is out of units under that policy although this request was served.
 * </ul>
 *
 * <p>The item is built as an allowed outcome, so that it never turns the response into a refusal
 * (no Retry-After, no violated policy). Stateless.
 */
public final class ShadowFields {
  private ShadowFields() {}

  /** {@code o} as the item of an allowed response. */
  public static PolicyOutcome item(PolicyOutcome o) {
    if (o.allowed()) {
      return o;
    }
    return new PolicyOutcome(o.policy(), o.key(), o.cost(), true, 0, o.retryAfter().toNanos(), 0, null);
  }
}
