package dev.headroom.http.body;

import java.util.Locale;

/**
 * The HTML form of a refusal, for callers that asked for HTML (Graceful Boundaries section 2,
 * "HTML 429 responses"): a small accessible page carrying the same information in prose, plus
 * {@code <meta name="retry-after" content="N">} and
 * {@code <link rel="alternate" type="application/json" href="...">} so that agents following HTML
 * find the structured refusal without parsing prose.
 *
 * <p>Every inserted value is escaped for its context (text or double-quoted attribute). A link is
 * made only of relative and http(s) URLs; anything else is shown as text. Stateless.
 */
final class RefusalHtml {

  private RefusalHtml() {}

  /**
   * The page.
   *
   * @param alternateJsonHref where the JSON form of this refusal can be fetched; null for none
   */
  public static String render(Refusal refusal, String alternateJsonHref) {
    String heading = refusal.title().orElse(ReasonPhrase.of(refusal.status()));
    StringBuilder h = new StringBuilder(2048);
    h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        .append("<meta name=\"robots\" content=\"noindex\">\n");
    refusal.retryAfterSeconds().ifPresent(s ->
        h.append("<meta name=\"retry-after\" content=\"").append(s).append("\">\n"));
    if (alternateJsonHref != null && linkable(alternateJsonHref)) {
      h.append("<link rel=\"alternate\" type=\"application/json\" href=\"").append(escape(alternateJsonHref))
          .append("\">\n");
    }
    h.append("<title>").append(refusal.status()).append(' ').append(escape(heading)).append("</title>\n")
        .append("<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;"
            + "line-height:1.5}dt{font-weight:bold}</style>\n")
        .append("</head>\n<body>\n<main>\n<h1>").append(escape(heading)).append("</h1>\n");
    refusal.detail().ifPresent(d -> h.append("<p>").append(escape(d)).append("</p>\n"));
    refusal.why().ifPresent(w -> h.append("<p>").append(escape(w)).append("</p>\n"));
    h.append("<dl>\n");
    h.append("<dt>Status</dt><dd>").append(refusal.status()).append("</dd>\n");
    refusal.error().ifPresent(e -> h.append("<dt>Error</dt><dd><code>").append(escape(e)).append("</code></dd>\n"));
    refusal.limit().ifPresent(l -> h.append("<dt>Limit</dt><dd>").append(escape(l)).append("</dd>\n"));
    refusal.retryAfterSeconds().ifPresent(s -> h.append("<dt>Retry after</dt><dd><time datetime=\"PT").append(s)
        .append("S\">").append(LimitRefusals.seconds(s)).append("</time></dd>\n"));
    refusal.windowResetAt().ifPresent(t -> h.append("<dt>Retry from</dt><dd><time datetime=\"")
        .append(escape(t.toString())).append("\">").append(escape(t.toString())).append("</time></dd>\n"));
    if (!refusal.violatedPolicies().isEmpty()) {
      h.append("<dt>Policies</dt><dd>").append(escape(String.join(", ", refusal.violatedPolicies()))).append("</dd>\n");
    }
    refusal.field().ifPresent(f -> h.append("<dt>Field</dt><dd><code>").append(escape(f)).append("</code></dd>\n"));
    refusal.expected().ifPresent(e -> h.append("<dt>Expected</dt><dd>").append(escape(e)).append("</dd>\n"));
    refusal.allowedMethods().ifPresent(m -> h.append("<dt>Allowed methods</dt><dd>")
        .append(escape(String.join(", ", m))).append("</dd>\n"));
    h.append("</dl>\n");
    StringBuilder links = new StringBuilder();
    link(links, "Get the cached result", refusal.cachedResultUrl().orElse(null));
    link(links, "Use another endpoint", refusal.alternativeEndpoint().orElse(null));
    link(links, "Get higher limits", refusal.upgradeUrl().orElse(null));
    link(links, "Get credentials", refusal.authUrl().orElse(null));
    link(links, "Create the resource", refusal.scanUrl().orElse(null));
    link(links, "Service status", refusal.statusUrl().orElse(null));
    link(links, "Contact a person", refusal.humanUrl().orElse(null));
    if (alternateJsonHref != null) {
      link(links, "This refusal as JSON", alternateJsonHref);
    }
    if (links.length() > 0) {
      h.append("<nav aria-label=\"What you can do\">\n<ul>\n").append(links).append("</ul>\n</nav>\n");
    }
    h.append("</main>\n</body>\n</html>\n");
    return h.toString();
  }

  private static void link(StringBuilder out, String label, String url) {
    if (url == null) {
      return;
    }
    out.append("<li>").append(label).append(": ");
    if (linkable(url)) {
      out.append("<a href=\"").append(escape(url)).append("\">").append(escape(url)).append("</a>");
    } else {
      out.append(escape(url));
    }
    out.append("</li>\n");
  }

  /** Relative references (not scheme-relative) and http(s) URLs only. */
  static boolean linkable(String url) {
    if (url.isEmpty() || url.length() > OperatorTextChecks.MAX_URL || url.startsWith("//")) {
      return false;
    }
    for (int i = 0; i < url.length(); i++) {
      char c = url.charAt(i);
      if (c <= 0x20 || c >= 0x7f || c == '\\') {
        return false;
      }
    }
    int colon = url.indexOf(':');
    int firstDelimiter = firstOf(url, "/?#");
    if (colon < 0 || (firstDelimiter >= 0 && firstDelimiter < colon)) {
      return true; // no scheme
    }
    String scheme = url.substring(0, colon).toLowerCase(Locale.ROOT);
    return scheme.equals("http") || scheme.equals("https");
  }

  private static int firstOf(String s, String chars) {
    for (int i = 0; i < s.length(); i++) {
      if (chars.indexOf(s.charAt(i)) >= 0) {
        return i;
      }
    }
    return -1;
  }

  /** Escapes for HTML text and double- or single-quoted attribute values. */
  static String escape(String s) {
    StringBuilder out = new StringBuilder(s.length() + 16);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&':
          out.append("&amp;");
          break;
        case '<':
          out.append("&lt;");
          break;
        case '>':
          out.append("&gt;");
          break;
        case '"':
          out.append("&quot;");
          break;
        case '\'':
          out.append("&#39;");
          break;
        default:
          if (c < 0x20 && c != '\n' && c != '\t') {
            out.append("&#xFFFD;");
          } else {
            out.append(c);
          }
      }
    }
    return out.toString();
  }
}
