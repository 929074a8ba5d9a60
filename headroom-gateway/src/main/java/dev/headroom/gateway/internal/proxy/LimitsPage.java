package dev.headroom.gateway.internal.proxy;

import dev.headroom.QuotaPolicy;
import dev.headroom.QuotaUnit;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Route;
import dev.headroom.http.body.PolicyTexts;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The human-readable limits page the gateway serves at {@code service.humanUrl}: the page a
 * refusal's {@code humanUrl} points people at (Graceful Boundaries section 3, "humanUrl: a page a
 * person can read"), generated from the same configuration the gateway enforces, so it cannot drift
 * from the limits: for each route its methods, path and policies; for each policy its limit, window,
 * unit, who it counts separately, why it exists (section 2's {@code why}) and the guidance a refusal
 * under it offers. The configuration has no plans, so the page lists none; the live quotas (after a
 * runtime capacity reduction) are in the discovery document, which the page links to.
 *
 * <p>Every text from the configuration is HTML-escaped ({@link #escape}); links are only the
 * guidance URLs the configuration reader already accepted (a relative path or an http(s) URL) and
 * the discovery path. Rendered once per configuration; immutable.
 */
public final class LimitsPage {
  /** The page may be cached briefly: it changes only when the configuration does. */
  static final String CACHE_CONTROL = "public, max-age=300";

  private final String path;
  private final byte[] html;

  private LimitsPage(String path, byte[] html) {
    this.path = path;
    this.html = html;
  }

  /** The page of {@code config}, when {@code service.humanUrl} names where to serve it. */
  public static Optional<LimitsPage> of(GatewayConfig config) {
    return config.service().humanUrl().map(p -> new LimitsPage(p, render(config).getBytes(StandardCharsets.UTF_8)));
  }

  /** The path it is served at. */
  String path() {
    return path;
  }

  /** The page for a GET or HEAD (the head is the same; the writer leaves out a HEAD's body). */
  LocalResponse response() {
    HttpHeaders h = LocalResponse.ownHeaders();
    h.set(HttpHeaderNames.CACHE_CONTROL, CACHE_CONTROL);
    return new LocalResponse(HttpResponseStatus.OK, "text/html; charset=utf-8", html, h);
  }

  static String render(GatewayConfig config) {
    String service = escape(config.service().name());
    StringBuilder sb = new StringBuilder(4096);
    sb.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<title>Limits of ").append(service).append("</title>\n</head>\n<body>\n")
        .append("<h1>Limits of ").append(service).append("</h1>\n");
    if (!config.service().description().isBlank()) {
      sb.append("<p>").append(escape(config.service().description())).append("</p>\n");
    }
    sb.append("<p>Programs read the same limits from <a href=\"").append(Triage.DISCOVERY_WELL_KNOWN)
        .append("\">").append(Triage.DISCOVERY_WELL_KNOWN).append("</a>, which also shows a temporary reduction.")
        .append(" Every limited response carries RateLimit header fields with what is left.</p>\n");
    Map<String, List<String>> usedBy = new LinkedHashMap<>();
    sb.append("<h2>Endpoints</h2>\n<table>\n<tr><th>Method</th><th>Path</th><th>Policies</th></tr>\n");
    for (Route r : config.routes()) {
      if (r.policies().isEmpty() || r.vend().isPresent()) {
        continue;
      }
      String methods = String.join(", ", new TreeSet<>(r.methods()));
      sb.append("<tr><td>").append(escape(methods)).append("</td><td><code>").append(escape(r.path()))
          .append("</code></td><td>");
      List<String> links = new ArrayList<>();
      for (String p : r.policies()) {
        links.add("<a href=\"#policy-" + anchor(p) + "\">" + escape(p) + "</a>");
        usedBy.computeIfAbsent(p, k -> new ArrayList<>()).add(methods + " " + r.path());
      }
      sb.append(String.join(", ", links)).append("</td></tr>\n");
    }
    sb.append("</table>\n<h2>Policies</h2>\n");
    for (Map.Entry<String, List<String>> e : usedBy.entrySet()) {
      policy(sb, config.policies().get(e.getKey()));
    }
    sb.append("</body>\n</html>\n");
    return sb.toString();
  }

  private static void policy(StringBuilder sb, Policy p) {
    QuotaPolicy q = p.quota();
    PolicyTexts t = p.texts();
    sb.append("<section id=\"policy-").append(anchor(p.name())).append("\">\n<h3>").append(escape(p.name()))
        .append("</h3>\n<dl>\n");
    item(sb, "Limit", escape(t.description(q)));
    if (q.unit() == QuotaUnit.CONCURRENT_REQUESTS) {
      item(sb, "Window", q.quota() + " at a time; a request counts until it is answered");
    } else {
      item(sb, "Window", q.quota() + " " + unit(q.unit()) + " per " + duration(q.window()));
    }
    item(sb, "Why", escape(t.why()));
    List<String> guidance = new ArrayList<>();
    t.alternativeEndpoint().ifPresent(u -> guidance.add("the alternative " + link(u)));
    t.cachedResultUrl().ifPresent(u -> guidance.add("the cached result at " + link(u)));
    t.upgradeUrl().ifPresent(u -> guidance.add("more capacity at " + link(u)));
    if (!guidance.isEmpty()) {
      item(sb, "When refused", "Try " + String.join("; or ", guidance) + ".");
    }
    sb.append("</dl>\n</section>\n");
  }

  private static void item(StringBuilder sb, String term, String html) {
    sb.append("<dt>").append(term).append("</dt><dd>").append(html).append("</dd>\n");
  }

  private static String link(String url) {
    String u = escape(url);
    return "<a href=\"" + u + "\">" + u + "</a>";
  }

  private static String unit(QuotaUnit u) {
    return switch (u) {
      case REQUESTS -> "requests";
      case CONTENT_BYTES -> "bytes of content";
      case CONCURRENT_REQUESTS -> "requests in flight";
    };
  }

  /** A window in the largest whole unit: 10 seconds, 5 minutes, 1 day. */
  static String duration(Duration d) {
    long s = d.getSeconds();
    long[] sizes = {86_400, 3_600, 60, 1};
    String[] names = {"day", "hour", "minute", "second"};
    for (int i = 0; i < sizes.length; i++) {
      if (s % sizes[i] == 0) {
        long n = s / sizes[i];
        return n + " " + names[i] + (n == 1 ? "" : "s");
      }
    }
    return s + " seconds";
  }

  /** An id attribute value: letters, digits, {@code -} and {@code _}; anything else becomes {@code -}. */
  private static String anchor(String name) {
    return name.replaceAll("[^A-Za-z0-9_-]", "-");
  }

  /** Escapes text for HTML content and double- or single-quoted attribute values. */
  static String escape(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 16);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&' -> sb.append("&amp;");
        case '<' -> sb.append("&lt;");
        case '>' -> sb.append("&gt;");
        case '"' -> sb.append("&quot;");
        case '\'' -> sb.append("&#39;");
        default -> sb.append(c);
      }
    }
    return sb.toString();
  }
}
