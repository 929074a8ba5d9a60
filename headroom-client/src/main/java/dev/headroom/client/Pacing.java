package dev.headroom.client;

/**
 * How the client spends the remaining quota a server reports. Both never exceed the remaining
 * units before the reset (draft-ietf-httpapi-ratelimit-headers-09 section 7: "A client SHOULD
 * NOT exceed the quota units conveyed by the remaining parameter before the time window expressed
 * in the reset parameter"); they differ in when within the window.
 */
public enum Pacing {
  /**
   * Send while {@code r > 0}, then wait for the reset: lowest latency while quota lasts, a stall
   * afterwards ("consuming all the quota according to the exposed limits and then wait", section 7).
   */
  BURST,
  /**
   * Spread the remaining units evenly until the reset: after an admission at {@code a}, the next
   * one waits until {@code a + (reset - a) / r}. No stall at the end of a window, and a natural
   * back-off as {@code r} approaches zero ("slowing down ... when approaching quota limits",
   * section 7). The default.
   */
  EVEN
}
