package dev.headroom.gateway.internal;

import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A route's path template: literal segments, {@code {name}} for exactly one non-empty segment, and
 * a final {@code **} for any rest (zero or more segments). Matching is on the raw (still
 * percent-encoded) path without its query. Immutable and thread-safe.
 */
final class PathTemplate {
  private static final Pattern LITERAL = Pattern.compile("[A-Za-z0-9._~!$&'()*+,;=:@%-]*");
  private static final Pattern VARIABLE = Pattern.compile("\\{[A-Za-z][A-Za-z0-9_]*}");

  private final String text;
  private final String[] segments;
  private final boolean rest;

  private PathTemplate(String text) {
    this.text = text;
    String[] parts = text.substring(1).split("/", -1);
    this.rest = parts.length > 0 && parts[parts.length - 1].equals("**");
    this.segments = rest ? java.util.Arrays.copyOf(parts, parts.length - 1) : parts;
  }

  /** Why the template is invalid, or empty when it is valid. */
  static Optional<String> check(String template) {
    if (!template.startsWith("/")) {
      return Optional.of("a path template starting with /, such as /items/{id}");
    }
    String[] parts = template.substring(1).split("/", -1);
    for (int i = 0; i < parts.length; i++) {
      String p = parts[i];
      if (p.equals("**")) {
        if (i != parts.length - 1) {
          return Optional.of("** only as the last segment");
        }
      } else if (!VARIABLE.matcher(p).matches() && !LITERAL.matcher(p).matches()) {
        return Optional.of("segments that are literal, {name} or a final **");
      }
    }
    return Optional.empty();
  }

  static PathTemplate parse(String template) {
    Optional<String> error = check(template);
    if (error.isPresent()) {
      throw new IllegalArgumentException("path template " + template + ": expected " + error.get());
    }
    return new PathTemplate(template);
  }

  /** Whether the raw path (no query) matches. */
  boolean matches(String path) {
    if (path.isEmpty() || path.charAt(0) != '/') {
      return false;
    }
    int pos = 1;
    for (String seg : segments) {
      if (pos > path.length()) {
        return false;
      }
      int end = path.indexOf('/', pos);
      if (end < 0) {
        end = path.length();
      }
      boolean variable = seg.startsWith("{");
      if (variable) {
        if (end == pos) {
          return false;
        }
      } else if (!path.regionMatches(pos, seg, 0, seg.length()) || end - pos != seg.length()) {
        return false;
      }
      pos = end + 1;
    }
    if (rest) {
      return true;
    }
    return pos == path.length() + 1;
  }

  List<String> segments() {
    return List.of(segments);
  }

  @Override
  public String toString() {
    return text;
  }
}
