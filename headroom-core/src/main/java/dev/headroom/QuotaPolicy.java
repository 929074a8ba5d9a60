package dev.headroom;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A quota policy: at most {@code q} quota units of one {@link QuotaUnit} per window of {@code w}
 * seconds, for each partition, counted by one {@link Algorithm}. The vocabulary is that of
 * draft-ietf-httpapi-ratelimit-headers-09 section 3.1 ({@code q}, {@code qu}, {@code w}).
 *
 * <p>Immutable and thread-safe. Two policies are equal when every field is equal; stores keep the
 * counters of a policy under its {@link #name()}, so a changed policy with the same name keeps
 * counting where the old one stopped.
 *
 * <pre>{@code
 * QuotaPolicy burst = QuotaPolicy.builder("burst")
 *     .quota(100).window(Duration.ofMinutes(1))
 *     .algorithm(Algorithm.TOKEN_BUCKET)
 *     .partitioning("client-ip")
 *     .build();
 * }</pre>
 */
public final class QuotaPolicy {

  /** Longest accepted policy name: names are sent in every header, keep them short. */
  public static final int MAX_NAME_LENGTH = 64;

  /**
   * Largest accepted quota: the largest Structured Fields Integer (RFC 9651 section 3.3.1), so that
   * every quota can be sent as {@code q}. Large enough for any byte quota, small enough that every
   * counter stays an exact integer in IEEE doubles (below 2^53), which a Lua-scripted store depends on.
   */
  public static final long MAX_QUOTA = 999_999_999_999_999L;

  /** Longest accepted window: 366 days, a yearly quota. */
  public static final Duration MAX_WINDOW = Duration.ofDays(366);

  /** Longest accepted lease timeout for {@link Algorithm#CONCURRENCY}. */
  public static final Duration MAX_LEASE_TIMEOUT = Duration.ofDays(1);

  private final String name;
  private final long quota;
  private final QuotaUnit unit;
  private final Duration window;
  private final Algorithm algorithm;
  private final Partitioning partitioning;
  private final Duration leaseTimeout;
  private final int hash;

  private QuotaPolicy(Builder b, Algorithm algorithm, Partitioning partitioning, Duration leaseTimeout) {
    this.name = b.name;
    this.quota = b.quota;
    this.unit = b.unit;
    this.window = b.window;
    this.algorithm = algorithm;
    this.partitioning = partitioning;
    this.leaseTimeout = leaseTimeout;
    this.hash = Objects.hash(name, quota, unit, window, algorithm, partitioning, leaseTimeout);
  }

  /** Starts a policy with the given name; see {@link Builder#build()} for the rules. */
  public static Builder builder(String name) {
    return new Builder().name(name);
  }

  /** A builder holding this policy's values, to derive a changed copy. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.name = name;
    b.quota = quota;
    b.quotaSet = true;
    b.unit = unit;
    b.window = window;
    b.algorithm = algorithm;
    b.partitioning = partitioning;
    b.partitioningText = null;
    b.leaseTimeout = leaseTimeout;
    return b;
  }

  /** The policy's name, safe to send as a Structured Fields String or Token. */
  public String name() {
    return name;
  }

  /** {@code q}: quota units allowed per window and partition. */
  public long quota() {
    return quota;
  }

  /** {@code qu}: what the quota counts. */
  public QuotaUnit unit() {
    return unit;
  }

  /** {@code w}: the window, a whole number of seconds. */
  public Duration window() {
    return window;
  }

  /** {@code w} in seconds. */
  public long windowSeconds() {
    return window.getSeconds();
  }

  /** How the quota is counted. */
  public Algorithm algorithm() {
    return algorithm;
  }

  /**
   * How requests are partitioned (for example {@code client-ip}, {@code api-key|client-ip}), read
   * once when the policy was built; the HTTP layer derives keys and the limit type from its parts.
   * Empty when none was set: one partition for everyone.
   */
  public Optional<Partitioning> partitioning() {
    return Optional.ofNullable(partitioning);
  }

  /**
   * For {@link Algorithm#CONCURRENCY}: how long a lease is held at most when its release never
   * arrives. Defaults to the window.
   */
  public Duration leaseTimeout() {
    return leaseTimeout;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof QuotaPolicy)) {
      return false;
    }
    QuotaPolicy other = (QuotaPolicy) o;
    return hash == other.hash
        && quota == other.quota
        && name.equals(other.name)
        && unit == other.unit
        && window.equals(other.window)
        && algorithm == other.algorithm
        && Objects.equals(partitioning, other.partitioning)
        && leaseTimeout.equals(other.leaseTimeout);
  }

  @Override
  public int hashCode() {
    return hash;
  }

  @Override
  public String toString() {
    return "QuotaPolicy{" + name + ";q=" + quota + ";qu=" + unit.token() + ";w=" + windowSeconds()
        + ";algorithm=" + algorithm.token()
        + (partitioning == null ? "" : ";partitioning=" + partitioning) + "}";
  }

  /** Builds a {@link QuotaPolicy}; every setter is checked again as a whole in {@link #build()}. */
  public static final class Builder {
    private String name;
    private long quota;
    private boolean quotaSet;
    private QuotaUnit unit = QuotaUnit.REQUESTS;
    private Duration window;
    private Algorithm algorithm;
    private Partitioning partitioning;
    private String partitioningText;
    private Duration leaseTimeout;

    private Builder() {}

    /** The name: 1 to 64 characters of letters, digits and {@code - _ . : /}, starting with a letter. */
    public Builder name(String name) {
      this.name = name;
      return this;
    }

    /** {@code q}: 1 to {@link #MAX_QUOTA}. Required. */
    public Builder quota(long quota) {
      this.quota = quota;
      this.quotaSet = true;
      return this;
    }

    /** {@code qu}; defaults to {@link QuotaUnit#REQUESTS}. */
    public Builder unit(QuotaUnit unit) {
      this.unit = unit;
      return this;
    }

    /** {@code w}: whole seconds, 1 second to {@link #MAX_WINDOW}. Required. */
    public Builder window(Duration window) {
      this.window = window;
      return this;
    }

    /**
     * The algorithm; defaults to {@link Algorithm#CONCURRENCY} for {@code concurrent-requests} and
     * {@link Algorithm#TOKEN_BUCKET} otherwise.
     */
    public Builder algorithm(Algorithm algorithm) {
      this.algorithm = algorithm;
      return this;
    }

    /**
     * How requests are partitioned, as configuration writes it ({@link Partitioning#parse}); optional.
     * The text is read by {@link #build()}, which refuses it naming the policy when it is not a
     * partitioning; nothing reads it again afterwards.
     */
    public Builder partitioning(String partitioning) {
      this.partitioningText = partitioning;
      this.partitioning = null;
      return this;
    }

    /** How requests are partitioned; optional, {@code null} for none (one partition for everyone). */
    public Builder partitioning(Partitioning partitioning) {
      this.partitioning = partitioning;
      this.partitioningText = null;
      return this;
    }

    /** For concurrency policies: the longest a lease is held; defaults to the window. */
    public Builder leaseTimeout(Duration leaseTimeout) {
      this.leaseTimeout = leaseTimeout;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the field, the value and what is expected
     */
    public QuotaPolicy build() {
      if (name == null || name.isEmpty() || name.length() > MAX_NAME_LENGTH || !validName(name)) {
        throw new IllegalArgumentException("name: expected 1 to " + MAX_NAME_LENGTH
            + " characters of letters, digits and - _ . : / starting with a letter, got "
            + (name == null ? "null" : "'" + printable(name) + "'"));
      }
      String where = "policy '" + name + "': ";
      if (!quotaSet || quota < 1 || quota > MAX_QUOTA) {
        throw new IllegalArgumentException(where + "quota: expected an integer from 1 to " + MAX_QUOTA
            + ", got " + (!quotaSet ? "nothing (quota is required)" : Long.toString(quota)));
      }
      if (unit == null) {
        throw new IllegalArgumentException(where + "unit: expected requests, content-bytes or concurrent-requests, got null");
      }
      if (window == null) {
        throw new IllegalArgumentException(where + "window: expected a whole number of seconds from 1 to "
            + MAX_WINDOW.getSeconds() + ", got nothing (window is required)");
      }
      if (window.isNegative() || window.isZero() || window.getNano() != 0 || window.compareTo(MAX_WINDOW) > 0) {
        throw new IllegalArgumentException(where + "window: expected a whole number of seconds from 1 to "
            + MAX_WINDOW.getSeconds() + " (366 days), got " + window);
      }
      // Defaults are resolved into locals: the builder keeps what was set, so it can be reused.
      Algorithm algorithm = this.algorithm != null ? this.algorithm
          : unit == QuotaUnit.CONCURRENT_REQUESTS ? Algorithm.CONCURRENCY : Algorithm.TOKEN_BUCKET;
      if ((algorithm == Algorithm.CONCURRENCY) != (unit == QuotaUnit.CONCURRENT_REQUESTS)) {
        throw new IllegalArgumentException(where + "algorithm: the concurrency algorithm goes with unit "
            + "concurrent-requests and only with it, got algorithm " + algorithm.token() + " with unit " + unit.token());
      }
      if (algorithm == Algorithm.TOKEN_BUCKET && quota > window.toNanos()) {
        throw new IllegalArgumentException(where + "quota: a token bucket refills at most one unit per "
            + "nanosecond, so quota must not exceed the window in nanoseconds (" + window.toNanos()
            + "), got " + quota + "; use a longer window or a fixed or sliding window");
      }
      if (algorithm == Algorithm.CONCURRENCY && quota > 100_000) {
        throw new IllegalArgumentException(where + "quota: a concurrency policy tracks each lease, expected "
            + "at most 100000 concurrent requests, got " + quota);
      }
      Partitioning partitioning = this.partitioning;
      if (partitioningText != null) {
        try {
          partitioning = Partitioning.parse(partitioningText);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(where + e.getMessage(), e);
        }
      }
      Duration leaseTimeout = this.leaseTimeout;
      if (leaseTimeout == null) {
        leaseTimeout = window.compareTo(MAX_LEASE_TIMEOUT) > 0 ? MAX_LEASE_TIMEOUT : window;
      } else if (leaseTimeout.isNegative() || leaseTimeout.isZero() || leaseTimeout.compareTo(MAX_LEASE_TIMEOUT) > 0) {
        throw new IllegalArgumentException(where + "leaseTimeout: expected more than zero and at most "
            + MAX_LEASE_TIMEOUT + ", got " + leaseTimeout);
      }
      return new QuotaPolicy(this, algorithm, partitioning, leaseTimeout);
    }

    private static boolean validName(String s) {
      char first = s.charAt(0);
      if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z'))) {
        return false;
      }
      for (int i = 1; i < s.length(); i++) {
        char c = s.charAt(i);
        boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
            || c == '-' || c == '_' || c == '.' || c == ':' || c == '/';
        if (!ok) {
          return false;
        }
      }
      return true;
    }

    /** Shortens and escapes a bad value so that it can be quoted in an error message. */
    static String printable(String s) {
      StringBuilder out = new StringBuilder();
      for (int i = 0; i < s.length() && out.length() < 80; i++) {
        char c = s.charAt(i);
        if (c < 0x20 || c > 0x7e) {
          out.append(String.format("\\u%04x", (int) c));
        } else {
          out.append(c);
        }
      }
      if (out.length() >= 80 && s.length() > 80) {
        out.append("...(").append(s.length()).append(" chars)");
      }
      return out.toString();
    }
  }
  /**
   * The token bucket's emission interval {@code T} in nanoseconds: the refill time of one unit,
   * {@code window / quota} rounded up (see the GCRA description in the store's class comment).
   * Declared so that a distributed store evaluates the token bucket with exactly the parameters
   * the in-memory store uses; meaningful for any policy, used for {@link Algorithm#TOKEN_BUCKET}.
   */
  public long emissionIntervalNanos() {
    long w = window.toNanos();
    return (w + quota - 1) / quota;
  }

  /**
   * The token bucket's burst tolerance {@code tau = quota * T} in nanoseconds: how far the
   * theoretical arrival time may run ahead of now (see {@link #emissionIntervalNanos()}).
   */
  public long burstToleranceNanos() {
    return quota * emissionIntervalNanos();
  }

}
