package dev.headroom.enforcement;

import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.plan.Plan;
import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Adaptive concurrency of one route (off unless a route has it, {@link RouteRules.Builder#adaptive}):
 * how many of the route's requests may be in flight at once, learnt from the latency and the
 * failures of its responses rather than configured. The limit is advertised as a
 * {@code concurrent-requests} policy named {@link #name()} whose {@code q} moves as it is learnt
 * (draft-ietf-httpapi-ratelimit-headers-09 section 2.2: {@code RateLimit-Policy} tells clients
 * every change); a request beyond it is refused 503 {@code temporary-reduced-capacity} (section
 * 5.2) with a Retry-After from the time the requests in flight take to drain. With
 * {@link #scaleQuotas()}, the learnt limit also lowers the route's quota policies by the same
 * factor (their capacity reduction, {@link CapacityReductions}), and restores them as it recovers.
 * How the limit is learnt is {@code AdaptiveLimit}'s class comment.
 *
 * <p>With {@link #shares()}, each plan keeps a guaranteed share of the learnt limit under overload
 * and may borrow what the others leave idle, as Netflix concurrency-limits' partitioned limiters do
 * ({@code AbstractPartitionedLimiter}): while fewer than the limit are in flight any request is let
 * through; once the limit is reached, a request is refused only if its plan already has its share
 * ({@code ceil(limit * share)}) in flight. Plans the shares do not name share what the named ones
 * leave ({@code 1 - sum}) as one pool, which guarantees nothing when the shares come to 1. Nothing
 * is taken back from a plan that borrowed: the route may hold more than the limit in flight while a
 * plan comes back for its share, at most the limit plus the shares it was lent, and admits nobody
 * else until those requests complete. How it is decided is {@code AdaptiveRoute}'s class comment.
 *
 * <p>Immutable; built with {@link #builder()}, every value checked in {@link Builder#build()} with a
 * message naming the field, the value and what was expected.
 */
public final class AdaptiveConcurrency {

  /** The policy name the learnt limit is advertised under, unless another is given. */
  public static final String DEFAULT_NAME = "adaptive";
  /** The least limit by default: one request in flight is always let through. */
  public static final int DEFAULT_MIN_LIMIT = 1;
  /** The greatest limit by default. */
  public static final int DEFAULT_MAX_LIMIT = 1000;
  /** The limit before anything is learnt, by default (Netflix concurrency-limits' default). */
  public static final int DEFAULT_INITIAL_LIMIT = 20;
  /** How much of each new estimate the limit takes (Netflix Gradient2's default smoothing). */
  public static final double DEFAULT_SMOOTHING = 0.2;
  /**
   * How far the latency may rise over its baseline before the limit falls. Gradient2's
   * rttTolerance is 1.5, but the limit settles where the latency is {@code tolerance / (1 -
   * 1/sqrt(limit))} times the baseline (AdaptiveLimit's class comment), which at 1.5 and the limits
   * of a few tens an upstream of tens of slots gives is about 2x: measured on a quiet machine
   * (BENCHMARKS.md, "Adaptive concurrency and waiting under a load ramp, quiet machine"), 1.5
   * admitted at 2.1x and 2.5x the unloaded p99 under three times the capacity, 1.2 at 1.7x and
   * 1.8x with the same goodput (99.5%). Envoy's adaptive concurrency filter keeps a 25% buffer.
   */
  public static final double DEFAULT_TOLERANCE = 1.2;
  /** The shortest window whose responses make one latency sample. */
  public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(1);
  /** The fewest responses a window needs before it is a sample. */
  public static final int DEFAULT_WINDOW_SAMPLES = 10;
  /** Over how many samples the baseline latency drifts up to a new normal (Gradient2's longWindow). */
  public static final int DEFAULT_LONG_WINDOW = 600;
  /** What the limit is multiplied by for a window with a failure (a 5xx or a timeout). */
  public static final double DEFAULT_BACKOFF = 0.9;
  /** How far over 1 the shares may add up: decimal fractions such as 0.1 + 0.2 + 0.7 do not sum to exactly 1. */
  static final double SHARE_SUM_SLACK = 1e-9;

  /** Each setting by its key in configuration, with what it expects: the words of every refusal. */
  public enum Setting {
    /** {@link Builder#name}. */
    NAME("name", "a policy name: 1 to " + QuotaPolicy.MAX_NAME_LENGTH
        + " letters, digits and - _ . : / starting with a letter"),
    /** {@link Builder#minLimit}. */
    MIN_LIMIT("minLimit", "a whole number of requests of at least 1"),
    /** {@link Builder#maxLimit}. */
    MAX_LIMIT("maxLimit", "a whole number of requests of at least minLimit"),
    /** {@link Builder#initialLimit}. */
    INITIAL_LIMIT("initialLimit", "a whole number of requests from minLimit to maxLimit"),
    /** {@link Builder#smoothing}. */
    SMOOTHING("smoothing", "a number above 0 and at most 1, such as 0.2"),
    /** {@link Builder#tolerance}. */
    TOLERANCE("tolerance", "a number from 1 to 10, such as 1.2"),
    /** {@link Builder#window}. */
    WINDOW("window", "a duration from 1ms to 1m, such as 1s"),
    /** {@link Builder#windowSamples}. */
    WINDOW_SAMPLES("windowSamples", "a whole number of responses from 1 to 10000"),
    /** {@link Builder#longWindow}. */
    LONG_WINDOW("longWindow", "a whole number of samples from 1 to 100000"),
    /** {@link Builder#backoff}. */
    BACKOFF("backoff", "a number above 0 and below 1, such as 0.9"),
    /** {@link Builder#shares}. */
    SHARES("shares", "plan names each with a fraction above 0 and at most 1, together at most 1, such as "
        + "{free: 0.2, pro: 0.8}");

    private final String key;
    private final String expected;

    Setting(String key, String expected) {
      this.key = key;
      this.expected = expected;
    }

    /** The key in configuration, such as {@code minLimit}. */
    public String key() {
      return key;
    }

    /** What a value must be. */
    public String expected() {
      return expected;
    }
  }

  private final String name;
  private final int minLimit;
  private final int maxLimit;
  private final int initialLimit;
  private final double smoothing;
  private final double tolerance;
  private final Duration window;
  private final int windowSamples;
  private final int longWindow;
  private final double backoff;
  private final boolean scaleQuotas;
  private final Map<String, Double> shares;

  private AdaptiveConcurrency(Builder b) {
    this.name = b.name;
    this.minLimit = b.minLimit;
    this.maxLimit = b.maxLimit;
    this.initialLimit = b.initialLimit == null ? Math.max(minLimit, Math.min(maxLimit, DEFAULT_INITIAL_LIMIT))
        : b.initialLimit;
    this.smoothing = b.smoothing;
    this.tolerance = b.tolerance;
    this.window = b.window;
    this.windowSamples = b.windowSamples;
    this.longWindow = b.longWindow;
    this.backoff = b.backoff;
    this.scaleQuotas = b.scaleQuotas;
    this.shares = Collections.unmodifiableMap(new LinkedHashMap<>(b.shares));
  }

  /** Starts a configuration with every default. */
  public static Builder builder() {
    return new Builder();
  }

  /** The name of the {@code concurrent-requests} policy the learnt limit is advertised as. */
  public String name() {
    return name;
  }

  /** The least the limit falls to. */
  public int minLimit() {
    return minLimit;
  }

  /** The most the limit grows to. */
  public int maxLimit() {
    return maxLimit;
  }

  /** The limit before anything is learnt. */
  public int initialLimit() {
    return initialLimit;
  }

  /** How much of each new estimate the limit takes, in (0, 1]. */
  public double smoothing() {
    return smoothing;
  }

  /** How far the latency may rise over its baseline (the least seen, forgotten slowly) before the limit falls, at least 1. */
  public double tolerance() {
    return tolerance;
  }

  /** The shortest window whose responses make one latency sample. */
  public Duration window() {
    return window;
  }

  /** The fewest responses a window needs before it is a sample. */
  public int windowSamples() {
    return windowSamples;
  }

  /** Over how many samples the baseline latency drifts up to a new normal. */
  public int longWindow() {
    return longWindow;
  }

  /** What the limit is multiplied by for a window with a failure, in (0, 1). */
  public double backoff() {
    return backoff;
  }

  /** Whether the route's quota policies are reduced by the same factor as the learnt limit. */
  public boolean scaleQuotas() {
    return scaleQuotas;
  }

  /**
   * The guaranteed share of the limit of each plan, by plan name, in the order given; empty (no
   * shares: every request is one pool) by default. Plans not named share what is left.
   */
  public Map<String, Double> shares() {
    return shares;
  }

  /**
   * Checks the plans the shares name against the plans configured.
   *
   * @param plans the names of the configured plans; empty when there are none
   * @throws IllegalArgumentException naming the first share whose plan is not one of them (or the
   *     shares, when there are no plans), its value and what was expected
   */
  public void checkPlans(Collection<String> plans) {
    if (shares.isEmpty()) {
      return;
    }
    if (plans.isEmpty()) {
      throw new IllegalArgumentException("adaptive: shares: " + shares + " is not valid; expected plans to be "
          + "configured, since a request's plan picks its share");
    }
    for (String plan : shares.keySet()) {
      if (!plans.contains(plan)) {
        throw new IllegalArgumentException("adaptive: shares." + plan + ": '" + plan + "' is not valid; expected one "
            + "of the plans " + new TreeSet<>(plans));
      }
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AdaptiveConcurrency a && a.name.equals(name) && a.minLimit == minLimit
        && a.maxLimit == maxLimit && a.initialLimit == initialLimit && a.smoothing == smoothing
        && a.tolerance == tolerance && a.window.equals(window) && a.windowSamples == windowSamples
        && a.longWindow == longWindow && a.backoff == backoff && a.scaleQuotas == scaleQuotas
        && a.shares.equals(shares);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, minLimit, maxLimit, initialLimit, smoothing, tolerance, window, windowSamples,
        longWindow, backoff, scaleQuotas, shares);
  }

  @Override
  public String toString() {
    return "adaptive " + name + " [" + minLimit + ".." + maxLimit + ", initial " + initialLimit + "]"
        + (shares.isEmpty() ? "" : " shares " + shares);
  }

  /** Builds an {@link AdaptiveConcurrency}. Not thread-safe. */
  public static final class Builder {
    private String name = DEFAULT_NAME;
    private int minLimit = DEFAULT_MIN_LIMIT;
    private int maxLimit = DEFAULT_MAX_LIMIT;
    private Integer initialLimit;
    private double smoothing = DEFAULT_SMOOTHING;
    private double tolerance = DEFAULT_TOLERANCE;
    private Duration window = DEFAULT_WINDOW;
    private int windowSamples = DEFAULT_WINDOW_SAMPLES;
    private int longWindow = DEFAULT_LONG_WINDOW;
    private double backoff = DEFAULT_BACKOFF;
    private boolean scaleQuotas = true;
    private Map<String, Double> shares = Map.of();

    private Builder() {}

    /** The policy name the limit is advertised under; {@code adaptive} by default. */
    public Builder name(String name) {
      this.name = name;
      return this;
    }

    /** The least the limit falls to, at least 1; {@value AdaptiveConcurrency#DEFAULT_MIN_LIMIT} by default. */
    public Builder minLimit(int minLimit) {
      this.minLimit = minLimit;
      return this;
    }

    /** The most the limit grows to; {@value AdaptiveConcurrency#DEFAULT_MAX_LIMIT} by default. */
    public Builder maxLimit(int maxLimit) {
      this.maxLimit = maxLimit;
      return this;
    }

    /** The limit before anything is learnt, from min to max; 20 (within min and max) by default. */
    public Builder initialLimit(int initialLimit) {
      this.initialLimit = initialLimit;
      return this;
    }

    /** How much of each new estimate the limit takes, in (0, 1]; 0.2 by default. */
    public Builder smoothing(double smoothing) {
      this.smoothing = smoothing;
      return this;
    }

    /** How far latency may rise over its baseline before the limit falls, from 1 to 10; 1.5 by default. */
    public Builder tolerance(double tolerance) {
      this.tolerance = tolerance;
      return this;
    }

    /** The shortest window whose responses make one latency sample, 1 ms to 1 min; 1 s by default. */
    public Builder window(Duration window) {
      this.window = window;
      return this;
    }

    /** The fewest responses a window needs before it is a sample, 1 to 10000; 10 by default. */
    public Builder windowSamples(int windowSamples) {
      this.windowSamples = windowSamples;
      return this;
    }

    /** Over how many samples the baseline latency drifts up to a new normal, 1 to 100000; 600 by default. */
    public Builder longWindow(int longWindow) {
      this.longWindow = longWindow;
      return this;
    }

    /** What the limit is multiplied by for a window with a failure, in (0, 1); 0.9 by default. */
    public Builder backoff(double backoff) {
      this.backoff = backoff;
      return this;
    }

    /** Whether the route's quota policies are reduced by the learnt limit's factor; true by default. */
    public Builder scaleQuotas(boolean scaleQuotas) {
      this.scaleQuotas = scaleQuotas;
      return this;
    }

    /**
     * The guaranteed share of the limit of each plan, by plan name: fractions above 0 and at most
     * 1 that together come to at most 1; plans not named share what is left. None by default.
     */
    public Builder shares(Map<String, Double> shares) {
      this.shares = shares == null ? null : new LinkedHashMap<>(shares);
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the field, the value and what was expected
     */
    public AdaptiveConcurrency build() {
      try {
        QuotaPolicy.builder(name).quota(1).window(Duration.ofSeconds(1)).build();
      } catch (IllegalArgumentException | NullPointerException e) {
        throw invalid(Setting.NAME, name == null ? null : "'" + name + "'", "");
      }
      if (minLimit < 1) {
        throw invalid(Setting.MIN_LIMIT, minLimit, "");
      }
      if (maxLimit < minLimit) {
        throw invalid(Setting.MAX_LIMIT, maxLimit, " (" + minLimit + ")");
      }
      if (initialLimit != null && (initialLimit < minLimit || initialLimit > maxLimit)) {
        throw invalid(Setting.INITIAL_LIMIT, initialLimit, " (" + minLimit + " to " + maxLimit + ")");
      }
      if (!(smoothing > 0 && smoothing <= 1)) {
        throw invalid(Setting.SMOOTHING, smoothing, "");
      }
      if (!(tolerance >= 1 && tolerance <= 10)) {
        throw invalid(Setting.TOLERANCE, tolerance, "");
      }
      if (window == null || window.compareTo(Duration.ofMillis(1)) < 0 || window.compareTo(Duration.ofMinutes(1)) > 0) {
        throw invalid(Setting.WINDOW, window, "");
      }
      if (windowSamples < 1 || windowSamples > 10_000) {
        throw invalid(Setting.WINDOW_SAMPLES, windowSamples, "");
      }
      if (longWindow < 1 || longWindow > 100_000) {
        throw invalid(Setting.LONG_WINDOW, longWindow, "");
      }
      if (!(backoff > 0 && backoff < 1)) {
        throw invalid(Setting.BACKOFF, backoff, "");
      }
      checkShares(shares);
      return new AdaptiveConcurrency(this);
    }

    /** Each share a plan name with a fraction in (0, 1], together at most 1 (a little over, for decimal sums). */
    private static void checkShares(Map<String, Double> shares) {
      if (shares == null) {
        throw invalid(Setting.SHARES, null, "");
      }
      double sum = 0;
      for (Map.Entry<String, Double> e : shares.entrySet()) {
        String plan = e.getKey();
        try {
          new Plan(plan, Map.of(), Optional.empty());
        } catch (IllegalArgumentException | NullPointerException ex) {
          throw new IllegalArgumentException("adaptive: shares: " + (plan == null ? null : "'" + plan + "'")
              + " is not valid; expected a plan name: 1 to " + Plan.MAX_NAME_LENGTH
              + " letters, digits, - or _ starting with a letter");
        }
        Double share = e.getValue();
        if (share == null || !(share > 0 && share <= 1)) {
          throw new IllegalArgumentException("adaptive: shares." + plan + ": " + share
              + " is not valid; expected a fraction of the limit above 0 and at most 1, such as 0.2");
        }
        sum += share;
      }
      if (sum > 1 + SHARE_SUM_SLACK) {
        throw new IllegalArgumentException("adaptive: shares: " + shares + " is not valid; expected fractions that "
            + "together come to at most 1 (these come to " + sum + ")");
      }
    }

    private static IllegalArgumentException invalid(Setting s, Object value, String bounds) {
      return new IllegalArgumentException("adaptive: " + s.key() + ": " + value + " is not valid; expected "
          + s.expected() + bounds);
    }
  }
}
