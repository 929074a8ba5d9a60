package dev.headroom.client;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.http.path.PathTemplate;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A Graceful Boundaries limits discovery document (spec section 1: {@code GET /api/limits} or
 * {@code GET /.well-known/limits}), read leniently: entries that lack what pacing needs, and entries
 * whose {@code endpoint} is not a path pattern of the one grammar ({@link PathTemplate}; the spec
 * leaves the pattern undefined), are skipped and listed in {@link #issues()}, never thrown. The conformance checker validates documents strictly
 * against the published schema; the client only needs to plan.
 *
 * <p>Immutable.
 */
public final class DiscoveredLimits {

  /** Largest document read: 1 MiB. */
  public static final int MAX_BYTES = 1 << 20;

  /** Most endpoints kept. */
  public static final int MAX_ENDPOINTS = 1000;

  private static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
      .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(32).maxDocumentLength(MAX_BYTES).build())
      .build());

  private final String service;
  private final String conformance;
  private final List<Endpoint> endpoints;
  private final List<String> issues;

  private DiscoveredLimits(String service, String conformance, List<Endpoint> endpoints, List<String> issues) {
    this.service = service;
    this.conformance = conformance;
    this.endpoints = List.copyOf(endpoints);
    this.issues = List.copyOf(issues);
  }

  /**
   * Reads a document.
   *
   * @throws IllegalArgumentException when the bytes are not a JSON object with a {@code limits} object
   */
  public static DiscoveredLimits parse(byte[] json) {
    Objects.requireNonNull(json, "json");
    if (json.length > MAX_BYTES) {
      throw new IllegalArgumentException("limits document: expected at most " + MAX_BYTES + " bytes, got " + json.length);
    }
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("limits document: not JSON (" + e.getOriginalMessage() + ")", e);
    } catch (IOException e) {
      throw new IllegalArgumentException("limits document: unreadable (" + e.getMessage() + ")", e);
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("limits document: expected a JSON object");
    }
    JsonNode limits = root.get("limits");
    if (limits == null || !limits.isObject()) {
      throw new IllegalArgumentException("limits: expected an object of endpoint entries (Graceful Boundaries section 1), got "
          + (limits == null ? "nothing" : limits.getNodeType().toString().toLowerCase(Locale.ROOT)));
    }
    List<String> issues = new ArrayList<>();
    List<Endpoint> endpoints = new ArrayList<>();
    Iterator<Map.Entry<String, JsonNode>> it = limits.fields();
    while (it.hasNext() && endpoints.size() < MAX_ENDPOINTS) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode entry = e.getValue();
      String key = e.getKey();
      if (!entry.isObject() || !entry.path("endpoint").isTextual()) {
        issues.add("limits." + key + ": expected an object with an endpoint path; skipped");
        continue;
      }
      String path = entry.get("endpoint").asText();
      PathTemplate template;
      try {
        template = PathTemplate.parsePublished(path);
      } catch (IllegalArgumentException ex) {
        issues.add("limits." + key + ".endpoint: " + ex.getMessage() + "; skipped");
        continue;
      }
      String method = entry.path("method").isTextual() ? entry.get("method").asText().toUpperCase(Locale.ROOT) : null;
      if (method != null && (method.equals("ANY") || method.equals("*"))) {
        method = null; // Headroom's servlet filter publishes a route of every method as ANY
      }
      List<Limit> entryLimits = new ArrayList<>();
      JsonNode ls = entry.path("limits");
      if (ls.isArray()) {
        for (int i = 0; i < ls.size() && i < 64; i++) {
          JsonNode l = ls.get(i);
          String type = l.path("type").isTextual() ? l.get("type").asText() : "";
          long max = l.path("maxRequests").isNumber() && l.get("maxRequests").asDouble() >= 0 ? (long) Math.floor(l.get("maxRequests").asDouble()) : -1;
          double w = l.path("windowSeconds").isNumber() ? l.get("windowSeconds").asDouble() : -1;
          if (max < 0 || !(w > 0)) {
            issues.add("limits." + key + ".limits[" + i + "]: expected maxRequests >= 0 and windowSeconds > 0; not used for pacing");
          }
          entryLimits.add(new Limit(type, max, w > 0 ? Duration.ofMillis((long) Math.ceil(w * 1000)) : null,
              l.path("description").isTextual() ? l.get("description").asText() : null,
              l.path("limitId").isTextual() ? l.get("limitId").asText() : null));
        }
      } else {
        issues.add("limits." + key + ".limits: expected an array; skipped");
      }
      endpoints.add(new Endpoint(key, path, template, method, entryLimits));
    }
    return new DiscoveredLimits(root.path("service").isTextual() ? root.get("service").asText() : null,
        root.path("conformance").isTextual() ? root.get("conformance").asText() : null, endpoints, issues);
  }

  public Optional<String> service() {
    return Optional.ofNullable(service);
  }

  /** The self-declared conformance ({@code level-1} ... {@code level-4}, {@code none}, {@code not-applicable}). */
  public Optional<String> conformance() {
    return Optional.ofNullable(conformance);
  }

  public List<Endpoint> endpoints() {
    return endpoints;
  }

  /** What was skipped. */
  public List<String> issues() {
    return issues;
  }

  /**
   * Whether a refusal's limit is one this document describes (Graceful Boundaries section 1: "an
   * agent that receives a 429 with an unfamiliar {@code limit} value SHOULD re-fetch the discovery
   * endpoint"): its {@code limitId} is a limit's {@code limitId}, or its {@code limit} text is a
   * limit's {@code description}, compared without case, runs of spaces or a final full stop. A
   * refusal that names its limit neither way is not unfamiliar.
   */
  public boolean describes(Optional<String> limitId, Optional<String> limit) {
    if (limitId.isEmpty() && limit.isEmpty()) {
      return true;
    }
    String text = limit.map(DiscoveredLimits::normalised).orElse(null);
    for (Endpoint e : endpoints) {
      for (Limit l : e.limits()) {
        if (limitId.isPresent() && limitId.get().equals(l.limitId())) {
          return true;
        }
        if (text != null && l.description() != null && text.equals(normalised(l.description()))) {
          return true;
        }
      }
    }
    return false;
  }

  private static String normalised(String text) {
    String t = text.strip().replaceAll("\\s+", " ").toLowerCase(Locale.ROOT);
    return t.endsWith(".") ? t.substring(0, t.length() - 1) : t;
  }

  /** One endpoint entry. */
  public static final class Endpoint {
    private final String key;
    private final String path;
    private final String method;
    private final List<Limit> limits;
    private final PathTemplate template;

    Endpoint(String key, String path, PathTemplate template, String method, List<Limit> limits) {
      this.key = key;
      this.path = path;
      this.method = method;
      this.limits = List.copyOf(limits);
      this.template = template;
    }

    public String key() {
      return key;
    }

    /** The path pattern as published: {@code /api/scan}, {@code /api/items/{id}}, {@code /api/items/:id}, {@code /api/*}. */
    public String path() {
      return path;
    }

    /**
     * The path pattern as read, in the one grammar every Headroom front end writes
     * ({@link PathTemplate#parsePublished}): {@code :id} and a trailing {@code *} are one segment
     * each, {@code **} the rest of the path.
     */
    public PathTemplate template() {
      return template;
    }

    /** The method, upper case; empty when the entry names none, {@code ANY} or {@code *} (then any method matches). */
    public Optional<String> method() {
      return Optional.ofNullable(method);
    }

    public List<Limit> limits() {
      return limits;
    }

    /** Whether the path pattern has variables or wildcards (so it cannot be requested as it is). */
    public boolean isTemplate() {
      return !template.isLiteral();
    }

    /** Whether a request with this method and raw path (percent-encoded, no query; {@link java.net.URI#getRawPath()}) falls under the entry. */
    public boolean matches(String requestMethod, String requestPath) {
      return (method == null || method.equals(requestMethod)) && template.matches(requestPath);
    }
  }

  /**
   * One limit of an endpoint.
   *
   * @param type the limit type ({@code ip-rate}, ...)
   * @param maxRequests the maximum requests in the window; negative when absent
   * @param window the window; null when absent
   * @param description the human-readable explanation, if any
   * @param limitId the stable identifier of the limit, if any (Graceful Boundaries section 1)
   */
  public record Limit(String type, long maxRequests, Duration window, String description, String limitId) {
    /** Whether the limit says enough to pace by: a count and a window, and a windowed type. */
    public boolean isWindowed() {
      return maxRequests >= 0 && window != null && !type.equals("concurrency") && !type.equals("resource-dedup");
    }

    public OptionalLong max() {
      return maxRequests < 0 ? OptionalLong.empty() : OptionalLong.of(maxRequests);
    }
  }
}
