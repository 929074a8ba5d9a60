package dev.headroom.gateway.internal.wire;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The one hop-by-hop filter (RFC 9110 section 7.6.1): the fields that concern one connection
 * only, and so are never forwarded, in either direction, along with every field a Connection
 * field names. Every path a message takes through the gateway asks this class: the upstream
 * request writer (by name, over the client's fields), the upstream response decoder (over a
 * response head's bytes, for the raw relay), and the relays that re-encode a response (over
 * Netty headers). Stateless; thread-safe.
 */
public final class HopByHop {
  /** The hop-by-hop field names, lower case. */
  public static final List<String> NAMES = List.of("connection", "proxy-connection",
      "keep-alive", "te", "transfer-encoding", "upgrade", "proxy-authorization", "proxy-authenticate");
  private static final byte[][] NAME_BYTES = new byte[NAMES.size()][];

  static {
    for (int i = 0; i < NAMES.size(); i++) {
      NAME_BYTES[i] = NAMES.get(i).getBytes(StandardCharsets.US_ASCII);
    }
  }

  private HopByHop() {}

  /** Whether {@code name} (any case) is a hop-by-hop field's name. */
  public static boolean isName(CharSequence name) {
    for (String hop : NAMES) {
      if (hop.length() == name.length() && AsciiString.contentEqualsIgnoreCase(name, hop)) {
        return true;
      }
    }
    return false;
  }

  /** Whether the bytes {@code raw[start, end)} (any case) are a hop-by-hop field's name. */
  public static boolean isName(byte[] raw, int start, int end) {
    for (byte[] h : NAME_BYTES) {
      if (ResponseHead.equalsLower(raw, start, end, h)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The field names a message's Connection fields list (lower case), other than the connection
   * options close and keep-alive; null when there are none (most messages: one lookup, no set).
   */
  public static Set<String> connectionListed(HttpHeaders h) {
    if (!h.contains(HttpHeaderNames.CONNECTION)) {
      return null;
    }
    Set<String> names = new HashSet<>();
    for (String v : h.getAll(HttpHeaderNames.CONNECTION)) {
      for (String token : v.split(",")) {
        String t = token.trim().toLowerCase(Locale.ROOT);
        if (!t.isEmpty() && !t.equals("close") && !t.equals("keep-alive")) {
          names.add(t);
        }
      }
    }
    return names.isEmpty() ? null : names;
  }

  /** Removes the hop-by-hop fields from {@code h}, and every field its Connection fields list. */
  public static void strip(HttpHeaders h) {
    Set<String> listed = connectionListed(h);
    if (listed != null) {
      for (String name : listed) {
        h.remove(name);
      }
    }
    for (String name : NAMES) {
      h.remove(name);
    }
  }
}
