package dev.headroom.enforcement.partition;

import java.util.Optional;

/**
 * Parses and formats IP address literals without ever touching DNS ({@code InetAddress.getByName}
 * resolves names, which an attacker-supplied header must never trigger).
 *
 * <p>Accepted: IPv4 dotted quads (RFC 3986 {@code IPv4address}: four decimal octets, no leading
 * zeros, so that {@code 010.0.0.1} cannot be read as octal by one component and decimal by
 * another) and IPv6 text forms (RFC 4291 section 2.2, with {@code ::} and an embedded IPv4 tail).
 * An IPv4-mapped IPv6 address ({@code ::ffff:192.0.2.1}) is the IPv4 address: a dual-stack server
 * reports IPv4 peers that way, and one client must not get two partitions.
 *
 * <p>Bytes are 4 long for IPv4 and 16 for IPv6. Stateless and thread-safe.
 */
final class IpLiteral {

  /** Longest IPv6 text form (with an IPv4 tail) is 45 characters; anything longer is refused. */
  static final int MAX_LENGTH = 45;

  private IpLiteral() {}

  /** The address bytes of an IPv4 or IPv6 literal; empty when the text is not exactly one. */
  static Optional<byte[]> parse(String text) {
    if (text == null || text.isEmpty() || text.length() > MAX_LENGTH) {
      return Optional.empty();
    }
    byte[] bytes = text.indexOf(':') >= 0 ? parseV6(text) : parseV4(text, 0, text.length());
    if (bytes == null) {
      return Optional.empty();
    }
    return Optional.of(unmap(bytes));
  }

  /** RFC 5952 text: dotted quad for IPv4, lowercase compressed hexadecimal for IPv6. */
  static String format(byte[] address) {
    if (address.length == 4) {
      return (address[0] & 0xff) + "." + (address[1] & 0xff) + "." + (address[2] & 0xff) + "."
          + (address[3] & 0xff);
    }
    int[] groups = new int[8];
    for (int i = 0; i < 8; i++) {
      groups[i] = ((address[2 * i] & 0xff) << 8) | (address[2 * i + 1] & 0xff);
    }
    // RFC 5952 section 4.2: compress the longest run of two or more zero groups, the first on a tie.
    int bestStart = -1;
    int bestLength = 1;
    for (int i = 0; i < 8; ) {
      if (groups[i] != 0) {
        i++;
        continue;
      }
      int j = i;
      while (j < 8 && groups[j] == 0) {
        j++;
      }
      if (j - i > bestLength) {
        bestStart = i;
        bestLength = j - i;
      }
      i = j;
    }
    StringBuilder out = new StringBuilder(39);
    for (int i = 0; i < 8; i++) {
      if (i == bestStart) {
        out.append("::");
        i += bestLength - 1;
        continue;
      }
      if (out.length() > 0 && out.charAt(out.length() - 1) != ':') {
        out.append(':');
      }
      out.append(Integer.toHexString(groups[i]));
    }
    return out.toString();
  }

  /** Keeps the first {@code prefixLength} bits of the address and zeroes the rest. */
  static byte[] mask(byte[] address, int prefixLength) {
    byte[] out = address.clone();
    for (int bit = prefixLength; bit < out.length * 8; bit++) {
      out[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
    }
    return out;
  }

  private static byte[] unmap(byte[] bytes) {
    if (bytes.length == 16) {
      for (int i = 0; i < 10; i++) {
        if (bytes[i] != 0) {
          return bytes;
        }
      }
      if (bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff) {
        return new byte[] {bytes[12], bytes[13], bytes[14], bytes[15]};
      }
    }
    return bytes;
  }

  private static byte[] parseV4(String s, int from, int to) {
    byte[] out = new byte[4];
    int part = 0;
    int i = from;
    while (part < 4) {
      int start = i;
      int value = 0;
      while (i < to && i - start < 4) {
        char c = s.charAt(i);
        if (c < '0' || c > '9') {
          break;
        }
        value = value * 10 + (c - '0');
        i++;
      }
      int digits = i - start;
      if (digits == 0 || digits > 3 || value > 255 || (digits > 1 && s.charAt(start) == '0')) {
        return null;
      }
      out[part++] = (byte) value;
      if (part < 4) {
        if (i >= to || s.charAt(i) != '.') {
          return null;
        }
        i++;
      }
    }
    return i == to ? out : null;
  }

  private static byte[] parseV6(String s) {
    int n = s.length();
    int[] groups = new int[8];
    int count = 0;
    int gap = -1;
    int i = 0;
    if (s.startsWith("::")) {
      gap = 0;
      i = 2;
      if (i == n) {
        return new byte[16];
      }
    } else if (s.charAt(0) == ':') {
      return null;
    }
    byte[] v4 = null;
    while (i < n) {
      if (count == 8) {
        return null;
      }
      int start = i;
      int value = 0;
      while (i < n && i - start <= 4) {
        int d = Character.digit(s.charAt(i), 16);
        if (d < 0 || s.charAt(i) > 'f') {
          break;
        }
        value = (value << 4) | d;
        i++;
      }
      if (i < n && s.charAt(i) == '.') {
        // An IPv4 tail takes the last two groups.
        if (count > 6) {
          return null;
        }
        v4 = parseV4(s, start, n);
        if (v4 == null) {
          return null;
        }
        groups[count++] = ((v4[0] & 0xff) << 8) | (v4[1] & 0xff);
        groups[count++] = ((v4[2] & 0xff) << 8) | (v4[3] & 0xff);
        i = n;
        break;
      }
      int digits = i - start;
      if (digits == 0 || digits > 4) {
        return null;
      }
      groups[count++] = value;
      if (i == n) {
        break;
      }
      if (s.charAt(i) != ':') {
        return null;
      }
      i++;
      if (i < n && s.charAt(i) == ':') {
        if (gap >= 0) {
          return null;
        }
        gap = count;
        i++;
        if (i == n) {
          break;
        }
      } else if (i == n) {
        return null;
      }
    }
    if (gap < 0 && count != 8) {
      return null;
    }
    if (gap >= 0 && count > 7) {
      return null;
    }
    int[] full = new int[8];
    if (gap < 0) {
      full = groups;
    } else {
      int tail = count - gap;
      System.arraycopy(groups, 0, full, 0, gap);
      System.arraycopy(groups, gap, full, 8 - tail, tail);
    }
    byte[] out = new byte[16];
    for (int g = 0; g < 8; g++) {
      out[2 * g] = (byte) (full[g] >>> 8);
      out[2 * g + 1] = (byte) full[g];
    }
    return out;
  }
}
