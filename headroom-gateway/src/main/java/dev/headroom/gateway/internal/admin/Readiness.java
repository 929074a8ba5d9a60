package dev.headroom.gateway.internal.admin;

/**
 * Whether the gateway should be sent traffic now ({@code GET /ready}), as opposed to whether it is
 * alive ({@code GET /health}, which is 200 whatever the store does).
 */
public enum Readiness {
  /** It takes traffic. */
  READY,
  /** It drains: new connections are refused and open ones close after their exchange in flight. */
  DRAINING,
  /**
   * Its store is a Redis store that fails closed and has no connection to Redis: every limited
   * request would be refused 503 until Redis is back.
   */
  STORE_UNAVAILABLE
}
