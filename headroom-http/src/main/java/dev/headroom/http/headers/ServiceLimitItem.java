package dev.headroom.http.headers;

import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A service limit as a RateLimit field reports it (draft-ietf-httpapi-ratelimit-headers-09
 * section 4.1): the policy identifier, the remaining units {@code r}, the seconds {@code t} and
 * the partition key {@code pk}; in the editor's draft after -11, {@code a} and {@code w} for
 * {@code r} and {@code t}, and the cost {@code c} of the request. Dialects before draft-08 report
 * one limit without a name, with the expiring limit ({@code RateLimit-Limit}, {@code limit=},
 * {@code X-RateLimit-Limit}) in {@link #limit()}.
 *
 * <p>What {@code t} means depends on the draft the server follows, which the wire does not say:
 * until the quota resets (draft-09 and every dialect before it), or until more quota is available
 * (draft-10, -11 and the editor's draft). Either way, waiting that long is never too early to look
 * again; only under draft-09 does it promise the whole quota.
 *
 * <p>Immutable.
 */
public final class ServiceLimitItem {

  private final String name;
  private final long remaining;
  private final long resetSeconds;
  private final long limit;
  private final long cost;
  private final byte[] pk;
  private final HeaderDialect dialect;
  private final VendorDialect vendor;

  private ServiceLimitItem(Builder b) {
    this.name = b.name;
    this.remaining = b.remaining;
    this.resetSeconds = b.resetSeconds;
    this.limit = b.limit;
    this.cost = b.cost;
    this.pk = b.pk;
    this.dialect = b.dialect;
    this.vendor = b.vendor;
  }

  /** Starts an item; every field is optional. */
  public static Builder builder() {
    return new Builder();
  }

  /** The policy identifier; absent before draft-08. */
  public Optional<String> name() {
    return Optional.ofNullable(name);
  }

  /** {@code r} (or {@code a}): remaining quota units, when sent. */
  public OptionalLong remaining() {
    return remaining < 0 ? OptionalLong.empty() : OptionalLong.of(remaining);
  }

  /**
   * {@code t} (or {@code w}), when sent: time until the quota resets (draft-09) or until more quota
   * is available (draft-10 and later); see the class comment.
   */
  public Optional<Duration> reset() {
    return resetSeconds < 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(resetSeconds));
  }

  /** The expiring limit, in the dialects that send one with the service limit. */
  public OptionalLong limit() {
    return limit < 0 ? OptionalLong.empty() : OptionalLong.of(limit);
  }

  /** {@code c}: the quota units the request cost, when sent (the editor's draft after -11). */
  public OptionalLong cost() {
    return cost < 0 ? OptionalLong.empty() : OptionalLong.of(cost);
  }

  /** {@code pk}: the partition key bytes, when sent (a copy). */
  public Optional<byte[]> partitionKey() {
    return pk == null ? Optional.empty() : Optional.of(pk.clone());
  }

  /** The dialect it was read from or is meant for. */
  public HeaderDialect dialect() {
    return dialect;
  }

  /** The vendor whose own fields it was read from, when it is one of theirs; {@link #dialect()} is then their shape. */
  public Optional<VendorDialect> vendor() {
    return Optional.ofNullable(vendor);
  }

  /** This item, read from {@code vendor}'s fields. */
  ServiceLimitItem withVendor(VendorDialect vendor) {
    Builder b = builder().dialect(dialect).vendor(vendor);
    b.name = name;
    b.remaining = remaining;
    b.resetSeconds = resetSeconds;
    b.limit = limit;
    b.pk = pk;
    return b.build();
  }

  long remainingOrMinus1() {
    return remaining;
  }

  long resetOrMinus1() {
    return resetSeconds;
  }

  long limitOrMinus1() {
    return limit;
  }

  byte[] pkUnsafe() {
    return pk;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ServiceLimitItem)) {
      return false;
    }
    ServiceLimitItem s = (ServiceLimitItem) o;
    return Objects.equals(name, s.name) && remaining == s.remaining && resetSeconds == s.resetSeconds
        && limit == s.limit && cost == s.cost && Arrays.equals(pk, s.pk) && dialect == s.dialect && vendor == s.vendor;
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, remaining, resetSeconds, limit, cost, Arrays.hashCode(pk), dialect, vendor);
  }

  @Override
  public String toString() {
    return (name == null ? "" : "\"" + name + "\"") + (limit < 0 ? "" : ";limit=" + limit)
        + (remaining < 0 ? "" : ";r=" + remaining) + (resetSeconds < 0 ? "" : ";t=" + resetSeconds)
        + (cost < 0 ? "" : ";c=" + cost)
        + (pk == null ? "" : ";pk=:" + Base64.getEncoder().encodeToString(pk) + ":") + " (" + (vendor == null ? "" : vendor + ", ") + dialect + ")";
  }

  /** Builds a {@link ServiceLimitItem}; every setter validates its argument. */
  public static final class Builder {
    private String name;
    private long remaining = -1;
    private long resetSeconds = -1;
    private long limit = -1;
    private long cost = -1;
    private byte[] pk;
    private HeaderDialect dialect = HeaderDialect.IETF;
    private VendorDialect vendor;

    private Builder() {}

    /** The policy identifier: 1 to 256 printable ASCII characters. */
    public Builder name(String name) {
      this.name = ItemChecks.name(name);
      return this;
    }

    /** {@code r}: 0 to {@value QuotaPolicyItem#MAX_INTEGER}. */
    public Builder remaining(long remaining) {
      this.remaining = ItemChecks.integer("r", remaining);
      return this;
    }

    /** {@code t}: a whole number of seconds, zero or more. */
    public Builder reset(Duration reset) {
      this.resetSeconds = ItemChecks.reset(reset);
      return this;
    }

    /** The expiring limit: 0 to {@value QuotaPolicyItem#MAX_INTEGER}. */
    public Builder limit(long limit) {
      this.limit = ItemChecks.integer("limit", limit);
      return this;
    }

    /** {@code c}: 0 to {@value QuotaPolicyItem#MAX_INTEGER}. */
    public Builder cost(long cost) {
      this.cost = ItemChecks.integer("c", cost);
      return this;
    }

    /** {@code pk}: at most 1024 bytes (copied). */
    public Builder partitionKey(byte[] pk) {
      this.pk = ItemChecks.pk(pk);
      return this;
    }

    /** The dialect; {@link HeaderDialect#IETF} by default. */
    public Builder dialect(HeaderDialect dialect) {
      this.dialect = Objects.requireNonNull(dialect, "dialect");
      return this;
    }

    /** The vendor whose own fields it is read from; none by default. */
    public Builder vendor(VendorDialect vendor) {
      this.vendor = Objects.requireNonNull(vendor, "vendor");
      return this;
    }

    public ServiceLimitItem build() {
      return new ServiceLimitItem(this);
    }
  }
}
