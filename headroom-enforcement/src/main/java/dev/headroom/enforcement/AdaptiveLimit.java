package dev.headroom.enforcement;

/**
 * The concurrency limit of an {@link AdaptiveConcurrency} route, learnt from its responses' latency
 * and failures: a gradient limit after Netflix concurrency-limits' {@code Gradient2Limit}, with the
 * multiplicative back-off on failures of its {@code VegasLimit} and {@code AIMDLimit}, and the
 * square-root headroom of Envoy's adaptive concurrency filter ({@code envoy.filters.http.adaptive_concurrency},
 * gradient controller).
 *
 * <h2>How is this designed, and why?</h2>
 * An upstream that is keeping up answers in about the same time whatever the load; one that is not
 * queues, and its latency grows with the queue. So the limit follows the ratio of a healthy
 * latency to the latency now: while they agree it grows, and as the latency rises it falls in
 * proportion. The healthy latency is a long-run average of latency samples ({@code longRtt}), as in
 * Gradient2, rather than Envoy's and Vegas's minimum round trip: a minimum must be measured again
 * now and then with the concurrency pinned low (Envoy's {@code min_rtt_calc_params}), which refuses
 * traffic while it measures; an average drifts to a new normal by itself. State kept, under one lock
 * taken once per completed request:
 * <ul>
 * <li>{@code limit}: the estimate, a real number between {@code minLimit} and {@code maxLimit};
 *   callers see it rounded ({@link #limit()}).
 * <li>The open window: its start, its responses' latency sum and count, whether one failed, and the
 *   most requests that were in flight. A window closes once it is {@code window} long and has
 *   {@code windowSamples} responses; its average latency is one sample ({@code shortRtt}). Averaging
 *   over a window keeps one slow response from moving the limit.
 * <li>{@code longRtt}: an exponential average of the samples over {@code longWindow} of them
 *   (weight {@code 2 / (longWindow + 1)} for each new one), the first sample taken as it is.
 * </ul>
 * When a window closes:
 * <pre>
 *   failed window (a 5xx, a timeout):  limit = max(minLimit, limit * backoff)
 *   otherwise:
 *     longRtt  = longRtt + (shortRtt - longRtt) * 2 / (longWindow + 1)
 *     longRtt  = longRtt * 0.95 when longRtt &gt; 2 * shortRtt   (recovering: forget the bad times faster)
 *     unchanged when fewer than limit / 2 were in flight        (the callers, not the upstream, set the pace)
 *     gradient = clamp(tolerance * longRtt / shortRtt, 0.5, 1)
 *     estimate = limit * gradient + sqrt(limit)                 (sqrt: room to grow, and to find out)
 *     limit    = clamp(limit * (1 - smoothing) + estimate * smoothing, minLimit, maxLimit)
 * </pre>
 * Worked numbers, smoothing 1 and tolerance 1.5: limit 20 at a steady 10 ms grows to
 * {@code 20 + sqrt(20) = 24.5}, then 29.4, 34.8, while the callers keep it busy. The upstream slows to
 * 100 ms: gradient {@code 1.5 * 10 / 100} is clamped to 0.5, and the limit goes 34.8, 23.3, 16.5,
 * 12.3; it settles where {@code limit * 0.5 + sqrt(limit) = limit}, at 4, unless the long-run
 * average catches up with the new latency first (Gradient2's acceptance of a new normal). The
 * upstream heals: shortRtt is below longRtt, the gradient is 1, and the limit grows by
 * {@code sqrt(limit)} a window again, while longRtt decays towards the healthy latency.
 *
 * <p>Time is read by the caller from the gate's ticker and passed in: nothing here reads a clock.
 * Thread-safe: {@link #limit()} reads a volatile; {@link #onSample} and {@link #latencyNanos()} hold
 * the lock.
 */
final class AdaptiveLimit {
  /** The least gradient: one window never more than halves the estimate before smoothing (Gradient2). */
  static final double MIN_GRADIENT = 0.5;
  /** What {@code longRtt} is multiplied by per window while it is more than twice the latency now (Gradient2). */
  static final double LONG_RTT_DECAY = 0.95;

  private final AdaptiveConcurrency config;
  private final long windowNanos;
  private final double longWeight;

  private double estimate;
  private volatile int limit;
  private double longRtt = Double.NaN;
  private double shortRtt = Double.NaN;
  private long windowStart;
  private long windowSum;
  private int windowCount;
  private int windowResponses;
  private boolean windowFailed;
  private int windowInflight;

  /** A limit at {@code config}'s initial limit, its first window open at {@code now} (ticker nanoseconds). */
  AdaptiveLimit(AdaptiveConcurrency config, long now) {
    this.config = config;
    this.windowNanos = config.window().toNanos();
    this.longWeight = 2.0 / (config.longWindow() + 1);
    this.estimate = config.initialLimit();
    this.limit = config.initialLimit();
    this.windowStart = now;
  }

  /** The limit now: how many requests may be in flight. */
  int limit() {
    return limit;
  }

  /**
   * The average latency of the last closed window, in nanoseconds; empty (0) before any, when the
   * caller must assume something of its own.
   */
  synchronized long latencyNanos() {
    return Double.isNaN(shortRtt) ? 0 : (long) shortRtt;
  }

  /**
   * A response completed at {@code now}, {@code rttNanos} after its request was admitted, with
   * {@code inflight} requests in flight when it was admitted (itself included); {@code failed} for a
   * 5xx or no answer in time, whose latency says nothing of a healthy upstream.
   *
   * @return whether the limit changed
   */
  synchronized boolean onSample(long now, long rttNanos, int inflight, boolean failed) {
    windowResponses++;
    windowInflight = Math.max(windowInflight, inflight);
    if (failed) {
      windowFailed = true;
    } else {
      windowSum = Math.addExact(windowSum, Math.max(0, rttNanos));
      windowCount++;
    }
    if (now - windowStart < windowNanos || windowResponses < config.windowSamples()) {
      return false;
    }
    if (windowFailed) {
      estimate = Math.max(config.minLimit(), estimate * config.backoff());
    } else {
      update((double) windowSum / windowCount);
    }
    windowStart = now;
    windowSum = 0;
    windowCount = 0;
    windowResponses = 0;
    windowFailed = false;
    windowInflight = 0;
    int rounded = (int) Math.max(config.minLimit(), Math.min(config.maxLimit(), Math.round(estimate)));
    boolean changed = rounded != limit;
    limit = rounded;
    return changed;
  }

  /** One window's average latency, {@code sample}, in nanoseconds (see the class comment). */
  private void update(double sample) {
    double rtt = Math.max(1, sample);
    shortRtt = rtt;
    longRtt = Double.isNaN(longRtt) ? rtt : longRtt + (rtt - longRtt) * longWeight;
    if (longRtt > 2 * rtt) {
      longRtt *= LONG_RTT_DECAY;
    }
    if (windowInflight < estimate / 2) {
      return; // application-limited: the latency says nothing about more load
    }
    double gradient = Math.max(MIN_GRADIENT, Math.min(1.0, config.tolerance() * longRtt / rtt));
    double next = estimate * gradient + Math.sqrt(estimate);
    next = estimate * (1 - config.smoothing()) + next * config.smoothing();
    estimate = Math.max(config.minLimit(), Math.min(config.maxLimit(), next));
  }
}
