package dev.headroom.enforcement;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The waiting requests in Micrometer ({@link HeadroomMeters#QUEUE_WAITING},
 * {@link HeadroomMeters#QUEUE_ADMITTED}, {@link HeadroomMeters#QUEUE_TIMEOUTS}). The waiting
 * counts are kept once per registry, as {@link GateMeters} keeps the leases, so that a gate
 * rebuilt on a reload reports into the same gauge. Thread-safe.
 */
final class WaitMeters implements Waiters.Meters {
  /** The waiting counts by policy, per registry; a registry's gauges hold its map strongly. */
  private static final Map<MeterRegistry, Map<String, AtomicLong>> WAITING = new WeakHashMap<>();

  private final MeterRegistry registry;
  private final Map<String, AtomicLong> waiting;

  WaitMeters(MeterRegistry registry) {
    this.registry = registry;
    synchronized (WAITING) {
      this.waiting = WAITING.computeIfAbsent(registry, r -> new ConcurrentHashMap<>());
    }
  }

  @Override
  public void waiting(String policy, int delta) {
    waiting.computeIfAbsent(policy, p -> {
      AtomicLong n = new AtomicLong();
      Gauge.builder(HeadroomMeters.QUEUE_WAITING, n, AtomicLong::get).tag(HeadroomMeters.POLICY, p)
          .description("Requests waiting now in the policy's queue").strongReference(true).register(registry);
      return n;
    }).addAndGet(delta);
  }

  @Override
  public void admitted(String policy) {
    Counter.builder(HeadroomMeters.QUEUE_ADMITTED).tag(HeadroomMeters.POLICY, policy)
        .description("Requests admitted after waiting in the policy's queue").register(registry).increment();
  }

  @Override
  public void timedOut(String policy) {
    Counter.builder(HeadroomMeters.QUEUE_TIMEOUTS).tag(HeadroomMeters.POLICY, policy)
        .description("Requests refused after waiting in the policy's queue").register(registry).increment();
  }
}
