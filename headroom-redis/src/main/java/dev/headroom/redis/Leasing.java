package dev.headroom.redis;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import dev.headroom.Ticker;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * Options of quota leasing ({@link LeasingStore}): which policies are leased and how large a slice
 * is. Immutable; built by {@link #builder()}.
 *
 * <p>Only {@link Algorithm#FIXED_WINDOW} and {@link Algorithm#TOKEN_BUCKET} policies can be leased.
 * A {@link Algorithm#CONCURRENCY} unit is a lease held by one request until it completes, not a
 * count that can be spent elsewhere; a {@link Algorithm#SLIDING_WINDOW} counts the previous window
 * at a weight, so units taken in one window and spent after its end would be counted at less than
 * their weight and over-admit. Both are refused by {@link Builder#build()}.
 */
public final class Leasing {

  /** Default {@link Builder#targetInterval}: a slice lasts about 100 ms of the key's local rate. */
  public static final Duration DEFAULT_TARGET_INTERVAL = Duration.ofMillis(100);

  /** Default {@link Builder#maxFraction}: one slice holds at most 5% of the quota. */
  public static final double DEFAULT_MAX_FRACTION = 0.05;

  /** Default {@link Builder#maxHold}: a slice not spent within 1 s is returned. */
  public static final Duration DEFAULT_MAX_HOLD = Duration.ofSeconds(1);

  /** Default {@link Builder#idleReturn}: a key unused for 500 ms returns its slice. */
  public static final Duration DEFAULT_IDLE_RETURN = Duration.ofMillis(500);

  /** Default {@link Builder#maxKeys}: partitions holding a slice at once, per node. */
  public static final int DEFAULT_MAX_KEYS = 10_000;

  private final Set<QuotaPolicy> policies;
  private final Set<String> names;
  private final boolean every;
  private final Duration targetInterval;
  private final double maxFraction;
  private final Duration maxHold;
  private final Duration idleReturn;
  private final int maxKeys;
  private final Ticker ticker;

  private Leasing(Builder b) {
    this.policies = Set.copyOf(b.policies);
    this.names = Set.copyOf(b.names);
    this.every = b.every;
    this.targetInterval = b.targetInterval;
    this.maxFraction = b.maxFraction;
    this.maxHold = b.maxHold;
    this.idleReturn = b.idleReturn;
    this.maxKeys = b.maxKeys;
    this.ticker = b.ticker;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * The policies given by {@link Builder#policy}: decided from local slices, as are those that
   * {@link #leases} by name or by {@link Builder#everyPolicy}. Every other policy is decided by the
   * wrapped store.
   */
  public Set<QuotaPolicy> policies() {
    return policies;
  }

  /** The names given by {@link Builder#policyNamed}. */
  public Set<String> policyNames() {
    return names;
  }

  /**
   * Whether this policy is decided from local slices: given by {@link Builder#policy}, or a fixed
   * window or token bucket named by {@link Builder#policyNamed} or covered by
   * {@link Builder#everyPolicy}.
   */
  public boolean leases(QuotaPolicy policy) {
    if (policies.contains(policy)) {
      return true;
    }
    return (every || names.contains(policy.name())) && supports(policy.algorithm());
  }

  public Duration targetInterval() {
    return targetInterval;
  }

  public double maxFraction() {
    return maxFraction;
  }

  public Duration maxHold() {
    return maxHold;
  }

  public Duration idleReturn() {
    return idleReturn;
  }

  public int maxKeys() {
    return maxKeys;
  }

  Ticker ticker() {
    return ticker;
  }

  /** Whether a policy can be leased at all. */
  public static boolean supports(Algorithm algorithm) {
    return algorithm == Algorithm.FIXED_WINDOW || algorithm == Algorithm.TOKEN_BUCKET;
  }

  /** Builds {@link Leasing}; every setter names the field in its error. */
  public static final class Builder {
    private final Set<QuotaPolicy> policies = new LinkedHashSet<>();
    private final Set<String> names = new LinkedHashSet<>();
    private boolean every;
    private Duration targetInterval = DEFAULT_TARGET_INTERVAL;
    private double maxFraction = DEFAULT_MAX_FRACTION;
    private Duration maxHold = DEFAULT_MAX_HOLD;
    private Duration idleReturn = DEFAULT_IDLE_RETURN;
    private int maxKeys = DEFAULT_MAX_KEYS;
    private Ticker ticker = Ticker.system();

    private Builder() {}

    /** Leases this policy (fixed window or token bucket); may be called several times. */
    public Builder policy(QuotaPolicy policy) {
      policies.add(Objects.requireNonNull(policy, "policy"));
      return this;
    }

    /**
     * Leases every fixed-window or token-bucket policy of this name, whatever its quota and window:
     * a policy that configuration reloads or scales (a new {@link QuotaPolicy} of the same name)
     * stays leased. Policies of this name with another algorithm are decided centrally.
     */
    public Builder policyNamed(String name) {
      if (name == null || name.isBlank()) {
        throw new IllegalArgumentException("leasing.policies: expected a policy name, got '" + name + "'");
      }
      names.add(name);
      return this;
    }

    /** Leases every fixed-window and token-bucket policy; the others are decided centrally. */
    public Builder everyPolicy() {
      this.every = true;
      return this;
    }

    /** How long a slice should last at the key's observed local rate (1 ms to 1 min). */
    public Builder targetInterval(Duration interval) {
      this.targetInterval = between("leasing.targetInterval", interval, Duration.ofMillis(1), Duration.ofMinutes(1));
      return this;
    }

    /** The largest share of {@code q} one slice may hold, above 0 and at most 1. */
    public Builder maxFraction(double fraction) {
      if (!(fraction > 0 && fraction <= 1)) {
        throw new IllegalArgumentException("leasing.maxFraction: expected a number above 0 and at most 1, got "
            + fraction);
      }
      this.maxFraction = fraction;
      return this;
    }

    /**
     * How long a slice may be spent after it was taken (1 ms to 1 min); the rest is returned. For a
     * token bucket this bounds the over-admission (see {@link LeasingStore}).
     */
    public Builder maxHold(Duration hold) {
      this.maxHold = between("leasing.maxHold", hold, Duration.ofMillis(1), Duration.ofMinutes(1));
      return this;
    }

    /** A key unused this long returns its slice (1 ms to 1 min). */
    public Builder idleReturn(Duration idle) {
      this.idleReturn = between("leasing.idleReturn", idle, Duration.ofMillis(1), Duration.ofMinutes(1));
      return this;
    }

    /** How many partitions may hold a slice at once; others are decided centrally (1 to 10^7). */
    public Builder maxKeys(int keys) {
      if (keys < 1 || keys > 10_000_000) {
        throw new IllegalArgumentException("leasing.maxKeys: expected an integer from 1 to 10000000, got " + keys);
      }
      this.maxKeys = keys;
      return this;
    }

    /** The local clock slices are timed by; exists for tests ({@link dev.headroom.ManualTicker}). */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * @throws IllegalArgumentException if no policy is given or a policy's algorithm cannot be leased
     */
    public Leasing build() {
      if (policies.isEmpty() && names.isEmpty() && !every) {
        throw new IllegalArgumentException("leasing.policies: expected at least one fixed-window or token-bucket "
            + "policy to lease, got none");
      }
      for (QuotaPolicy p : policies) {
        if (!supports(p.algorithm())) {
          throw new IllegalArgumentException("leasing.policies: policy '" + p.name() + "' uses "
              + p.algorithm().token() + ", which cannot be leased; expected " + Algorithm.FIXED_WINDOW.token()
              + " or " + Algorithm.TOKEN_BUCKET.token() + " (a concurrency unit is held by one request until it "
              + "completes; a sliding window would over-admit units spent after its window ended)");
        }
      }
      return new Leasing(this);
    }

    private static Duration between(String field, Duration value, Duration min, Duration max) {
      Objects.requireNonNull(value, field);
      if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
        throw new IllegalArgumentException(field + ": expected a duration from " + min + " to " + max + ", got "
            + value);
      }
      return value;
    }
  }
}
