package dev.headroom.enforcement;

import dev.headroom.Decision;
import java.util.Objects;

/**
 * The meters of {@link HeadroomMeters} for a front end that decides with a {@code QuotaLimiter}
 * rather than through a gate (Spring Cloud Gateway's {@code RequestRateLimiter}): the same names,
 * tags and outcomes the gate records ({@value HeadroomMeters#DECISIONS} by policy, outcome and
 * problem, {@value HeadroomMeters#STORE_LATENCY}, {@value HeadroomMeters#STORE_FAILURES} by
 * fallback), recorded by the gate's own meters, so that one dashboard reads every front end. Such a
 * front end knows no reduced capacity, escalation or allow list: its outcomes are {@code allowed}
 * and {@code refused} (problem {@code quota-exceeded}, or {@code request-exceeds-limit}).
 *
 * <p>Keeps the registry's counters, looked up once per policy, outcome and problem, and one timer.
 * Requires {@code io.micrometer:micrometer-core} on the class path; a front end that names this class
 * only in a field loads Micrometer only when it is given one. Thread-safe.
 */
public final class DecisionMeters {
  private final GateMeters meters;

  private DecisionMeters(GateMeters meters) {
    this.meters = meters;
  }

  /** Meters recorded in {@code registry}. */
  public static DecisionMeters of(io.micrometer.core.instrument.MeterRegistry registry) {
    return new DecisionMeters(new GateMeters(Objects.requireNonNull(registry, "registry"), policy -> false));
  }

  /** The store decided: one {@value HeadroomMeters#DECISIONS} count per policy of {@code decision}. */
  public void decided(Decision decision) {
    meters.decided(null, Objects.requireNonNull(decision, "decision"));
  }

  /** The store answered (or failed) {@code nanos} after it was asked. */
  public void storeLatency(long nanos) {
    meters.storeLatency(nanos);
  }

  /**
   * The store could not decide, and the request was refused ({@code refused}: fallback
   * {@code refuse}) or let through undecided (fallback {@code allow}).
   */
  public void storeFailed(boolean refused) {
    meters.storeFailed(refused ? "refuse" : "allow");
  }
}
