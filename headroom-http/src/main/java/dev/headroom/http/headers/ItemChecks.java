package dev.headroom.http.headers;

import java.time.Duration;

/** Validation shared by the item builders; messages name the field, the value and the expectation. */
final class ItemChecks {
  private ItemChecks() {}

  static String name(String name) {
    if (name == null || name.isEmpty() || name.length() > QuotaPolicyItem.MAX_NAME_CHARS || !printable(name)) {
      throw new IllegalArgumentException("name: expected 1 to " + QuotaPolicyItem.MAX_NAME_CHARS
          + " printable ASCII characters, got " + quote(name));
    }
    return name;
  }

  static String unit(String unit) {
    if (unit == null || unit.isEmpty() || unit.length() > 64 || !printable(unit)) {
      throw new IllegalArgumentException("qu: expected 1 to 64 printable ASCII characters, got " + quote(unit));
    }
    return unit;
  }

  static long integer(String field, long value) {
    if (value < 0 || value > QuotaPolicyItem.MAX_INTEGER) {
      throw new IllegalArgumentException(field + ": expected an integer from 0 to " + QuotaPolicyItem.MAX_INTEGER + ", got " + value);
    }
    return value;
  }

  static long window(Duration window) {
    if (window == null || window.isNegative() || window.isZero() || window.getNano() != 0
        || window.getSeconds() > QuotaPolicyItem.MAX_INTEGER) {
      throw new IllegalArgumentException("w: expected a whole number of seconds, at least 1, got " + window);
    }
    return window.getSeconds();
  }

  static long reset(Duration reset) {
    if (reset == null || reset.isNegative() || reset.getNano() != 0 || reset.getSeconds() > QuotaPolicyItem.MAX_INTEGER) {
      throw new IllegalArgumentException("t: expected a whole number of seconds, zero or more, got " + reset);
    }
    return reset.getSeconds();
  }

  static byte[] pk(byte[] pk) {
    if (pk == null || pk.length > QuotaPolicyItem.MAX_PK_BYTES) {
      throw new IllegalArgumentException("pk: expected at most " + QuotaPolicyItem.MAX_PK_BYTES + " bytes, got "
          + (pk == null ? "null" : pk.length + " bytes"));
    }
    return pk.clone();
  }

  static boolean printable(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        return false;
      }
    }
    return true;
  }

  private static String quote(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder sb = new StringBuilder("'");
    for (int i = 0; i < Math.min(s.length(), 80); i++) {
      char c = s.charAt(i);
      sb.append(c >= 0x20 && c <= 0x7e ? String.valueOf(c) : String.format("\\u%04x", (int) c));
    }
    return sb.append(s.length() > 80 ? "...'" : "'").toString();
  }
}
