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
 * proportion. The healthy latency ({@code baseline}) is the least latency sample seen, as Vegas's
 * and Envoy's minimum round trip is, forgotten slowly: it follows a lower sample at once, and a
 * higher one only as Gradient2's long-run average would ({@code longWindow} samples). So the cold
 * start of a process (whose first responses are slow while code is compiled and pools fill) does not
 * pass for health, as it would in a plain average; and, unlike Envoy's minimum, it needs no period
 * with the concurrency pinned low to measure again ({@code min_rtt_calc_params}), which refuses
 * traffic while it measures: it drifts to a new normal by itself. State kept, under one lock taken
 * once per completed request:
 * <ul>
 * <li>{@code limit}: the estimate, a real number between {@code minLimit} and {@code maxLimit};
 *   callers see it rounded ({@link #limit()}).
 * <li>The open window: its start, its responses' latency sum and count, whether one failed, and the
 *   most requests that were in flight. A window closes once it is {@code window} long and has
 *   {@code windowSamples} responses; its average latency is one sample ({@code shortRtt}). Averaging
 *   over a window keeps one slow response from moving the limit.
 * <li>{@code baseline}: the first sample, then the lower of each sample and an exponential average
 *   towards it over {@code longWindow} samples (weight {@code 2 / (longWindow + 1)}).
 * <li>The open window's sum of the front end's own delay in its latencies ({@code ownDelay}): a
 *   gateway whose event loop is saturated reads every response late, so its latencies rise with
 *   its own load while the upstream's do not. A window's delay is discounted from its latency, but
 *   never below the baseline ({@code shortRtt = max(latency - delay, min(latency, baseline))}):
 *   the baseline is learnt only from what the front end did not delay, and a saturated front end
 *   no longer reads as a slow upstream and sheds its own traffic (measured: the gateway at twice its
 *   saturating load, in front of an upstream answering in a fraction of a millisecond, admitted a
 *   tenth of what it could serve before; see BENCHMARKS.md).
 * </ul>
 * When a window closes:
 * <pre>
 *   failed window (a 5xx, a timeout):  limit = max(minLimit, limit * backoff)
 *   otherwise:
 *     baseline = min(shortRtt, baseline + (shortRtt - baseline) * 2 / (longWindow + 1))
 *     gradient = clamp(tolerance * baseline / shortRtt, 0.5, 1)
 *     estimate = limit * gradient + sqrt(limit)                 (sqrt: room to grow, and to find out)
 *     next     = limit * (1 - smoothing) + estimate * smoothing
 *     next     = min(limit, next) when fewer than limit / 2 were in flight
 *     limit    = clamp(next, minLimit, maxLimit)
 * </pre>
 * With fewer than half the limit in flight the callers, not the upstream, set the pace: the window
 * is no proof that more would be served as fast, so the limit does not grow. It may still fall:
 * Gradient2 leaves it unchanged instead, so a limit that once grew past twice the callers'
 * concurrency never noticed the upstream slowing down.
 * Worked numbers, smoothing 1 and tolerance 1.5: limit 20 at a steady 10 ms grows to
 * {@code 20 + sqrt(20) = 24.5}, then 29.4, 34.8, while the callers keep it busy. The upstream slows to
 * 100 ms: gradient {@code 1.5 * 10 / 100} is clamped to 0.5, and the limit goes 34.8, 23.3, 16.5,
 * 12.3; it settles where {@code limit * 0.5 + sqrt(limit) = limit}, at 4, unless the baseline
 * drifts up to the new latency first (with the default longWindow of 600, over hundreds of
 * windows: Gradient2's acceptance of a new normal). The upstream heals: shortRtt is back at the
 * baseline, the gradient is 1, and the limit grows by {@code sqrt(limit)} a window again.
 *
 * <p>Time is read by the caller from the gate's ticker and passed in: nothing here reads a clock.
 * Thread-safe: {@link #limit()} reads a volatile; {@link #onSample} and {@link #latencyNanos()} hold
 * the lock.
 */
final class AdaptiveLimit {
  /** The least gradient: one window never more than halves the estimate before smoothing (Gradient2). */
  static final double MIN_GRADIENT = 0.5;

  private final AdaptiveConcurrency config;
  private final long windowNanos;
  private final double longWeight;

  private double estimate;
  private volatile int limit;
  private double baseline = Double.NaN;
  private double shortRtt = Double.NaN;
  private long windowStart;
  private long windowSum;
  private long windowDelaySum;
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
    return onSample(now, rttNanos, 0, inflight, failed);
  }

  /**
   * As {@link #onSample(long, long, int, boolean)}, with {@code ownDelayNanos} of {@code rttNanos}
   * the front end's own delay (see the class comment).
   */
  synchronized boolean onSample(long now, long rttNanos, long ownDelayNanos, int inflight, boolean failed) {
    windowResponses++;
    windowInflight = Math.max(windowInflight, inflight);
    if (failed) {
      windowFailed = true;
    } else {
      long rtt = Math.max(0, rttNanos);
      windowSum = saturatedAdd(windowSum, rtt);
      windowDelaySum = saturatedAdd(windowDelaySum, Math.min(rtt, Math.max(0, ownDelayNanos)));
      windowCount++;
    }
    if (now - windowStart < windowNanos || windowResponses < config.windowSamples()) {
      return false;
    }
    if (windowFailed) {
      estimate = Math.max(config.minLimit(), estimate * config.backoff());
    } else {
      update((double) windowSum / windowCount, (double) windowDelaySum / windowCount);
    }
    windowStart = now;
    windowSum = 0;
    windowDelaySum = 0;
    windowCount = 0;
    windowResponses = 0;
    windowFailed = false;
    windowInflight = 0;
    int rounded = (int) Math.max(config.minLimit(), Math.min(config.maxLimit(), Math.round(estimate)));
    boolean changed = rounded != limit;
    limit = rounded;
    return changed;
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return r < a ? Long.MAX_VALUE : r;
  }

  /**
   * One window's average latency, {@code sample}, in nanoseconds, {@code delay} of it the front
   * end's own (see the class comment).
   */
  private void update(double sample, double delay) {
    double rtt = Math.max(1, Double.isNaN(baseline) || delay <= 0 ? sample
        : Math.max(sample - delay, Math.min(sample, baseline)));
    shortRtt = rtt;
    baseline = Double.isNaN(baseline) ? rtt : Math.min(rtt, baseline + (rtt - baseline) * longWeight);
    double gradient = Math.max(MIN_GRADIENT, Math.min(1.0, config.tolerance() * baseline / rtt));
    double next = estimate * gradient + Math.sqrt(estimate);
    next = estimate * (1 - config.smoothing()) + next * config.smoothing();
    if (windowInflight < estimate / 2) {
      next = Math.min(estimate, next); // application-limited: no proof that more would be served as fast
    }
    estimate = Math.max(config.minLimit(), Math.min(config.maxLimit(), next));
  }
}
