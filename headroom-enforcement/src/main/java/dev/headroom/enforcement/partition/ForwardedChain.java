package dev.headroom.enforcement.partition;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads the hops of a {@code Forwarded} (RFC 7239 section 4) or {@code X-Forwarded-For} header
 * from right to left, the order in which a trust walk needs them.
 *
 * <p>Why right to left, and why backwards: each proxy appends the address it received the request
 * from, so the rightmost hops are written by our own proxies and the leftmost by whoever sent the
 * request, an attacker included. Scanning from the end means a malformed prefix written by a
 * client (an unterminated quoted string, say) is never read before the hops our proxies wrote,
 * so it can neither hide them nor make every client behind a proxy share the proxy's partition.
 * Field lines are list members in their own right (RFC 9110 section 5.3), so they are read last
 * line first.
 *
 * <p>Bounded: at most {@code maxHops} hops are returned and at most {@code maxChars} characters
 * are scanned; a hop that cannot be read within those bounds, or at all, ends the list as an empty
 * entry. Stateless and thread-safe.
 */
final class ForwardedChain {

  private ForwardedChain() {}

  /**
   * The hop addresses, rightmost first. An empty entry is a hop that is not an IP address
   * (malformed, {@code unknown}, obfuscated or beyond the bounds); it is always the last entry.
   */
  static List<Optional<byte[]>> hops(ForwardedHeader header, List<String> fieldLines, int maxHops, int maxChars) {
    List<Optional<byte[]>> out = new ArrayList<>();
    int budget = maxChars;
    for (int line = fieldLines.size() - 1; line >= 0 && out.size() < maxHops; line--) {
      String s = fieldLines.get(line);
      if (s == null) {
        continue;
      }
      int end = s.length();
      while (end > 0 && out.size() < maxHops) {
        int start = header == ForwardedHeader.FORWARDED ? elementStart(s, end) : s.lastIndexOf(',', end - 1) + 1;
        // start is the index after the separating comma (or 0), or -1 for an unterminated quote.
        int scanned = start < 0 ? end : end - start + 1;
        if (start < 0 || scanned > budget) {
          out.add(Optional.empty());
          return out;
        }
        budget -= scanned;
        String element = trimOws(s.substring(start, end));
        end = Math.max(0, start - 1);
        if (element.isEmpty()) {
          continue; // an empty list member (RFC 9110 section 5.6.1) is no hop
        }
        Optional<byte[]> address = header == ForwardedHeader.FORWARDED ? forElement(element) : node(element);
        out.add(address);
        if (address.isEmpty()) {
          return out;
        }
      }
    }
    return out;
  }

  /** Scans back from {@code end} to the comma that starts the element, outside quoted strings. */
  private static int elementStart(String s, int end) {
    boolean quoted = false;
    for (int i = end - 1; i >= 0; i--) {
      char c = s.charAt(i);
      if (c == '"' && !escaped(s, i)) {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        return i + 1;
      }
    }
    return quoted ? -1 : 0;
  }

  private static boolean escaped(String s, int i) {
    int backslashes = 0;
    for (int j = i - 1; j >= 0 && s.charAt(j) == '\\'; j--) {
      backslashes++;
    }
    return (backslashes & 1) == 1;
  }

  /**
   * The {@code for} node of one forwarded-element: {@code pair *( ";" pair )}, where a pair is
   * {@code token "=" ( token / quoted-string )}. An element with no {@code for}, two of them, or
   * any syntax error has no address.
   */
  static Optional<byte[]> forElement(String element) {
    String node = null;
    int i = 0;
    int n = element.length();
    while (i <= n) {
      int pairEnd = i;
      boolean quoted = false;
      while (pairEnd < n) {
        char c = element.charAt(pairEnd);
        if (quoted && c == '\\') {
          pairEnd += 2;
          continue;
        }
        if (c == '"') {
          quoted = !quoted;
        } else if (c == ';' && !quoted) {
          break;
        }
        pairEnd++;
      }
      if (quoted || pairEnd > n) {
        return Optional.empty();
      }
      String pair = trimOws(element.substring(i, pairEnd));
      if (!pair.isEmpty()) {
        int eq = pair.indexOf('=');
        if (eq <= 0 || !isToken(pair, 0, eq)) {
          return Optional.empty();
        }
        String value = value(pair.substring(eq + 1));
        if (value == null) {
          return Optional.empty();
        }
        if (pair.substring(0, eq).equalsIgnoreCase("for")) {
          if (node != null) {
            return Optional.empty();
          }
          node = value;
        }
      }
      i = pairEnd + 1;
    }
    return node == null ? Optional.empty() : node(node);
  }

  /** A token, or the content of a quoted-string; null when it is neither. */
  private static String value(String v) {
    if (v.isEmpty()) {
      return null;
    }
    if (v.charAt(0) != '"') {
      return isToken(v, 0, v.length()) ? v : null;
    }
    StringBuilder out = new StringBuilder(v.length());
    for (int i = 1; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c == '\\') {
        if (++i >= v.length()) {
          return null;
        }
        c = v.charAt(i);
        if (c != '\t' && (c < 0x20 || c == 0x7f || c > 0xff)) {
          return null;
        }
        out.append(c);
      } else if (c == '"') {
        return i == v.length() - 1 ? out.toString() : null;
      } else if (c != '\t' && (c < 0x20 || c == 0x7f || c > 0xff)) {
        return null;
      } else {
        out.append(c);
      }
    }
    return null;
  }

  private static boolean isToken(String s, int from, int to) {
    if (from >= to) {
      return false;
    }
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  /**
   * A node (RFC 7239 section 6): an IPv4 address or a bracketed IPv6 address, each with an
   * optional port; a bare IPv6 address is accepted too, as {@code X-Forwarded-For} writes it.
   * {@code unknown} and obfuscated identifiers ({@code _hidden}) are no address.
   */
  static Optional<byte[]> node(String node) {
    String n = node;
    if (n.length() > 64) {
      return Optional.empty();
    }
    if (n.startsWith("[")) {
      int close = n.indexOf(']');
      if (close < 0 || !(close == n.length() - 1 || (n.charAt(close + 1) == ':' && port(n.substring(close + 2))))) {
        return Optional.empty();
      }
      String inner = n.substring(1, close);
      return inner.indexOf(':') < 0 ? Optional.empty() : IpLiteral.parse(inner);
    }
    int colon = n.indexOf(':');
    if (colon >= 0 && colon == n.lastIndexOf(':')) {
      if (!port(n.substring(colon + 1))) {
        return Optional.empty();
      }
      n = n.substring(0, colon);
      if (n.indexOf('.') < 0) {
        return Optional.empty();
      }
    }
    return IpLiteral.parse(n);
  }

  private static boolean port(String p) {
    if (p.isEmpty() || p.length() > 16) {
      return false;
    }
    if (p.charAt(0) == '_') {
      return p.length() > 1 && p.chars().skip(1).allMatch(c -> (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-');
    }
    if (p.length() > 5 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return false;
    }
    return Integer.parseInt(p) <= 65535;
  }

  private static String trimOws(String s) {
    int a = 0;
    int b = s.length();
    while (a < b && (s.charAt(a) == ' ' || s.charAt(a) == '\t')) {
      a++;
    }
    while (b > a && (s.charAt(b - 1) == ' ' || s.charAt(b - 1) == '\t')) {
      b--;
    }
    return s.substring(a, b);
  }
}
