package dev.headroom.gateway.internal.proxy;

/** What becomes of the request body's bytes in a {@link ProxyExchange}. */
enum BodyFate {
  /** Not read for now (the store deciding, the upstream connecting): body messages wait in the connection's queue. */
  HELD,
  /** A vend call's envelope, read whole to be decided. */
  COLLECTING,
  /** Streamed upstream as it arrives. */
  FORWARDING,
  /** Read and dropped (the request was answered here), so that the connection can carry the next one. */
  DISCARDING,
  /** Read to its end (or there was none), not sent upstream. */
  READ,
  /** Read to its end and all of it sent upstream. */
  SENT,
  /** Not read to its end: the connection closes after the answer; what still arrives is dropped. */
  CUT;

  boolean complete() {
    return this == READ || this == SENT || this == CUT;
  }
}
