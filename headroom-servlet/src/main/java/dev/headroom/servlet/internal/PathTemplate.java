package dev.headroom.servlet.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * A compiled path template (see {@code Route}): literal segments, one-segment variables
 * ({@code {id}}, {@code {id:regex}}, {@code *}) and a final {@code **}. Matching splits nothing and
 * allocates nothing: it walks the path once. Immutable and thread-safe.
 */
public final class PathTemplate {

  /** Longest template accepted. */
  public static final int MAX_LENGTH = 512;

  private static final String ANY_ONE = "\u0000one";

  private final String template;
  /** Literal segments, or {@link #ANY_ONE} for a variable. */
  private final String[] segments;
  private final boolean anyRest;

  private PathTemplate(String template, String[] segments, boolean anyRest) {
    this.template = template;
    this.segments = segments;
    this.anyRest = anyRest;
  }

  /**
   * Compiles a template.
   *
   * @throws IllegalArgumentException naming the template and what is expected
   */
  public static PathTemplate parse(String template) {
    if (template == null || !template.startsWith("/") || template.length() > MAX_LENGTH
        || !template.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
      throw new IllegalArgumentException("route path: expected a template starting with / of at most " + MAX_LENGTH
          + " printable characters, such as /api/items/{id}, got " + (template == null ? "null" : "'" + template + "'"));
    }
    String t = template.length() > 1 && template.endsWith("/") ? template.substring(0, template.length() - 1) : template;
    List<String> segs = new ArrayList<>();
    boolean rest = false;
    String[] parts = t.equals("/") ? new String[0] : t.substring(1).split("/", -1);
    for (int i = 0; i < parts.length; i++) {
      String p = parts[i];
      if (p.isEmpty()) {
        throw new IllegalArgumentException("route path '" + template + "': expected no empty segment (//)");
      }
      if (p.equals("**")) {
        if (i != parts.length - 1) {
          throw new IllegalArgumentException("route path '" + template + "': ** is only allowed as the last segment");
        }
        rest = true;
      } else if (p.equals("*") || (p.startsWith("{") && p.endsWith("}") && p.length() > 2)) {
        segs.add(ANY_ONE);
      } else if (p.contains("{") || p.contains("}") || p.contains("*")) {
        throw new IllegalArgumentException("route path '" + template + "': segment '" + p
            + "' mixes text and a variable; expected a whole-segment {name}, * or **");
      } else {
        segs.add(p);
      }
    }
    return new PathTemplate(template, segs.toArray(new String[0]), rest);
  }

  /** Whether a decoded path (starting with /) matches. */
  public boolean matches(String path) {
    if (path == null || path.isEmpty() || path.charAt(0) != '/') {
      return false;
    }
    int end = path.length();
    if (end > 1 && path.charAt(end - 1) == '/') {
      end--; // one trailing slash is ignored
    }
    int pos = 1;
    for (String seg : segments) {
      if (pos > end) {
        return false;
      }
      int next = path.indexOf('/', pos);
      if (next < 0 || next > end) {
        next = end;
      }
      if (next == pos) {
        return false; // empty segment
      }
      if (seg != ANY_ONE && (seg.length() != next - pos || !path.regionMatches(pos, seg, 0, seg.length()))) {
        return false;
      }
      pos = next + 1;
    }
    if (anyRest) {
      return true;
    }
    return pos >= end || (segments.length == 0 && end == 1);
  }

  @Override
  public String toString() {
    return template;
  }
}
