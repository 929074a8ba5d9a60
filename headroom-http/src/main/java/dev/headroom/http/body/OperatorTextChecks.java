package dev.headroom.http.body;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The checks every operator-supplied text and URL passes before it is sent to callers: the
 * Graceful Boundaries security considerations that a program can enforce.
 *
 * <ul>
 *   <li>SC-2, {@code why} describes the category of protection, not the mechanism: a {@code why}
 *       naming a rate-limiting algorithm, a store, a proxy or edge product, an address range or
 *       an RFC is refused (the spec's own bad examples are "We use Redis with a sliding window"
 *       and "Validates URLs against RFC 1918 ranges"). The list is in {@link #MECHANISMS}.
 *   <li>Section 2, {@code why} explains the purpose, it does not restate the error: "Rate limit
 *       exceeded" is refused, as is a {@code why} equal to the detail, limit or title.
 *   <li>SC-3, {@code expected} is positive: one that starts with a negation is refused.
 *   <li>SC-6, machine-actionable guidance URLs ({@code cachedResultUrl},
 *       {@code alternativeEndpoint}, {@code scanUrl}) are relative or same-origin; every URL is a
 *       relative reference or http(s), never {@code javascript:} or a scheme-relative
 *       {@code //host} reference.
 *   <li>SC-16, guidance stays declarative: texts carrying agent instructions ("ignore previous
 *       instructions", "override policy", "execute this") are refused.
 *   <li>No control characters and no bidirectional overrides (which make a text read differently
 *       from what it says); bounded lengths.
 * </ul>
 */
final class OperatorTextChecks {

  /** Longest accepted prose text (detail, why), in characters. */
  static final int MAX_TEXT = 1000;

  /** Longest accepted short text (limit, title, field, ids). */
  static final int MAX_SHORT = 200;

  /** Longest accepted URL. */
  static final int MAX_URL = 2048;

  /** Words and patterns that name a mechanism rather than a category of protection (SC-2). */
  static final List<Pattern> MECHANISMS = List.of(
      words("redis", "memcached?", "lua", "lettuce", "jedis", "gcra", "headroom", "bucket4j", "resilience4j",
          "token[ -]bucket", "leaky[ -]bucket", "sliding[ -](?:window|log)", "fixed[ -]window", "algorithm",
          "nginx", "envoy", "haproxy", "traefik", "kong", "cloudflare", "akamai", "fastly", "iptables",
          "fail2ban", "kubernetes", "k8s", "postgres(?:ql)?", "mysql", "mongodb", "cassandra", "dynamodb",
          "cidr", "regexp?", "regular expressions?", "x-forwarded-for", "user-agent sniffing"),
      Pattern.compile("\\brfc\\s*\\d+", Pattern.CASE_INSENSITIVE),
      Pattern.compile("\\b\\d{1,3}(?:\\.\\d{1,3}){3}(?:/\\d{1,2})?\\b"),
      Pattern.compile("(?:\\b[0-9a-f]{1,4})?::[0-9a-f]{1,4}\\b|\\b(?:[0-9a-f]{1,4}:){4,7}[0-9a-f]{1,4}\\b",
          Pattern.CASE_INSENSITIVE));

  /** Phrases that instruct an agent instead of informing it (SC-16). */
  private static final Pattern INSTRUCTIONS = Pattern.compile(
      "\\b(?:ignore|disregard|forget)\\s+(?:all\\s+|any\\s+|the\\s+|your\\s+)?(?:previous|prior|above|earlier)\\b"
          + "|\\boverride\\s+(?:the\\s+|your\\s+|local\\s+|any\\s+)?(?:policy|policies|instructions?|safety)\\b"
          + "|\\bexecute\\s+this\\b|\\bsystem\\s+prompt\\b|\\bbypass\\s+(?:the\\s+)?(?:approval|authori[sz]ation)\\b",
      Pattern.CASE_INSENSITIVE);

  /** Restatements of the error that are no reason (section 2). */
  private static final List<String> RESTATEMENTS = List.of("ratelimitexceeded", "ratelimited", "toomanyrequests",
      "quotaexceeded", "limitexceeded", "limitreached", "ratelimitreached", "requestrefused", "forbidden",
      "error", "notallowed", "accessdenied");

  private static final Pattern NEGATION = Pattern.compile(
      "^\\s*(?:not|no|never|nothing|none|anything\\s+(?:but|except)|except|excluding|without)\\b",
      Pattern.CASE_INSENSITIVE);

  private OperatorTextChecks() {}

  private static Pattern words(String... alternatives) {
    return Pattern.compile("\\b(?:" + String.join("|", alternatives) + ")\\b", Pattern.CASE_INSENSITIVE);
  }

  /** A required text: non-blank, bounded, no control characters, no instructions. */
  static String require(String field, String value, int max) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(field + ": expected a non-empty text, got "
          + (value == null ? "nothing (it is required)" : "'" + printable(value) + "'"));
    }
    return check(field, value, max);
  }

  /** An optional text, checked when present. */
  static String optional(String field, String value, int max) {
    return value == null ? null : require(field, value, max);
  }

  private static String check(String field, String value, int max) {
    if (value.length() > max) {
      throw new IllegalArgumentException(field + ": expected at most " + max + " characters, got " + value.length()
          + " ('" + printable(value) + "')");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || (c >= 0x202a && c <= 0x202e)
          || (c >= 0x2066 && c <= 0x2069) || c == 0x200e || c == 0x200f) {
        throw new IllegalArgumentException(field + ": expected printable text without control characters or "
            + "bidirectional overrides, got '" + printable(value) + "' (character U+"
            + String.format("%04X", (int) c) + " at " + i + ")");
      }
    }
    Matcher m = INSTRUCTIONS.matcher(value);
    if (m.find()) {
      throw new IllegalArgumentException(field + ": expected declarative text; '" + m.group()
          + "' instructs the caller instead of informing it (Graceful Boundaries SC-16), got '" + printable(value) + "'");
    }
    return value;
  }

  /**
   * The phrase of {@code value} that instructs an agent instead of informing it (SC-16), if any:
   * what {@link #require} refuses in texts being written, for reporting texts that were read.
   */
  static Optional<String> instruction(String value) {
    if (value == null) {
      return Optional.empty();
    }
    Matcher m = INSTRUCTIONS.matcher(value);
    return m.find() ? Optional.of(m.group()) : Optional.empty();
  }

  /** {@code why}: a reason that names no mechanism and restates nothing (section 2, SC-2). */
  static String why(String field, String value, String... restated) {
    require(field, value, MAX_TEXT);
    for (Pattern p : MECHANISMS) {
      Matcher m = p.matcher(value);
      if (m.find()) {
        throw new IllegalArgumentException(field + ": expected the category of protection, not the mechanism "
            + "(Graceful Boundaries SC-2): '" + m.group() + "' names how the limit is enforced, got '"
            + printable(value) + "'");
      }
    }
    String norm = normalise(value);
    boolean restates = RESTATEMENTS.contains(norm);
    for (String r : restated) {
      restates |= r != null && normalise(r).equals(norm);
    }
    if (restates) {
      throw new IllegalArgumentException(field + ": expected the purpose of the limit, not a restatement of "
          + "the refusal (Graceful Boundaries section 2), got '" + printable(value)
          + "'; for example 'Limits keep the service available for everyone.'");
    }
    return value;
  }

  /** {@code expected}: what valid input looks like, in positive terms (SC-3). */
  static String expected(String field, String value) {
    if (value != null && NEGATION.matcher(value).find()) {
      throw new IllegalArgumentException(field + ": expected a positive description of valid input "
          + "(Graceful Boundaries SC-3), not a list of what is rejected, got '" + printable(value) + "'");
    }
    return optional(field, value, MAX_TEXT);
  }

  /** The snake_case {@code error} token (section 2). */
  static String errorToken(String field, String value) {
    if (value == null || value.isEmpty() || value.length() > 64 || !value.matches("[a-z0-9_]+")) {
      throw new IllegalArgumentException(field + ": expected a snake_case token of lowercase letters, digits and "
          + "underscores (at most 64) such as rate_limit_exceeded, got "
          + (value == null ? "nothing (it is required)" : "'" + printable(value) + "'"));
    }
    return value;
  }

  /**
   * A URL. Machine-actionable ones (SC-6) must be relative or share {@code origin}; the others may
   * be any http(s) URL.
   */
  static String url(String field, String value, boolean machineActionable, URI origin) {
    if (value == null) {
      return null;
    }
    if (value.isEmpty() || value.length() > MAX_URL) {
      throw new IllegalArgumentException(field + ": expected a URL of 1 to " + MAX_URL + " characters, got "
          + value.length() + " characters");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c <= 0x20 || c >= 0x7f || c == '\\' || c == '"' || c == '<' || c == '>') {
        throw new IllegalArgumentException(field + ": expected a URL of printable ASCII without spaces, quotes, "
            + "angle brackets or backslashes (percent-encode them), got '" + printable(value) + "'");
      }
    }
    URI uri;
    try {
      uri = new URI(value);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(field + ": expected a URL (RFC 3986), got '" + printable(value) + "': "
          + e.getReason(), e);
    }
    if (uri.getScheme() == null) {
      if (value.startsWith("//")) {
        throw new IllegalArgumentException(field + ": expected a relative path or an absolute http(s) URL, got the "
            + "scheme-relative '" + printable(value) + "', which points at another host");
      }
      return value;
    }
    String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
    if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
      throw new IllegalArgumentException(field + ": expected a relative path or an absolute http(s) URL with a "
          + "host, got '" + printable(value) + "'");
    }
    if (machineActionable && (origin == null || !sameOrigin(uri, origin))) {
      throw new IllegalArgumentException(field + ": expected a relative path or a same-origin absolute URL "
          + "(Graceful Boundaries SC-6: machine-actionable guidance never points elsewhere), got '"
          + printable(value) + "'" + (origin == null ? " with no origin configured" : " for origin " + origin));
    }
    return value;
  }

  /**
   * A URI reference of printable ASCII (RFC 3986), absolute when asked; any scheme but
   * {@code javascript}, {@code data} and {@code vbscript}.
   */
  static String uriReference(String field, String value, boolean absolute) {
    if (value == null) {
      return null;
    }
    if (value.isEmpty() || value.length() > MAX_URL) {
      throw new IllegalArgumentException(field + ": expected a URI of 1 to " + MAX_URL + " characters, got "
          + value.length() + " characters");
    }
    URI uri;
    try {
      for (int i = 0; i < value.length(); i++) {
        char c = value.charAt(i);
        if (c <= 0x20 || c >= 0x7f || c == '\\' || c == '"' || c == '<' || c == '>') {
          throw new URISyntaxException(value, "character U+" + String.format("%04X", (int) c) + " is not allowed", i);
        }
      }
      uri = new URI(value);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(field + ": expected a URI (RFC 3986), got '" + printable(value) + "': "
          + e.getReason(), e);
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if ((absolute && scheme.isEmpty()) || scheme.equals("javascript") || scheme.equals("data")
        || scheme.equals("vbscript")) {
      throw new IllegalArgumentException(field + ": expected " + (absolute ? "an absolute URI such as "
          + "https://example.com/problems/x (RFC 9457 section 3.1.1)" : "a URI reference") + ", got '"
          + printable(value) + "'");
    }
    return value;
  }

  static boolean sameOrigin(URI a, URI b) {
    return a.getScheme() != null && b.getScheme() != null && a.getHost() != null && b.getHost() != null
        && a.getScheme().equalsIgnoreCase(b.getScheme()) && a.getHost().equalsIgnoreCase(b.getHost())
        && port(a) == port(b);
  }

  private static int port(URI u) {
    if (u.getPort() >= 0) {
      return u.getPort();
    }
    return u.getScheme().equalsIgnoreCase("https") ? 443 : 80;
  }

  /**
   * An origin ({@code https://api.example.com}, optionally with a port), against which same-origin
   * absolute URLs are accepted.
   */
  static URI origin(String field, URI origin) {
    if (origin == null) {
      return null;
    }
    String scheme = origin.getScheme();
    if (scheme == null || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
        || origin.getHost() == null || (origin.getRawPath() != null && !origin.getRawPath().isEmpty()
            && !origin.getRawPath().equals("/")) || origin.getRawQuery() != null || origin.getRawFragment() != null
        || origin.getRawUserInfo() != null) {
      throw new IllegalArgumentException(field + ": expected an origin such as https://api.example.com "
          + "(scheme, host and optional port only), got '" + printable(origin.toString()) + "'");
    }
    return origin;
  }

  private static String normalise(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = Character.toLowerCase(s.charAt(i));
      if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
        out.append(c);
      }
    }
    return out.toString();
  }

  /** Shortens and escapes a value so that it can be quoted in an error message. */
  static String printable(String s) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < s.length() && out.length() < 80; i++) {
      char c = s.charAt(i);
      out.append(c < 0x20 || c == 0x7f ? String.format("\\u%04x", (int) c) : String.valueOf(c));
    }
    return s.length() > 80 ? out + "...(" + s.length() + " chars)" : out.toString();
  }
}
