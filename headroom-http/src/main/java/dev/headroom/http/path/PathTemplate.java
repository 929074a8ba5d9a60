package dev.headroom.http.path;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A path template: the one grammar in which every Headroom front end (gateway routes, servlet
 * filter routes, Spring Boot route properties and {@code @RateLimited} mappings) states which
 * requests a route covers, in which the discovery document publishes it, and by which the client
 * and the checker read that document back.
 *
 * <h2>Why one grammar</h2>
 *
 * Graceful Boundaries section 1 gives each discovery entry an {@code "endpoint": "string — path
 * pattern"}, and its JSON schema ({@code limits.schema.json}, {@code endpointEntry.endpoint}) says
 * only "Path pattern, e.g. /api/scan." with {@code minLength: 1}: neither defines what a pattern
 * means. So the writer and the reader must agree by themselves. With one grammar, a template a front
 * end enforces is the template it publishes ({@link #toString()}, the canonical form) and the
 * client reads it to cover exactly the same paths.
 *
 * <h2>The grammar</h2>
 *
 * A template is {@code /} followed by segments separated by {@code /}, at most {@link #MAX_LENGTH}
 * printable ASCII characters. Each segment is one of:
 *
 * <ul>
 *   <li>a <b>literal</b>: RFC 3986 {@code pchar}s (unreserved, sub-delims except {@code *},
 *       {@code :}, {@code @}, {@code %XX}); it matches one path segment equal to it after both are
 *       percent-decoded (UTF-8), case-sensitively. A literal may not decode to {@code .} or
 *       {@code ..} (dot segments are removed from request paths, RFC 3986 section 5.2.4, so they
 *       could never match), may not contain {@code %2F} (servlet containers refuse an encoded
 *       {@code /}, Servlet 6.0 section 3.5.2, so front ends would disagree) and may not start with
 *       {@code :} (others publish {@code :name} for a variable; write {@code %3A});
 *   <li>{@code {name}}: a variable, exactly one non-empty segment. A name is a letter or {@code _}
 *       then letters, digits, {@code _}, {@code .} or {@code -}, at most 64 characters;
 *   <li>{@code {name:regex}}: one non-empty segment whose decoded text the regex matches entirely
 *       (anchored: {@link Matcher#matches()}). The regex is at most {@link #MAX_REGEX_LENGTH}
 *       characters and cannot contain {@code /}: a segment never does. Matching reads at most
 *       {@link #REGEX_STEPS} characters per segment; a regex that needs more does not match, so a
 *       pathological regex costs bounded time and answers the same everywhere;
 *   <li>{@code *}: exactly one non-empty segment, anonymous;
 *   <li>{@code **}: zero or more segments, only as the last segment.
 * </ul>
 *
 * A segment that mixes text with a variable or a wildcard ({@code *.json}, {@code x{id}}) and an
 * empty segment ({@code //}) are refused. A template's trailing {@code /} is dropped ({@code /a/}
 * is {@code /a}), as it is from paths.
 *
 * <h2>Matching a path</h2>
 *
 * The path is the request's path without query. It is split on {@code /} into segments and its
 * empty segments are ignored: {@code /a/} and {@code /a//} are {@code /a}, {@code /a//b} is
 * {@code /a/b}. Tomcat and nginx merge slashes by default and Jetty refuses them, so an
 * application or upstream serves {@code /a//b} as {@code /a/b}; a limiter that did not merge them
 * would let {@code /a//b} escape the limits of {@code /a/b}. Each segment is percent-decoded as
 * UTF-8 (a malformed escape stays as it is written; malformed UTF-8 decodes to U+FFFD). Splitting comes before decoding, so {@code %2F} never separates
 * segments: {@code /a%2Fb} is one segment {@code a/b}, which only {@code {name}}, {@code *} or
 * {@code **} can match. Dot segments are not resolved here: front ends give normalised paths.
 *
 * <p>{@link #matches(String)} takes the raw (still percent-encoded) path, as the gateway reads it
 * from the request line and the client and checker from {@link java.net.URI#getRawPath()}.
 * {@link #matchesDecoded(String)} takes a path whose segments the servlet container has already
 * decoded and normalised ({@code getServletPath() + getPathInfo()}); the two agree for every path a
 * container accepts, since containers refuse an encoded {@code /} by default.
 *
 * <h2>Reading other services' documents</h2>
 *
 * {@link #parsePublished(String)} reads the {@code endpoint} of a discovery document someone else
 * wrote: a query or fragment is ignored, non-ASCII literal characters are accepted, and the
 * {@code :name} form other frameworks publish is read as {@code {name}}: one segment. A trailing
 * {@code *} (as in {@code /a/*}) is, as everywhere in this grammar, one segment, not the rest of the
 * path; a publisher meaning the rest writes {@code /a/**}.
 *
 * <p>Immutable and thread-safe; equal when the canonical forms are equal. Matching allocates
 * nothing unless a segment holds a percent escape or a regex must see it.
 */
public final class PathTemplate {

  /** Longest template accepted, in characters. */
  public static final int MAX_LENGTH = 512;

  /** Longest regex of a {@code {name:regex}} segment, in characters. */
  public static final int MAX_REGEX_LENGTH = 128;

  /** Most characters a regex may read while matching one segment before the segment counts as not matching. */
  public static final int REGEX_STEPS = 100_000;

  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]{0,63}");
  private static final String HEX = "0123456789ABCDEF";
  /** RFC 3986 pchar without pct-encoded and without {@code *}: written as they are in the canonical form. */
  private static final String PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()+,;=:@";

  private enum Kind { LITERAL, VARIABLE, ANY }

  /** One segment: a decoded literal, or a variable (name, optional regex), or {@code *}. */
  private record Segment(Kind kind, String text, Pattern regex) {}

  private final String canonical;
  private final Segment[] segments;
  private final boolean rest;

  private PathTemplate(Segment[] segments, boolean rest) {
    this.segments = segments;
    this.rest = rest;
    StringBuilder b = new StringBuilder();
    for (Segment s : segments) {
      b.append('/');
      switch (s.kind) {
        case LITERAL -> encode(s.text, b);
        case ANY -> b.append('*');
        case VARIABLE -> b.append('{').append(s.text).append(s.regex == null ? "" : ":" + s.regex.pattern()).append('}');
        default -> throw new AssertionError(s.kind);
      }
    }
    if (rest) {
      b.append("/**");
    }
    this.canonical = b.length() == 0 ? "/" : b.toString();
  }

  /**
   * Parses a template written for a Headroom front end.
   *
   * @throws IllegalArgumentException naming the template, the position (0-based character offset)
   *     and what was expected there
   */
  public static PathTemplate parse(String template) {
    return parse(template, false);
  }

  /**
   * Reads the {@code endpoint} path pattern of a discovery document another service published
   * (see the class comment: also {@code :name}, a query or fragment, non-ASCII literals).
   *
   * @throws IllegalArgumentException naming the pattern, the position and what was expected
   */
  public static PathTemplate parsePublished(String pattern) {
    return parse(pattern, true);
  }

  private static PathTemplate parse(String template, boolean published) {
    if (template == null) {
      throw new IllegalArgumentException("path template: expected a template starting with /, such as /items/{id}, got null");
    }
    String t = template;
    if (published) {
      int cut = firstOf(t, '?', '#');
      if (cut >= 0) {
        t = t.substring(0, cut);
      }
    }
    if (t.length() > MAX_LENGTH) {
      throw error(template, MAX_LENGTH, "at most " + MAX_LENGTH + " characters, got " + t.length());
    }
    for (int i = 0; i < t.length(); i++) {
      char c = t.charAt(i);
      if (c <= 0x20 || c == 0x7f || (c > 0x7f && (!published || Character.isISOControl(c) || Character.isWhitespace(c)))) {
        throw error(template, i, "a printable " + (published ? "" : "ASCII ") + "character, got U+"
            + String.format("%04X", (int) c));
      }
    }
    if (t.isEmpty() || t.charAt(0) != '/') {
      throw error(template, 0, "a template starting with /, such as /items/{id}");
    }
    if (t.length() > 1 && t.endsWith("/")) {
      t = t.substring(0, t.length() - 1);
    }
    List<Segment> segs = new ArrayList<>();
    boolean rest = false;
    int restAt = -1;
    int start = 1;
    while (t.length() > 1 && start <= t.length()) {
      int end = t.indexOf('/', start);
      if (end < 0) {
        end = t.length();
      }
      String p = t.substring(start, end);
      if (rest) {
        throw error(template, restAt, "** only as the last segment (it matches the rest of the path)");
      }
      if (p.isEmpty()) {
        throw error(template, start, "a segment, not an empty one (//)");
      } else if (p.equals("**")) {
        rest = true;
        restAt = start;
      } else if (p.equals("*")) {
        segs.add(new Segment(Kind.ANY, null, null));
      } else if (p.startsWith("{")) {
        segs.add(variable(template, start, p));
      } else if (published && p.length() > 1 && p.charAt(0) == ':' && NAME.matcher(p.substring(1)).matches()) {
        segs.add(new Segment(Kind.VARIABLE, p.substring(1), null));
      } else {
        segs.add(literal(template, start, p, published));
      }
      start = end + 1;
    }
    return new PathTemplate(segs.toArray(new Segment[0]), rest);
  }

  private static Segment variable(String template, int at, String p) {
    if (!p.endsWith("}") || p.length() < 3) {
      throw error(template, at, "a whole-segment variable {name} or {name:regex} (a regex cannot contain /), got '"
          + p + "'");
    }
    String body = p.substring(1, p.length() - 1);
    int colon = body.indexOf(':');
    String name = colon < 0 ? body : body.substring(0, colon);
    if (!NAME.matcher(name).matches()) {
      throw error(template, at + 1, "a variable name (a letter or _, then letters, digits, _, . or -; at most 64), got '"
          + name + "'");
    }
    if (colon < 0) {
      return new Segment(Kind.VARIABLE, name, null);
    }
    String regex = body.substring(colon + 1);
    int regexAt = at + 2 + colon;
    if (regex.isEmpty() || regex.length() > MAX_REGEX_LENGTH) {
      throw error(template, regexAt, "a regex of 1 to " + MAX_REGEX_LENGTH + " characters after '" + name + ":'");
    }
    try {
      return new Segment(Kind.VARIABLE, name, Pattern.compile(regex));
    } catch (PatternSyntaxException e) {
      throw error(template, regexAt + Math.max(0, e.getIndex()), "a Java regex (" + e.getDescription() + ")");
    }
  }

  private static Segment literal(String template, int at, String p, boolean published) {
    for (int i = 0; i < p.length(); i++) {
      char c = p.charAt(i);
      if (c == '%') {
        if (i + 2 >= p.length() || hex(p.charAt(i + 1)) < 0 || hex(p.charAt(i + 2)) < 0) {
          throw error(template, at + i, "a percent escape %XX with two hex digits");
        }
      } else if (c == '*' || c == '{' || c == '}') {
        throw error(template, at + i, "a whole segment {name}, {name:regex}, * or **, or a literal without '" + c
            + "' (write %" + HEX.charAt(c >> 4) + HEX.charAt(c & 15) + " for the character), got '" + p + "'");
      } else if (PLAIN.indexOf(c) < 0 && !(published && c > 0x7f)) {
        throw error(template, at + i, "a path character (RFC 3986 pchar) or a percent escape, got '" + c + "'");
      }
    }
    if (!published && p.charAt(0) == ':') {
      throw error(template, at, "{name} for a variable; a literal segment starts with %3A, not ':' (others publish "
          + ":name for a variable), got '" + p + "'");
    }
    String decoded = decode(p, 0, p.length());
    if (decoded.indexOf('/') >= 0) {
      throw error(template, at, "no encoded / (%2F) in a literal: servlet containers refuse it, so front ends would "
          + "disagree, got '" + p + "'");
    }
    if (decoded.equals(".") || decoded.equals("..")) {
      throw error(template, at, "no dot segment (RFC 3986 section 5.2.4 removes them from paths), got '" + p + "'");
    }
    return new Segment(Kind.LITERAL, decoded, null);
  }

  private static IllegalArgumentException error(String template, int position, String expected) {
    return new IllegalArgumentException("path template '" + template + "': at position " + Math.max(0, position)
        + ": expected " + expected);
  }

  /** Whether a raw (percent-encoded) path without query, starting with {@code /}, is covered. */
  public boolean matches(String rawPath) {
    return match(rawPath, true);
  }

  /**
   * Whether a path whose segments are already percent-decoded and normalised (a servlet's
   * {@code getServletPath() + getPathInfo()}) is covered.
   */
  public boolean matchesDecoded(String decodedPath) {
    return match(decodedPath, false);
  }

  private boolean match(String path, boolean raw) {
    if (path == null || path.isEmpty() || path.charAt(0) != '/') {
      return false;
    }
    int length = path.length();
    int pos = 0;
    for (Segment s : segments) {
      pos = skipSlashes(path, pos); // empty segments are ignored
      if (pos == length) {
        return false; // the path has fewer segments
      }
      int next = path.indexOf('/', pos);
      if (next < 0) {
        next = length;
      }
      if (!segmentMatches(s, path, pos, next, raw)) {
        return false;
      }
      pos = next;
    }
    return rest || skipSlashes(path, pos) == length;
  }

  private static int skipSlashes(String path, int pos) {
    while (pos < path.length() && path.charAt(pos) == '/') {
      pos++;
    }
    return pos;
  }

  private static boolean segmentMatches(Segment s, String path, int from, int to, boolean raw) {
    if (s.kind == Kind.ANY || (s.kind == Kind.VARIABLE && s.regex == null)) {
      return to > from; // a percent escape never decodes to nothing, so raw emptiness is decoded emptiness
    }
    boolean encoded = raw && hasPercent(path, from, to);
    if (s.kind == Kind.LITERAL) {
      if (!encoded) {
        return to - from == s.text.length() && path.regionMatches(from, s.text, 0, s.text.length());
      }
      return decode(path, from, to).equals(s.text);
    }
    if (to == from) {
      return false;
    }
    String segment = encoded ? decode(path, from, to) : path.substring(from, to);
    try {
      return s.regex.matcher(new Budgeted(segment)).matches();
    } catch (Budgeted.Exhausted e) {
      return false;
    }
  }

  /**
   * The template text of one literal segment matching exactly the given decoded text, in canonical
   * form: for adapters that translate another framework's patterns (Spring MVC's literals are
   * decoded text). {@code literal("café")} is {@code caf%C3%A9}, {@code literal(":batch")} is
   * {@code %3Abatch}.
   *
   * @throws IllegalArgumentException when the text is empty, {@code .}, {@code ..} or contains {@code /}
   */
  public static String literal(String decodedSegment) {
    if (decodedSegment == null || decodedSegment.isEmpty() || decodedSegment.equals(".") || decodedSegment.equals("..")
        || decodedSegment.indexOf('/') >= 0) {
      throw new IllegalArgumentException("literal path segment: expected non-empty text without / that is not . or .., got "
          + (decodedSegment == null ? "null" : "'" + decodedSegment + "'"));
    }
    StringBuilder b = new StringBuilder();
    encode(decodedSegment, b);
    return b.toString();
  }

  /** Whether the template has no variable and no wildcard, so that it names exactly one path. */
  public boolean isLiteral() {
    return !rest && Arrays.stream(segments).allMatch(s -> s.kind == Kind.LITERAL);
  }

  /** The canonical form, written into discovery documents: what {@link #parse(String)} reads back as an equal template. */
  @Override
  public String toString() {
    return canonical;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PathTemplate t && t.canonical.equals(canonical);
  }

  @Override
  public int hashCode() {
    return canonical.hashCode();
  }

  // ---- percent-encoding

  /** Percent-decodes {@code s[from, to)} as UTF-8; a malformed escape stays as written. */
  static String decode(String s, int from, int to) {
    if (!hasPercent(s, from, to)) {
      return s.substring(from, to);
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(to - from);
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c == '%' && i + 2 < to && hex(s.charAt(i + 1)) >= 0 && hex(s.charAt(i + 2)) >= 0) {
        bytes.write(hex(s.charAt(i + 1)) << 4 | hex(s.charAt(i + 2)));
        i += 2;
      } else if (c < 0x80) {
        bytes.write(c);
      } else {
        int cp = s.codePointAt(i);
        byte[] b = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
        bytes.write(b, 0, b.length);
        i += Character.charCount(cp) - 1;
      }
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /** Writes a decoded literal in canonical form: pchars as they are, everything else (and a leading ':') as %XX. */
  private static void encode(String literal, StringBuilder out) {
    byte[] bytes = literal.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < bytes.length; i++) {
      int b = bytes[i] & 0xff;
      if (b < 0x80 && PLAIN.indexOf(b) >= 0 && !(i == 0 && b == ':')) {
        out.append((char) b);
      } else {
        out.append('%').append(HEX.charAt(b >> 4)).append(HEX.charAt(b & 15));
      }
    }
  }

  private static boolean hasPercent(String s, int from, int to) {
    for (int i = from; i < to; i++) {
      if (s.charAt(i) == '%') {
        return true;
      }
    }
    return false;
  }

  private static int hex(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  }

  private static int firstOf(String s, char a, char b) {
    int i = s.indexOf(a);
    int j = s.indexOf(b);
    return i < 0 ? j : j < 0 ? i : Math.min(i, j);
  }

  /**
   * A segment as the regex engine reads it, counting reads: past {@link #REGEX_STEPS} the match
   * stops, so that backtracking on a pathological regex costs bounded time.
   */
  private static final class Budgeted implements CharSequence {
    static final class Exhausted extends RuntimeException {
      Exhausted() {
        super(null, null, false, false);
      }
    }

    private final String text;
    private final int[] left;

    Budgeted(String text) {
      this(text, new int[] {REGEX_STEPS});
    }

    private Budgeted(String text, int[] left) {
      this.text = text;
      this.left = left;
    }

    @Override
    public char charAt(int index) {
      if (--left[0] < 0) {
        throw new Exhausted();
      }
      return text.charAt(index);
    }

    @Override
    public int length() {
      return text.length();
    }

    @Override
    public CharSequence subSequence(int start, int end) {
      return new Budgeted(text.substring(start, end), left);
    }

    @Override
    public String toString() {
      return text;
    }
  }
}
