package dev.headroom.gateway.internal.proxy;

import dev.headroom.QuotaLimiter;
import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.enforcement.CapacityReductions;
import dev.headroom.enforcement.Escalations;
import dev.headroom.enforcement.ThrottledWarning;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.internal.Timers;
import dev.headroom.gateway.internal.admin.GatewayMetrics;
import dev.headroom.gateway.internal.admin.LiveGateway;
import dev.headroom.gateway.internal.telemetry.Telemetry;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import org.slf4j.LoggerFactory;

/**
 * What every connection shares: the store (kept across reloads so counters survive), the clock,
 * escalations, capacity reductions, meters, and the current {@link Snapshot}, swapped atomically by
 * a reload. Thread-safe.
 */
public final class GatewayState implements LiveGateway {
  final Store store;
  final QuotaLimiter limiter;
  final Ticker ticker;
  /** The client connections' timers; their time is the ticker's in production (see {@link Timers}). */
  final Timers timers;
  /** Where the policies' queues re-decide waiting requests, on {@link #timers} (they only start store calls). */
  final EventExecutor waitLoop;
  final Escalations escalations = new Escalations();
  final CapacityReductions capacity = new CapacityReductions();
  final GatewayMetrics metrics;
  /** How late each event loop runs: the gateway's own share of the upstream latencies it measures. */
  final LoopLag loopLag;
  /** Traces and metrics over OTLP; null when {@code telemetry} is off (read at start, as the store is). */
  final Telemetry telemetry;
  /**
   * The store's failures to decide, logged at most once per {@link #STORE_WARNING_INTERVAL} with
   * a count of the others (each refused request is still counted in the metrics).
   */
  final ThrottledWarning storeWarning = new ThrottledWarning(STORE_WARNING_INTERVAL,
      LoggerFactory.getLogger(ProxyHandler.class)::warn);

  /** The least time between two log lines about the store failing to decide. */
  static final Duration STORE_WARNING_INTERVAL = Duration.ofSeconds(10);
  private volatile Snapshot snapshot;
  /** The access log, put in place by {@link AccessLog#start} once the gateway listens; {@link AccessLog#OFF} until then. */
  volatile AccessLog accessLog = AccessLog.OFF;


  /**
   * The shared state over {@code store}; {@code initial} may be null until the first snapshot is
   * built, {@code telemetry} is null when it is off; {@code waitLoop} runs the queues' timers.
   */
  public GatewayState(Store store, Ticker ticker, Timers timers, EventExecutor waitLoop, GatewayMetrics metrics,
      Telemetry telemetry, Snapshot initial) {
    this.waitLoop = waitLoop;
    this.store = store;
    this.limiter = QuotaLimiter.of(store);
    this.ticker = ticker;
    this.timers = timers;
    this.loopLag = new LoopLag(timers);
    this.metrics = metrics;
    this.telemetry = telemetry;
    this.snapshot = initial;
  }

  /** The snapshot in force. */
  public Snapshot snapshot() {
    return snapshot;
  }

  /** The store's limiter, which vend routes decide with. */
  public QuotaLimiter limiter() {
    return limiter;
  }

  /** The gateway's time. */
  public Ticker ticker() {
    return ticker;
  }

  /** The client connections' timers. */
  public Timers timers() {
    return timers;
  }

  @Override
  public GatewayConfig config() {
    return snapshot.config();
  }

  @Override
  public CapacityReductions capacity() {
    return capacity;
  }

  @Override
  public GatewayMetrics metrics() {
    return metrics;
  }

  /** Puts {@code next} in force; requests already admitted finish under the one they read. */
  public void swap(Snapshot next) {
    this.snapshot = next;
  }
}
