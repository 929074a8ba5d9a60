package dev.headroom.redis.internal;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a policy's state for one partition lives in Redis.
 *
 * <pre>
 *   {prefix}{policy name}:{algorithm}:{{partition}}        the state (a string; a sorted set of
 *                                                          leases for concurrency)
 *   {prefix}{policy name}:{algorithm}:{{partition}}:h      concurrency only: held units, lease ids
 * </pre>
 *
 * The hash tag is the partition key alone, so in Redis Cluster every policy of one partition (a
 * client's per-second, per-day and concurrency policies) shares a slot and is decided by one
 * script, all or nothing. The partition value is escaped ({@code %} as {@code %25}, braces as
 * {@code %7B} and {@code %7D}) so that it can neither end the tag early nor collide with another
 * value. Keys carry the policy name and algorithm, as the in-memory store's tables do: a policy
 * changed under the same name keeps its counters.
 *
 * <p>Immutable and thread-safe.
 */
public final class KeyLayout {

  private final String prefix;
  /** Per policy: the key up to the partition, encoded. */
  private final ConcurrentHashMap<QuotaPolicy, byte[]> heads =
      new ConcurrentHashMap<>();

  /**
   * @throws IllegalArgumentException if the prefix holds a brace (it would change the hash tag)
   *     or is longer than 128 characters
   */
  public KeyLayout(String prefix) {
    if (prefix == null || prefix.length() > 128 || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
      throw new IllegalArgumentException("keyPrefix: expected up to 128 characters without '{' or '}' "
          + "(the hash tag is Headroom's), got " + (prefix == null ? "null" : "'" + prefix + "'"));
    }
    this.prefix = prefix;
  }

  public String prefix() {
    return prefix;
  }

  /** The main key of an acquisition's policy and partition. */
  public byte[] key(QuotaPolicy policy, PartitionKey key) {
    return (prefix + policy.name() + ':' + policy.algorithm().token() + ":{" + escape(key.value()) + '}')
        .getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Writes the key of a policy and partition (with {@code :h} when {@code leases}: a concurrency
   * policy's lease hash) as one RESP bulk string. The part before the partition is encoded once
   * per policy; a partition of plain ASCII is copied without an intermediate string.
   */
  void writeKey(Resp out, QuotaPolicy policy, PartitionKey key, boolean leases) {
    byte[] head = heads.get(policy);
    if (head == null) {
      head = (prefix + policy.name() + ':' + policy.algorithm().token() + ":{").getBytes(StandardCharsets.UTF_8);
      if (heads.size() > 10_000) {
        heads.clear(); // policies come from configuration; never let stale versions pile up
      }
      heads.put(policy, head);
    }
    String value = key.value();
    int tail = leases ? 3 : 1;
    if (plainAscii(value)) {
      out.header(head.length + value.length() + tail).raw(head).ascii(value);
    } else {
      byte[] escaped = escape(value).getBytes(StandardCharsets.UTF_8);
      out.header(head.length + escaped.length + tail).raw(head).raw(escaped);
    }
    out.raw((byte) '}');
    if (leases) {
      out.raw((byte) ':').raw((byte) 'h');
    }
    out.crlf();
  }

  /** Whether a partition value is written as it is: ASCII, and nothing to escape. */
  private static boolean plainAscii(String value) {
    for (int i = 0, n = value.length(); i < n; i++) {
      char c = value.charAt(i);
      if (c >= 0x80 || c == '%' || c == '{' || c == '}') {
        return false;
      }
    }
    return true;
  }

  /** The keys the script touches for one acquisition: one, or two for concurrency. */
  public byte[][] keys(Acquisition a) {
    byte[] main = key(a.policy(), a.key());
    if (a.policy().algorithm() != Algorithm.CONCURRENCY) {
      return new byte[][] {main};
    }
    byte[] h = new byte[main.length + 2];
    System.arraycopy(main, 0, h, 0, main.length);
    h[main.length] = ':';
    h[main.length + 1] = 'h';
    return new byte[][] {main, h};
  }

  static String escape(String value) {
    if (value.indexOf('%') < 0 && value.indexOf('{') < 0 && value.indexOf('}') < 0) {
      return value;
    }
    StringBuilder b = new StringBuilder(value.length() + 8);
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '%':
          b.append("%25");
          break;
        case '{':
          b.append("%7B");
          break;
        case '}':
          b.append("%7D");
          break;
        default:
          b.append(c);
      }
    }
    return b.toString();
  }
}
