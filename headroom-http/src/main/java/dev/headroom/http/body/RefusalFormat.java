package dev.headroom.http.body;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.function.BiConsumer;

/**
 * How a refusal is sent, chosen from the request's {@code Accept} header (RFC 9110 section
 * 12.5.1): JSON unless HTML is explicitly preferred.
 *
 * <p>HTML is chosen only when {@code text/html} (or {@code application/xhtml+xml}) is listed by
 * name with a quality strictly higher than any JSON type gets, directly or through a wildcard.
 * A browser's {@code text/html,...,*}{@code /*;q=0.8} gets HTML; {@code *}{@code /*}, no header,
 * a tie, or a malformed header gets JSON, since agents are the callers that act on a refusal.
 * JSON is sent as {@code application/problem+json} unless the caller accepts
 * {@code application/json} and not problem+json. A refusal is sent even when nothing listed is
 * acceptable (RFC 9110 section 15.5.7 allows disregarding Accept).
 */
public enum RefusalFormat {
  /** {@code application/problem+json} (RFC 9457 section 3). */
  PROBLEM_JSON("application/problem+json"),
  /** {@code application/json}, the Graceful Boundaries API content type. */
  JSON("application/json"),
  /** {@code text/html; charset=utf-8}, see {@link RefusalHtml}. */
  HTML("text/html; charset=utf-8");

  /** Longest Accept header read; longer ones are treated as absent. */
  public static final int MAX_ACCEPT_LENGTH = 2048;

  /** Most media ranges read. */
  public static final int MAX_RANGES = 32;

  /**
   * {@code Cache-Control} of every refusal: a refusal is about one caller at one moment, so no
   * cache may answer another request with it (Graceful Boundaries SC-7; RFC 9111 section 5.2.2.5).
   */
  public static final String CACHE_CONTROL = "no-store";

  /** {@code Vary} of every refusal: its format follows the request's {@code Accept} (RFC 9110 section 12.5.5). */
  public static final String VARY = "Accept";

  /**
   * Writes the fields every refusal carries whatever its format, {@code Cache-Control: no-store}
   * and {@code Vary: Accept}, through a sink that adds one header line; every front end calls it.
   */
  public static void refusalFields(BiConsumer<String, String> sink) {
    sink.accept("Cache-Control", CACHE_CONTROL);
    sink.accept("Vary", VARY);
  }

  private final String mediaType;

  RefusalFormat(String mediaType) {
    this.mediaType = mediaType;
  }

  /** The {@code Content-Type} to send. */
  public String mediaType() {
    return mediaType;
  }

  /** The format for a request's Accept header; null or blank means no preference. */
  public static RefusalFormat negotiate(String accept) {
    if (accept == null || accept.isBlank() || accept.length() > MAX_ACCEPT_LENGTH) {
      return PROBLEM_JSON;
    }
    double html = 0;
    double problem = -1;
    double json = -1;
    double wildcardApp = -1;
    double wildcardAll = -1;
    String[] ranges = accept.split(",", MAX_RANGES + 1);
    for (int i = 0; i < Math.min(ranges.length, MAX_RANGES); i++) {
      String[] parts = ranges[i].split(";");
      String type = parts[0].strip().toLowerCase(Locale.ROOT);
      double q = 1;
      for (int p = 1; p < parts.length; p++) {
        String param = parts[p].strip();
        if (param.length() > 2 && (param.charAt(0) == 'q' || param.charAt(0) == 'Q') && param.charAt(1) == '=') {
          q = quality(param.substring(2));
          if (q < 0) {
            return PROBLEM_JSON; // malformed: no preference can be trusted
          }
        }
      }
      switch (type) {
        case "text/html":
        case "application/xhtml+xml":
          html = Math.max(html, q);
          break;
        case "application/problem+json":
          problem = Math.max(problem, q);
          break;
        case "application/json":
          json = Math.max(json, q);
          break;
        case "application/*":
          wildcardApp = Math.max(wildcardApp, q);
          break;
        case "*/*":
          wildcardAll = Math.max(wildcardAll, q);
          break;
        default:
          break;
      }
    }
    // The most specific range decides a type's quality (RFC 9110 section 12.5.1).
    double wild = wildcardApp >= 0 ? wildcardApp : wildcardAll;
    double problemQ = problem >= 0 ? problem : Math.max(wild, 0);
    double jsonQ = json >= 0 ? json : Math.max(wild, 0);
    if (html > 0 && html > problemQ && html > jsonQ) {
      return HTML;
    }
    return jsonQ > problemQ ? JSON : PROBLEM_JSON;
  }

  private static double quality(String v) {
    // qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
    if (v.isEmpty() || v.length() > 5 || !v.matches("0(\\.[0-9]{0,3})?|1(\\.0{0,3})?")) {
      return -1;
    }
    return Double.parseDouble(v.endsWith(".") ? v + "0" : v);
  }

  /**
   * The body in this format. {@code alternateJsonHref} is where the JSON form of the same refusal
   * can be fetched, for the HTML page's {@code <link rel="alternate">}; it may be null.
   */
  public byte[] body(Refusal refusal, String alternateJsonHref) {
    return this == HTML
        ? RefusalHtml.render(refusal, alternateJsonHref).getBytes(StandardCharsets.UTF_8)
        : refusal.toJsonBytes();
  }
}
