package dev.headroom.gateway.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The gateway's meters: decisions by policy and outcome, store latency, upstream latency by
 * upstream, responses the gateway produced itself by status. Meters are looked up once and cached.
 * Latencies are Prometheus histograms (buckets, for {@code histogram_quantile} across instances)
 * rather than client-side percentiles, which cost an HdrHistogram update per window per request.
 * Thread-safe.
 */
final class GatewayMetrics {
  private final MeterRegistry registry;
  private final Timer storeLatency;
  private final Map<String, Map<String, Counter>> decisions = new ConcurrentHashMap<>();
  private final Map<String, Timer> upstreamLatency = new ConcurrentHashMap<>();
  /**
   * By status code. A plain array: two threads racing on a new status both register, and
   * Micrometer hands both the same meter.
   */
  private final Counter[] local = new Counter[600];

  GatewayMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.storeLatency = Timer.builder("headroom.store.latency")
        .description("Time the store takes to decide one request (every policy at once)")
        .publishPercentileHistogram().minimumExpectedValue(java.time.Duration.ofNanos(1_000))
        .maximumExpectedValue(java.time.Duration.ofSeconds(10)).register(registry);
  }

  MeterRegistry registry() {
    return registry;
  }

  /** outcome: allowed, refused, blocked (escalated) or reduced (refused under reduced capacity). */
  void decision(String policy, String outcome) {
    // two lookups without building a key, and no lambda capturing the policy unless the meter
    // is new: this runs once per policy per request
    Map<String, Counter> byOutcome = decisions.get(policy);
    Counter c = byOutcome == null ? null : byOutcome.get(outcome);
    if (c == null) {
      c = decisions.computeIfAbsent(policy, k -> new ConcurrentHashMap<>()).computeIfAbsent(outcome,
          k -> Counter.builder("headroom.decisions")
              .description("Policy decisions by policy and outcome")
              .tag("policy", policy).tag("outcome", outcome).register(registry));
    }
    c.increment();
  }

  void storeLatency(long nanos) {
    storeLatency.record(nanos, TimeUnit.NANOSECONDS);
  }

  void upstreamLatency(String upstream, long nanos) {
    upstreamLatency.computeIfAbsent(upstream, u -> Timer.builder("headroom.upstream.latency")
        .description("Time from sending a request upstream to receiving its response head")
        .tag("upstream", u).publishPercentileHistogram()
        .minimumExpectedValue(java.time.Duration.ofNanos(10_000))
        .maximumExpectedValue(java.time.Duration.ofSeconds(120)).register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * The Redis store's own counters: decisions whose deadline passed after Redis received them
   * (they followed the failure policy), decisions refused as this process's overload before Redis
   * could decide them, and decisions awaiting Redis now.
   */
  void redisStore(dev.headroom.redis.RedisStore store) {
    io.micrometer.core.instrument.FunctionCounter.builder("headroom.store.deadline.passed", store,
            dev.headroom.redis.RedisStore::deadlinesPassed)
        .description("Decisions Redis did not answer within the decision deadline after receiving them")
        .register(registry);
    io.micrometer.core.instrument.FunctionCounter.builder("headroom.store.shed", store, dev.headroom.redis.RedisStore::shed)
        .description("Decisions refused because the gateway's own queue to Redis was full (503, Redis not at fault)")
        .register(registry);
    io.micrometer.core.instrument.Gauge.builder("headroom.store.outstanding", store, dev.headroom.redis.RedisStore::outstanding)
        .description("Decisions sent to Redis whose reply has not arrived yet").register(registry);
  }

  void localResponse(int status) {
    Counter c = local[status];
    if (c == null) {
      c = Counter.builder("headroom.local.responses")
          .description("Responses the gateway produced itself, by status")
          .tag("status", Integer.toString(status)).register(registry);
      local[status] = c;
    }
    c.increment();
  }

}
