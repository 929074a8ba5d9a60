package dev.headroom.gateway.internal.proxy;

/**
 * Where the response of a {@link ProxyExchange} stands. Moves forward only, so a late event finds a
 * later phase.
 */
enum ExchangePhase {
  /** Triage, then the store (GateStep, VendCall): nothing has gone upstream. */
  DECIDING,
  /** Allowed: an upstream connection is being acquired from the pool. */
  CONNECTING,
  /** The request head went upstream; the response head is due by {@link ProxyExchange#responseDeadline()}. */
  AWAITING_HEAD,
  /** The response goes to the client through {@link ProxyExchange#relay}. */
  RELAYING,
  /** The response's last byte was handed to the client connection (a relay's or a local answer). */
  RESPONDED,
  /** Accounting settled, upstream connection released: nothing more happens. */
  ENDED
}
