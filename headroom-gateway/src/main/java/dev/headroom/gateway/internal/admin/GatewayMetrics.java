package dev.headroom.gateway.internal.admin;

import dev.headroom.PartitionKey;
import dev.headroom.enforcement.HeadroomMeters;
import dev.headroom.redis.LeasingStore;
import dev.headroom.redis.RedisStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The gateway's meters: the gate's (decisions by policy, outcome and problem, store latency and
 * failures, leases: headroom-enforcement {@link HeadroomMeters}, recorded by the gate in this
 * registry) and the vend calls' decisions counted the same way; store latency, upstream latency by
 * upstream, responses the gateway produced itself by status. Meters are looked up once and cached.
 * Latencies are Prometheus histograms (buckets, for {@code histogram_quantile} across instances)
 * rather than client-side percentiles, which cost an HdrHistogram update per window per request.
 * Thread-safe.
 */
public final class GatewayMetrics {
  private final MeterRegistry registry;
  private final Timer storeLatency;
  private final Map<String, Map<String, Counter>> vendDecisions = new ConcurrentHashMap<>();
  private final Map<String, Timer> upstreamLatency = new ConcurrentHashMap<>();
  /**
   * By status code. A plain array: two threads racing on a new status both register, and
   * Micrometer hands both the same meter.
   */
  private final Counter[] local = new Counter[600];
  private final Counter clientBytes;
  private final Counter http2Streams;
  private final Map<String, Counter> http2Refused = new ConcurrentHashMap<>();
  private final Counter tlsPlaintext;
  private final Counter tlsHandshakeFailures;
  /** The access log's count of dropped lines, once it is on. */
  private volatile LongSupplier accessLogDropped = () -> 0;
  private final UsageBoard board = new UsageBoard();

  /** Counts the access log lines dropped ({@code headroom_access_log_dropped_total}): a full buffer, a failed write. */
  public void accessLogDropped(LongSupplier dropped) {
    accessLogDropped = dropped;
    // the meter reads through this object, which the gateway holds: a meter holds its object weakly
    FunctionCounter.builder("headroom.access.log.dropped", this, m -> m.accessLogDropped.getAsLong())
        .description("Access log lines dropped: the buffer was full, or the line could not be written")
        .register(registry);
  }

  /** The gateway's meters, registered in {@code registry}. */
  public GatewayMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.clientBytes = Counter.builder("headroom.client.received").baseUnit("bytes")
        .description("Bytes read from client connections: request heads and bodies (not what a lingering close drops)")
        .register(registry);
    this.http2Streams = Counter.builder("headroom.http2.streams")
        .description("HTTP/2 streams served as exchanges").register(registry);
    this.tlsPlaintext = Counter.builder("headroom.tls.plaintext.refused")
        .description("Connections to the TLS listener that sent cleartext (plain HTTP to the https port): answered 400 and closed")
        .register(registry);
    this.tlsHandshakeFailures = Counter.builder("headroom.tls.handshake.failures")
        .description("TLS handshakes on the listener that failed: no common version, a missing or untrusted client certificate")
        .register(registry);
    // registered first, so that the gate's timer of this name (headroom-enforcement) is this one, with its buckets
    this.storeLatency = Timer.builder(HeadroomMeters.STORE_LATENCY)
        .description("Time the store takes to decide one request (every policy at once)")
        .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(1_000))
        .maximumExpectedValue(Duration.ofSeconds(10)).register(registry);
  }

  /** The registry: the gate records its own meters in it. */
  public MeterRegistry registry() {
    return registry;
  }

  /** A connection to the TLS listener sent cleartext ({@code headroom_tls_plaintext_refused_total}). */
  public void tlsPlaintextRefused() {
    tlsPlaintext.increment();
  }

  /** A TLS handshake on the listener failed ({@code headroom_tls_handshake_failures_total}). */
  public void tlsHandshakeFailed() {
    tlsHandshakeFailures.increment();
  }

  /** One read from a client connection (counted per read, not per byte: one adder update). */
  public void clientBytes(int n) {
    clientBytes.increment(n);
  }

  /**
   * A vend call's decision of one policy ({@code allowed} or {@code refused}, as quota-exceeded),
   * counted as the gate counts its own ({@code headroom.decisions} by policy, outcome and problem:
   * headroom-enforcement {@link HeadroomMeters}), and its partition for the dashboard's heavy
   * hitters. The gate's decisions are counted by the gate itself, in this registry.
   */
  public void vendDecision(String policy, boolean allowed, PartitionKey key) {
    String outcome = allowed ? "allowed" : "refused";
    // two lookups without building a key, and no lambda capturing the policy unless the meter
    // is new: this runs once per policy per request
    Map<String, Counter> byOutcome = vendDecisions.get(policy);
    Counter c = byOutcome == null ? null : byOutcome.get(outcome);
    if (c == null) {
      c = vendDecisions.computeIfAbsent(policy, k -> new ConcurrentHashMap<>()).computeIfAbsent(outcome,
          k -> Counter.builder(HeadroomMeters.DECISIONS)
              .description("Headroom decisions by policy, outcome and problem")
              .tag(HeadroomMeters.POLICY, policy).tag(HeadroomMeters.OUTCOME, outcome)
              .tag(HeadroomMeters.PROBLEM, allowed ? HeadroomMeters.NONE : "quota-exceeded").register(registry));
    }
    c.increment();
    partition(policy, key, !allowed);
  }

  /** One policy's decision of a partition, for the dashboard's heavy hitters ({@link UsageBoard}): by use, and by refusals. */
  public void partition(String policy, PartitionKey key, boolean refused) {
    board.decision(policy, key, refused);
  }

  /** The dashboard's data. */
  UsageBoard board() {
    return board;
  }

  /**
   * The cumulative readings the dashboard's samples are differences of: decisions by policy and
   * outcome, the store latency histogram (Prometheus buckets count cumulatively), and the
   * policies' queues.
   */
  UsageBoard.Totals totals() {
    Map<String, Map<String, Long>> d = new TreeMap<>();
    // the gate's counters and the vend calls', summed over problem types
    for (Counter c : registry.find(HeadroomMeters.DECISIONS).counters()) {
      d.computeIfAbsent(c.getId().getTag(HeadroomMeters.POLICY), p -> new TreeMap<>())
          .merge(c.getId().getTag(HeadroomMeters.OUTCOME), (long) c.count(), Long::sum);
    }
    HistogramSnapshot h = storeLatency.takeSnapshot();
    CountAtBucket[] buckets = h.histogramCounts();
    double[] bounds = new double[buckets.length];
    long[] counts = new long[buckets.length];
    for (int i = 0; i < buckets.length; i++) {
      bounds[i] = buckets[i].bucket(TimeUnit.NANOSECONDS);
      counts[i] = (long) buckets[i].count();
    }
    return new UsageBoard.Totals(d, h.count(), h.total(TimeUnit.NANOSECONDS), bounds, counts, queues());
  }

  /** The policies' queues as the gate's meters have them: waiting now, admitted and timed out so far. */
  private Map<String, UsageBoard.Queue> queues() {
    Map<String, long[]> q = new TreeMap<>();
    for (Gauge g : registry.find(HeadroomMeters.QUEUE_WAITING).gauges()) {
      q.computeIfAbsent(g.getId().getTag(HeadroomMeters.POLICY), p -> new long[3])[0] += (long) g.value();
    }
    for (Counter c : registry.find(HeadroomMeters.QUEUE_ADMITTED).counters()) {
      q.computeIfAbsent(c.getId().getTag(HeadroomMeters.POLICY), p -> new long[3])[1] += (long) c.count();
    }
    for (Counter c : registry.find(HeadroomMeters.QUEUE_TIMEOUTS).counters()) {
      q.computeIfAbsent(c.getId().getTag(HeadroomMeters.POLICY), p -> new long[3])[2] += (long) c.count();
    }
    Map<String, UsageBoard.Queue> out = new TreeMap<>();
    q.forEach((policy, v) -> out.put(policy, new UsageBoard.Queue(v[0], v[1], v[2])));
    return out;
  }

  /** The time the store took to decide one vend call (the gate times its own decisions, into the same timer). */
  public void storeLatency(long nanos) {
    storeLatency.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** The time from sending a request to {@code upstream} to receiving its response head. */
  public void upstreamLatency(String upstream, long nanos) {
    upstreamLatency.computeIfAbsent(upstream, u -> Timer.builder("headroom.upstream.latency")
        .description("Time from sending a request upstream to receiving its response head")
        .tag("upstream", u).publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofNanos(10_000))
        .maximumExpectedValue(Duration.ofSeconds(120)).register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * The Redis store's own counters: decisions whose deadline passed after Redis received them
   * (they followed the failure policy), decisions refused as this process's overload before Redis
   * could decide them, decisions refused from a remembered refusal without asking Redis, and
   * decisions awaiting Redis now, and admissions whose write too few replicas acknowledged
   * ({@code store.replicaAcknowledgements}; they followed the failure policy).
   */
  public void redisStore(RedisStore store) {
    FunctionCounter.builder("headroom.store.deadline.passed", store,
            RedisStore::deadlinesPassed)
        .description("Decisions Redis did not answer within the decision deadline after receiving them")
        .register(registry);
    FunctionCounter.builder("headroom.store.shed", store, RedisStore::shed)
        .description("Decisions refused because the gateway's own queue to Redis was full (503, Redis not at fault)")
        .register(registry);
    FunctionCounter.builder("headroom.store.refusals.remembered", store,
            RedisStore::refusalsRemembered)
        .description("Decisions refused from a refusal Redis gave an equal request, without asking Redis again")
        .register(registry);
    FunctionCounter.builder("headroom.store.replica.unacknowledged", store, RedisStore::replicaUnacknowledged)
        .description("Admissions whose write fewer Redis replicas acknowledged than store.replicaAcknowledgements "
            + "asks, within its timeout (they followed the failure policy)")
        .register(registry);
    Gauge.builder("headroom.store.outstanding", store, RedisStore::outstanding)
        .description("Decisions sent to Redis whose reply has not arrived yet").register(registry);
  }

  /**
   * Quota leasing ({@code store.leasing}): slices taken from Redis (one round trip each) and
   * decisions made from a local slice without one.
   */
  public void leasingStore(LeasingStore store) {
    FunctionCounter.builder("headroom.store.leasing.slices", store,
            LeasingStore::slicesTaken)
        .description("Slices of quota taken from Redis, one round trip each").register(registry);
    FunctionCounter.builder("headroom.store.leasing.local", store,
            LeasingStore::localDecisions)
        .description("Acquisitions decided from a local slice, without a round trip").register(registry);
  }

  /** HTTP/2 client connections opened, by how they began ({@code prior-knowledge}, {@code upgrade}, {@code alpn}). */
  public void http2Connection(String how) {
    Counter.builder("headroom.http2.connections").description("HTTP/2 client connections opened, by how they began")
        .tag("start", how).register(registry).increment();
  }

  /** One HTTP/2 stream served as an exchange. */
  public void http2Stream() {
    http2Streams.increment();
  }

  /**
   * One hostile or broken HTTP/2 behaviour bounded, by kind ({@code rapid-reset}, {@code settings-flood},
   * {@code ping-flood}, {@code rst-flood}, {@code window-update-flood}, {@code empty-data-flood},
   * {@code continuation-flood}, {@code priority-flood}, {@code header-list-too-large},
   * {@code excess-streams}, {@code protocol-error}...): a connection ended with GOAWAY, or a stream
   * refused.
   */
  public void http2Refused(String kind) {
    http2Refused.computeIfAbsent(kind, k -> Counter.builder("headroom.http2.refused")
        .description("Hostile or broken HTTP/2 bounded: connections ended with GOAWAY or streams refused, by kind")
        .tag("kind", k).register(registry)).increment();
  }

  /** One answer the gateway gave itself, by status. */
  public void localResponse(int status) {
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
