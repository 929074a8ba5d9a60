package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.GateResponse;

/**
 * The response the gateway last made of a route's refusal. The gate hands every caller refused
 * with the same numbers in the same second the same {@link GateResponse} (headroom-enforcement keeps it
 * whole on a route of one policy whose fields carry numbers only); the gateway then turns it into
 * a {@link LocalResponse}, whose head is serialised once, once for all of them, instead of once per
 * request. Matched by the answer's identity. Thread-safe: one volatile pair, replaced whole.
 */
final class KeptRefusal {
  private record Pair(GateResponse answer, LocalResponse response) {}

  private volatile Pair last;

  /** The response for {@code answer}: the one kept when it is the answer last seen, else a new one, kept. */
  LocalResponse of(GateResponse answer) {
    Pair p = last;
    if (p != null && p.answer() == answer) {
      return p.response();
    }
    LocalResponse r = LocalResponse.of(answer);
    last = new Pair(answer, r);
    return r;
  }
}
