package dev.headroom.client;

import java.util.List;

/**
 * A discovery path pattern: literal segments, variables ({@code {id}} or {@code :id}) matching one
 * segment, and a trailing {@code *} matching the rest. Query strings are ignored. Immutable.
 */
final class PathTemplate {

  private final List<String> segments;
  private final boolean variables;

  private PathTemplate(List<String> segments, boolean variables) {
    this.segments = segments;
    this.variables = variables;
  }

  static PathTemplate of(String pattern) {
    String p = stripQuery(pattern);
    List<String> segs = split(p);
    boolean vars = false;
    for (String s : segs) {
      vars |= isVariable(s) || s.equals("*");
    }
    return new PathTemplate(segs, vars);
  }

  boolean hasVariables() {
    return variables;
  }

  boolean matches(String path) {
    List<String> in = split(stripQuery(path == null ? "/" : path));
    for (int i = 0; i < segments.size(); i++) {
      String s = segments.get(i);
      if (s.equals("*") && i == segments.size() - 1) {
        return true;
      }
      if (i >= in.size()) {
        return false;
      }
      if (!isVariable(s) && !s.equals("*") && !s.equals(in.get(i))) {
        return false;
      }
    }
    return in.size() == segments.size();
  }

  private static boolean isVariable(String s) {
    return (s.startsWith("{") && s.endsWith("}")) || (s.startsWith(":") && s.length() > 1);
  }

  private static String stripQuery(String p) {
    int q = p.indexOf('?');
    return q < 0 ? p : p.substring(0, q);
  }

  private static List<String> split(String p) {
    String t = p.startsWith("/") ? p.substring(1) : p;
    if (t.endsWith("/")) {
      t = t.substring(0, t.length() - 1);
    }
    return t.isEmpty() ? List.of() : List.of(t.split("/", -1));
  }
}
