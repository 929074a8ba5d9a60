package dev.headroom.enforcement.partition;

import java.util.Arrays;
import java.util.Optional;

/**
 * A block of IP addresses in CIDR notation (RFC 4632 section 3.1 for IPv4, RFC 4291 section 2.3
 * for IPv6), such as {@code 10.0.0.0/8} or {@code 2001:db8::/32}; a bare address is a block of one.
 * Used to say which direct peers are trusted proxies.
 *
 * <p>An IPv4-mapped IPv6 block ({@code ::ffff:10.0.0.0/104}) is read as the IPv4 block it maps,
 * since addresses are compared after the same mapping. Immutable and thread-safe.
 */
public final class CidrRange {

  private final byte[] network;
  private final int prefixLength;

  private CidrRange(byte[] network, int prefixLength) {
    this.network = network;
    this.prefixLength = prefixLength;
  }

  /**
   * Parses {@code address/prefix} or a bare address.
   *
   * @throws IllegalArgumentException naming the value and what is expected, also when the address
   *     has bits set beyond the prefix ({@code 10.0.0.1/8}), which usually hides a typing mistake
   */
  public static CidrRange parse(String cidr) {
    if (cidr == null) {
      throw new IllegalArgumentException("trusted proxy range: expected CIDR notation such as 10.0.0.0/8 or 2001:db8::/32, got null");
    }
    String text = cidr.trim();
    int slash = text.indexOf('/');
    String address = slash < 0 ? text : text.substring(0, slash);
    Optional<byte[]> parsed = IpLiteral.parse(address);
    if (parsed.isEmpty()) {
      throw new IllegalArgumentException("trusted proxy range: expected CIDR notation such as 10.0.0.0/8 or "
          + "2001:db8::/32, got '" + shorten(cidr) + "' (not an IPv4 or IPv6 address)");
    }
    byte[] bytes = parsed.get();
    boolean mapped = bytes.length == 4 && address.indexOf(':') >= 0;
    int bits = bytes.length * 8;
    int prefix = bits;
    if (slash >= 0) {
      String p = text.substring(slash + 1);
      if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
        throw new IllegalArgumentException("trusted proxy range: expected a prefix length after '/', got '" + shorten(cidr) + "'");
      }
      prefix = Integer.parseInt(p);
      if (mapped) {
        if (prefix < 96) {
          throw new IllegalArgumentException("trusted proxy range: an IPv4-mapped range needs a prefix of 96 to 128, got '"
              + shorten(cidr) + "'");
        }
        prefix -= 96;
      }
      if (prefix > bits) {
        throw new IllegalArgumentException("trusted proxy range: expected a prefix length from 0 to " + bits
            + ", got '" + shorten(cidr) + "'");
      }
    }
    if (!Arrays.equals(IpLiteral.mask(bytes, prefix), bytes)) {
      throw new IllegalArgumentException("trusted proxy range: '" + shorten(cidr) + "' has address bits set beyond the /"
          + prefix + " prefix; expected " + IpLiteral.format(IpLiteral.mask(bytes, prefix)) + "/" + prefix);
    }
    return new CidrRange(bytes, prefix);
  }

  /** Whether the literal is an address inside this block; false for anything not an IP literal. */
  public boolean contains(String ipLiteral) {
    return IpLiteral.parse(ipLiteral).map(this::contains).orElse(false);
  }

  boolean contains(byte[] address) {
    if (address.length != network.length) {
      return false;
    }
    return Arrays.equals(IpLiteral.mask(address, prefixLength), network);
  }

  /** The prefix length. */
  public int prefixLength() {
    return prefixLength;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CidrRange && ((CidrRange) o).prefixLength == prefixLength
        && Arrays.equals(((CidrRange) o).network, network);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(network) * 31 + prefixLength;
  }

  @Override
  public String toString() {
    return IpLiteral.format(network) + "/" + prefixLength;
  }

  static String shorten(String s) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < s.length() && out.length() < 64; i++) {
      char c = s.charAt(i);
      out.append(c < 0x20 || c > 0x7e ? String.format("\\u%04x", (int) c) : String.valueOf(c));
    }
    return s.length() > 64 ? out + "...(" + s.length() + " chars)" : out.toString();
  }
}
