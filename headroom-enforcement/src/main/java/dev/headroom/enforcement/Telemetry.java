package dev.headroom.enforcement;

import dev.headroom.Decision;

/**
 * What the gate records of its decisions when it is given a Micrometer registry
 * ({@link GateBuilder#meterRegistry}, {@link GateBuilder#observationRegistry}; names and tags in
 * {@link HeadroomMeters}). Only this interface is named by the gate, so a gate built without a
 * registry never loads Micrometer (an optional dependency) and records nothing: no reading of the
 * ticker, no allocation. Every method must not throw; the gate ignores what it throws anyway.
 */
interface Telemetry {

  /** A request matched {@code route} and is about to be decided: its record, ended once by the gate. */
  Record begin(RouteRules route, GateRequest request);

  /** The counters' side, told what the gate's listener is told. */
  GateListener listener();

  /**
   * The store failed, and the gate did {@code fallback} instead: {@code allow}, {@code refuse}, or
   * {@code ignore} for an update after the response (a charge, a refund, a lease's release).
   */
  void storeFailed(String fallback);

  /** An admitted request holds {@code decision}'s leases. */
  void leasesTaken(Decision decision);

  /** The leases of {@code decision} were given back (or given up on: the store failed). */
  void leasesReleased(Decision decision);

  /** One decision's record. */
  interface Record {
    /** The store answered (or failed) {@code nanos} after it was asked. */
    void storeAnswered(long nanos);

    /** The gate's verdict, or the bug that kept it from one ({@code failure}; {@code verdict} is then null). */
    void end(Verdict verdict, Throwable failure);
  }
}
