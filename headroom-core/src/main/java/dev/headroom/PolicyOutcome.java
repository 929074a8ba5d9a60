package dev.headroom;

import dev.headroom.internal.Gcra;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * What one policy says about one request: whether it allows it, and the service limit to report
 * for it (draft-ietf-httpapi-ratelimit-headers-09 section 4.1): remaining units {@code r} and
 * {@code t} in both of the meanings the drafts have given it (section 4.1.2 of each):
 * {@link #reset()}, the time until the quota is whole again (draft-08 and -09), and
 * {@link #nextQuota()}, the time until more quota is available (draft-10, -11 and the editor's
 * draft after them). The algorithm classes in {@code dev.headroom.internal} work both out with
 * numbers.
 *
 * <p>When the request as a whole was refused by another policy, this policy's outcome still says
 * "allowed" but nothing was consumed: its {@code remaining} is the value before the request.
 */
public final class PolicyOutcome {

  private final QuotaPolicy policy;
  private final PartitionKey key;
  private final long cost;
  private final boolean allowed;
  private final long remaining;
  private final long resetNanos;
  private final long nextQuotaNanos;
  private final long retryAfterNanos;
  private final Lease lease;

  /**
   * For {@link Store} implementations that know only when the quota is whole again: the time until
   * more quota is available is taken to be the same, which is exact for a concurrency policy and
   * for a fixed window out of debt, and never too early for the others. A store that keeps a token
   * bucket's TAT derives the exact value with {@link #tokenBucketNextQuotaNanos}.
   *
   * @param allowed whether this policy admits the request
   * @param remaining units left after this request (or before it, when it was not consumed), 0..q
   * @param resetNanos nanoseconds until the quota is whole again, at least 0
   * @param retryAfterNanos when refused, nanoseconds until the same request could be allowed; 0
   *     when allowed
   * @param lease the lease taken, for an allowed concurrency policy; otherwise null
   */
  public PolicyOutcome(QuotaPolicy policy, PartitionKey key, long cost, boolean allowed,
      long remaining, long resetNanos, long retryAfterNanos, Lease lease) {
    this(policy, key, cost, allowed, remaining, resetNanos, resetNanos, retryAfterNanos, lease);
  }

  /**
   * For {@link Store} implementations of a token bucket: the time until more quota is available
   * (the next token) given the time until the bucket is full, {@code TAT - now}, as the in-memory
   * store works it out ({@code dev.headroom.internal.Gcra}); 0 for a full bucket.
   */
  public static long tokenBucketNextQuotaNanos(QuotaPolicy policy, long resetNanos) {
    if (resetNanos <= 0) {
      return 0;
    }
    return Gcra.nextQuotaNanos(resetNanos, 0, policy.quota(), policy.emissionIntervalNanos(), policy.burstToleranceNanos());
  }

  /**
   * For {@link Store} implementations.
   *
   * @param allowed whether this policy admits the request
   * @param remaining units left after this request (or before it, when it was not consumed), 0..q
   * @param resetNanos nanoseconds until the quota is whole again, at least 0
   * @param nextQuotaNanos nanoseconds until more quota is available, from 0 to {@code resetNanos}
   *     (larger values are lowered to it)
   * @param retryAfterNanos when refused, nanoseconds until the same request could be allowed; 0
   *     when allowed
   * @param lease the lease taken, for an allowed concurrency policy; otherwise null
   */
  public PolicyOutcome(QuotaPolicy policy, PartitionKey key, long cost, boolean allowed,
      long remaining, long resetNanos, long nextQuotaNanos, long retryAfterNanos, Lease lease) {
    this.policy = Objects.requireNonNull(policy, "policy");
    this.key = Objects.requireNonNull(key, "key");
    this.cost = cost;
    this.allowed = allowed;
    this.remaining = Math.max(0, Math.min(remaining, policy.quota()));
    this.resetNanos = Math.max(0, resetNanos);
    this.nextQuotaNanos = Math.max(0, Math.min(nextQuotaNanos, this.resetNanos));
    this.retryAfterNanos = allowed ? 0 : Math.max(1, retryAfterNanos);
    this.lease = lease;
  }

  public QuotaPolicy policy() {
    return policy;
  }

  public PartitionKey key() {
    return key;
  }

  /** The cost the request asked of this policy. */
  public long cost() {
    return cost;
  }

  /** Whether this policy admits the request. */
  public boolean allowed() {
    return allowed;
  }

  /**
   * Whether the cost asked is larger than the whole quota: such a request can never be allowed,
   * however long it waits (an HTTP layer answers 413, not 429).
   */
  public boolean exceedsQuota() {
    return cost > policy.quota();
  }

  /** {@code r}: quota units left, between 0 and {@code q}. */
  public long remaining() {
    return remaining;
  }

  /** {@code t} as draft-08 and -09 mean it: time until the quota is whole again. */
  public Duration reset() {
    return Duration.ofNanos(resetNanos);
  }

  /** {@link #reset()} in whole seconds, rounded up (a client waiting that long finds the quota whole). */
  public long resetSeconds() {
    return ceilSeconds(resetNanos);
  }

  /**
   * {@code t} as draft-10 and later mean it: time until more quota is available (at least one more
   * unit than {@link #remaining()}); zero when the quota is whole. Never later than {@link #reset()}.
   */
  public Duration nextQuota() {
    return Duration.ofNanos(nextQuotaNanos);
  }

  /** {@link #nextQuota()} in whole seconds, rounded up (a client waiting that long finds more quota). */
  public long nextQuotaSeconds() {
    return ceilSeconds(nextQuotaNanos);
  }

  /** When refused: how long until the same request could be allowed; zero when allowed. */
  public Duration retryAfter() {
    return Duration.ofNanos(retryAfterNanos);
  }

  /** {@link #retryAfter()} in whole seconds, rounded up; at least 1 when refused. */
  public long retryAfterSeconds() {
    return ceilSeconds(retryAfterNanos);
  }

  /** The lease held, for an allowed concurrency policy of an allowed request. */
  public Optional<Lease> lease() {
    return Optional.ofNullable(lease);
  }

  /** How close to exhaustion, from 0 (untouched) to 1 (nothing left). */
  public double utilisation() {
    return 1.0 - (double) remaining / policy.quota();
  }

  static long ceilSeconds(long nanos) {
    return nanos <= 0 ? 0 : (nanos - 1) / 1_000_000_000L + 1;
  }

  @Override
  public String toString() {
    return policy.name() + "[" + key + "]" + (allowed ? " allowed" : " refused") + " r=" + remaining
        + " t=" + resetSeconds() + "s next=" + nextQuotaSeconds() + "s" + (allowed ? "" : " retry-after=" + retryAfterSeconds() + "s");
  }
}
