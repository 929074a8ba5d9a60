package dev.headroom;

import java.nio.charset.StandardCharsets;

/**
 * The partition a request is counted in, such as one client address or one API key: quotas are
 * allocated per partition key (draft-ietf-httpapi-ratelimit-headers-09 section 3.1.4).
 *
 * <p>A key is a bounded string: at most {@link #MAX_LENGTH} UTF-16 characters, so that a flood of
 * oversized keys cannot exhaust a store. Keys derived from credentials should be hashed before
 * they get here; the HTTP layer does that. Immutable; equal keys have equal values.
 */
public final class PartitionKey implements Comparable<PartitionKey> {

  /** Longest accepted key, in characters. */
  public static final int MAX_LENGTH = 512;

  /** The one partition of a policy that applies to every request alike. */
  public static final PartitionKey GLOBAL = new PartitionKey("global");

  private final String value;
  private int hash;

  private PartitionKey(String value) {
    this.value = value;
  }

  /**
   * A key with the given value.
   *
   * @throws IllegalArgumentException if the value is null, empty or longer than {@link #MAX_LENGTH}
   */
  public static PartitionKey of(String value) {
    if (value == null || value.isEmpty() || value.length() > MAX_LENGTH) {
      throw new IllegalArgumentException("partition key: expected 1 to " + MAX_LENGTH
          + " characters, got " + (value == null ? "null" : value.length() + " characters"));
    }
    return new PartitionKey(value);
  }

  /** The key's value. */
  public String value() {
    return value;
  }

  /** The key's value as UTF-8 bytes. */
  public byte[] utf8() {
    return value.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public boolean equals(Object o) {
    return this == o || (o instanceof PartitionKey && ((PartitionKey) o).value.equals(value));
  }

  /** Equal to {@code value().hashCode()}, and cached: the in-memory store relies on both. */
  @Override
  public int hashCode() {
    int h = hash;
    if (h == 0) {
      h = value.hashCode();
      hash = h;
    }
    return h;
  }

  @Override
  public int compareTo(PartitionKey o) {
    return value.compareTo(o.value);
  }

  @Override
  public String toString() {
    return value.length() <= 64 ? value : value.substring(0, 64) + "...";
  }
}
