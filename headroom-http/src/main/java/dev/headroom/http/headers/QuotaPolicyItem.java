package dev.headroom.http.headers;

import dev.headroom.QuotaUnit;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;

/**
 * A quota policy as a RateLimit field advertises it (draft-ietf-httpapi-ratelimit-headers-09
 * section 3.1): an identifier, the quota {@code q}, its unit {@code qu}, the window {@code w} and
 * the partition key {@code pk}. Older dialects carry only {@code q} and {@code w} and no name.
 *
 * <p>Immutable.
 */
public final class QuotaPolicyItem {

  /** Largest Structured Fields Integer (RFC 9651 section 3.3.1). */
  public static final long MAX_INTEGER = 999_999_999_999_999L;

  /** Longest identifier accepted. */
  public static final int MAX_NAME_CHARS = 256;

  /** Longest partition key accepted, in bytes. */
  public static final int MAX_PK_BYTES = 1024;

  private final String name;
  private final long quota;
  private final String unit;
  private final long windowSeconds;
  private final byte[] pk;
  private final HeaderDialect dialect;

  private QuotaPolicyItem(Builder b) {
    this.name = b.name;
    this.quota = b.quota;
    this.unit = b.unit;
    this.windowSeconds = b.windowSeconds;
    this.pk = b.pk;
    this.dialect = b.dialect;
  }

  /** Starts an item; {@link Builder#quota(long)} is required. */
  public static Builder builder() {
    return new Builder();
  }

  /** The identifier; absent in the dialects before draft-08. */
  public Optional<String> name() {
    return Optional.ofNullable(name);
  }

  /** {@code q}: the quota, in quota units. */
  public long quota() {
    return quota;
  }

  /** {@code qu} as sent; {@code requests} when absent (section 3.1.2). */
  public String unit() {
    return unit;
  }

  /** {@code qu} as a registered unit, when it is one. */
  public Optional<QuotaUnit> quotaUnit() {
    for (QuotaUnit u : QuotaUnit.values()) {
      if (u.token().equals(unit)) {
        return Optional.of(u);
      }
    }
    return Optional.empty();
  }

  /** {@code w}: the window, when sent. */
  public Optional<Duration> window() {
    return windowSeconds == 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(windowSeconds));
  }

  /** {@code pk}: the partition key bytes, when sent (a copy). */
  public Optional<byte[]> partitionKey() {
    return pk == null ? Optional.empty() : Optional.of(pk.clone());
  }

  /** The dialect it was read from or is meant for. */
  public HeaderDialect dialect() {
    return dialect;
  }

  boolean hasPk() {
    return pk != null;
  }

  byte[] pkUnsafe() {
    return pk;
  }

  long windowSecondsOrZero() {
    return windowSeconds;
  }

  /** Same identifier and partition key: the two items describe the same policy. */
  boolean sameIdentity(String otherName, byte[] otherPk) {
    return Objects.equals(name, otherName) && Arrays.equals(pk, otherPk);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof QuotaPolicyItem)) {
      return false;
    }
    QuotaPolicyItem p = (QuotaPolicyItem) o;
    return Objects.equals(name, p.name) && quota == p.quota && unit.equals(p.unit)
        && windowSeconds == p.windowSeconds && Arrays.equals(pk, p.pk) && dialect == p.dialect;
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, quota, unit, windowSeconds, Arrays.hashCode(pk), dialect);
  }

  @Override
  public String toString() {
    return (name == null ? "" : "\"" + name + "\"") + ";q=" + quota
        + (unit.equals("requests") ? "" : ";qu=\"" + unit + "\"")
        + (windowSeconds == 0 ? "" : ";w=" + windowSeconds)
        + (pk == null ? "" : ";pk=:" + Base64.getEncoder().encodeToString(pk) + ":") + " (" + dialect + ")";
  }

  /** Builds a {@link QuotaPolicyItem}; every setter validates its argument. */
  public static final class Builder {
    private String name;
    private long quota = -1;
    private String unit = "requests";
    private long windowSeconds;
    private byte[] pk;
    private HeaderDialect dialect = HeaderDialect.IETF;

    private Builder() {}

    /** The identifier: 1 to {@value #MAX_NAME_CHARS} printable ASCII characters. */
    public Builder name(String name) {
      this.name = ItemChecks.name(name);
      return this;
    }

    /** {@code q}: 0 to {@value #MAX_INTEGER}. */
    public Builder quota(long quota) {
      this.quota = ItemChecks.integer("q", quota);
      return this;
    }

    /** {@code qu}: 1 to 64 printable ASCII characters; {@code requests} by default. */
    public Builder unit(String unit) {
      this.unit = ItemChecks.unit(unit);
      return this;
    }

    /** {@code qu} as a registered unit. */
    public Builder unit(QuotaUnit unit) {
      this.unit = unit.token();
      return this;
    }

    /** {@code w}: a whole number of seconds, at least 1. */
    public Builder window(Duration window) {
      this.windowSeconds = ItemChecks.window(window);
      return this;
    }

    /** {@code pk}: at most {@value #MAX_PK_BYTES} bytes (copied). */
    public Builder partitionKey(byte[] pk) {
      this.pk = ItemChecks.pk(pk);
      return this;
    }

    /** The dialect; {@link HeaderDialect#IETF} by default. */
    public Builder dialect(HeaderDialect dialect) {
      this.dialect = Objects.requireNonNull(dialect, "dialect");
      return this;
    }

    /**
     * @throws IllegalArgumentException when {@code q} was not set
     */
    public QuotaPolicyItem build() {
      if (quota < 0) {
        throw new IllegalArgumentException("q: expected a quota from 0 to " + MAX_INTEGER + ", got nothing (q is required)");
      }
      return new QuotaPolicyItem(this);
    }
  }
}
