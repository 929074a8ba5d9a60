package dev.headroom.checker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.client.DiscoveredLimits;
import dev.headroom.http.headers.QuotaPolicyItem;
import dev.headroom.http.headers.RateLimitFields;
import dev.headroom.http.headers.ServiceLimitItem;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds and checks the limits discovery document (Graceful Boundaries section 1): at the given
 * path, a {@code Link: rel="limits"} target or the conventional paths; JSON, valid against
 * {@code limits.schema.json}, same-origin references (SC-6), cacheable; then the listed endpoints
 * to request, and whether the quotas the fields report are published (Level 2 "accurate").
 */
final class DiscoveryCheck {
  private final CheckRun run;

  DiscoveryCheck(CheckRun run) {
    this.run = run;
  }

  private static final Pattern LINK_LIMITS = Pattern.compile("<([^>]*)>\\s*;[^,]*rel=\"?limits\"?", Pattern.CASE_INSENSITIVE);

  DiscoveredLimits document;
  JsonNode documentJson;
  /** The exchange the document was read from; null when none was found. */
  Seen documentSeen;
  final List<String> discoveryEvidence = new ArrayList<>();
  boolean discoveryFailed;

  void discover(Seen first) throws IOException, InterruptedException {
    Set<String> paths = new LinkedHashSet<>();
    if (run.limitsPath != null) {
      paths.add(run.limitsPath);
    } else {
      for (String link : first.headers().allValues("Link")) {
        Matcher m = LINK_LIMITS.matcher(link);
        while (m.find()) {
          paths.add(m.group(1));
        }
      }
      paths.addAll(Checker.DISCOVERY_PATHS);
    }
    for (String path : paths) {
      URI uri;
      try {
        uri = run.target.resolve(new URI(path));
      } catch (URISyntaxException e) {
        run.findings.add(new Finding(Finding.Severity.VIOLATION, "GB-1", "Graceful Boundaries section 1", "Link: rel=\"limits\"",
            "'" + path + "' is not a URI reference"));
        continue;
      }
      if (!Checker.sameOrigin(uri, run.target)) {
        run.findings.add(new Finding(Finding.Severity.VIOLATION, "SC-6", "Graceful Boundaries SC-6", "Link: rel=\"limits\"",
            "discovery link '" + path + "' is cross-origin; not followed"));
        continue;
      }
      Seen s = run.get(uri, false);
      if (s == null || s.status() != 200) {
        discoveryEvidence.add("GET " + uri.getRawPath() + (s == null ? ": no response" : ": " + s.status()));
        continue;
      }
      readDocument(s);
      if (run.limitsPath == null) {
        readOtherConventionalPaths(s);
      }
      return;
    }
    discoveryFailed = true;
    run.findings.add(new Finding(Finding.Severity.WARNING, "GB-1", "Graceful Boundaries section 1", run.target.toString(),
        "no limits discovery document at " + String.join(" or ", paths) + "; Level 2 and above need one"));
  }

  /**
   * Section 1 names two conventional paths ({@code /api/limits} or {@code /.well-known/limits}) and
   * an agent may read either: each other one that answers must publish the same document.
   */
  private void readOtherConventionalPaths(Seen read) throws IOException, InterruptedException {
    for (String path : Checker.DISCOVERY_PATHS) {
      URI uri = run.target.resolve(path);
      if (run.seen.stream().anyMatch(x -> x.uri().getRawPath().equals(uri.getRawPath()))) {
        continue; // the document itself, or a path that already failed to answer
      }
      Seen other = run.get(uri, false);
      if (other == null || other.status() != 200) {
        discoveryEvidence.add("GET " + path + (other == null ? ": no response" : ": " + other.status()));
        continue;
      }
      JsonNode json;
      try {
        json = Checker.MAPPER.readTree(other.body());
      } catch (IOException e) {
        json = null;
      }
      if (documentJson != null && documentJson.equals(json)) {
        discoveryEvidence.add(other.where() + ": the same document");
      } else {
        discoveryFailed = true;
        run.findings.add(new Finding(Finding.Severity.VIOLATION, "GB-1", "Graceful Boundaries section 1 "
            + "(\"GET /api/limits or GET /.well-known/limits\") and Level 2 (\"accurate\")", other.where(),
            "differs from " + read.uri().getRawPath() + ": an agent reading one path sees other limits than one reading the other"));
      }
    }
  }

  private void readDocument(Seen s) {
    documentSeen = s;
    discoveryEvidence.add(s.where() + " (" + s.body().length + " bytes)");
    try {
      documentJson = Checker.MAPPER.readTree(s.body());
    } catch (IOException e) {
      documentJson = null;
    }
    if (documentJson == null || !documentJson.isObject()) {
      discoveryFailed = true;
      run.findings.add(new Finding(Finding.Severity.VIOLATION, "GB-1", "Graceful Boundaries section 1", s.where(),
          "the discovery document is not a JSON object"));
      return;
    }
    List<String> schema = Schemas.violations(Schemas.LIMITS, documentJson);
    for (String v : schema) {
      run.findings.add(new Finding(Finding.Severity.VIOLATION, "SCHEMA", "Graceful Boundaries section 1; limits.schema.json",
          s.where(), v));
    }
    if (!schema.isEmpty()) {
      discoveryFailed = true;
      discoveryEvidence.add("limits.schema.json: " + schema.size() + " violation(s)");
    } else {
      discoveryEvidence.add("valid against limits.schema.json");
    }
    for (String field : List.of("changelog", "feed")) {
      JsonNode v = documentJson.get(field);
      if (v != null && v.isTextual() && !Checker.sameOriginReference(v.asText(), s.uri())) {
        discoveryFailed = true;
        run.findings.add(new Finding(Finding.Severity.VIOLATION, "SC-6", "Graceful Boundaries section 1 and SC-6", s.where(),
            field + " '" + v.asText() + "' must be a relative path or a same-origin URL"));
      }
    }
    JsonNode ext = documentJson.get("extensions");
    if (ext != null && ext.isObject()) {
      Iterator<Map.Entry<String, JsonNode>> it = ext.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        if (e.getValue().isTextual() && !Checker.sameOriginReference(e.getValue().asText(), s.uri())) {
          discoveryFailed = true;
          run.findings.add(new Finding(Finding.Severity.VIOLATION, "SC-6", "Graceful Boundaries section 1 (extension discovery) and SC-6",
              s.where(), "extensions." + e.getKey() + " '" + e.getValue().asText() + "' must be a relative path or a same-origin URL"));
        }
      }
    }
    String cache = String.join(", ", s.headers().allValues("Cache-Control")).toLowerCase(Locale.ROOT);
    Matcher m = Pattern.compile("s-maxage=(\\d+)").matcher(cache);
    if (!m.find() || Long.parseLong(m.group(1).length() > 12 ? "999999999999" : m.group(1)) < 300) {
      run.findings.add(new Finding(Finding.Severity.NOTE, "GB-1", "Graceful Boundaries section 1 (\"s-maxage of at least 300 seconds is RECOMMENDED\")",
          s.where(), "Cache-Control is '" + cache + "'"));
    }
    if (!s.contentType().startsWith("application/json")) {
      run.findings.add(new Finding(Finding.Severity.WARNING, "GB-1", "Graceful Boundaries section 1", s.where(),
          "discovery document sent as '" + s.contentType() + "', expected application/json"));
    }
    try {
      document = DiscoveredLimits.parse(s.body());
      for (String issue : document.issues()) {
        if (issue.contains(".endpoint: ")) {
          // Section 1 leaves "path pattern" undefined: a pattern outside the grammar Headroom's
          // front ends write and its client reads (dev.headroom.http.path.PathTemplate) is not a
          // violation, but a client cannot know which requests it covers.
          run.findings.add(new Finding(Finding.Severity.WARNING, "GB-1", "Graceful Boundaries section 1", s.where(),
              issue.replace("; skipped", "; a client cannot tell which requests the entry covers")));
        }
      }
    } catch (IllegalArgumentException e) {
      discoveryFailed = true;
      run.findings.add(new Finding(Finding.Severity.VIOLATION, "GB-1", "Graceful Boundaries section 1", s.where(), e.getMessage()));
    }
  }

  /** The listed GET endpoints that can be requested as they are, at most maxEndpoints. */
  List<URI> endpoints() {
    List<URI> out = new ArrayList<>();
    if (document == null) {
      return out;
    }
    for (DiscoveredLimits.Endpoint e : document.endpoints()) {
      if (e.method().filter(m -> !m.equals("GET")).isPresent()) {
        run.findings.add(new Finding(Finding.Severity.NOTE, "GB-1", "Graceful Boundaries section 1", "limits." + e.key(),
            "not requested: " + e.method().get() + " " + e.path() + " may change state"));
        continue;
      }
      if (e.isTemplate()) {
        run.findings.add(new Finding(Finding.Severity.NOTE, "GB-1", "Graceful Boundaries section 1", "limits." + e.key(),
            "not requested: '" + e.path() + "' is a pattern"));
        continue;
      }
      URI u;
      try {
        u = run.target.resolve(new URI(e.path()));
      } catch (URISyntaxException ex) {
        run.findings.add(new Finding(Finding.Severity.VIOLATION, "GB-1", "Graceful Boundaries section 1", "limits." + e.key(),
            "endpoint '" + e.path() + "' is not a path"));
        continue;
      }
      if (!Checker.sameOrigin(u, run.target)) {
        run.findings.add(new Finding(Finding.Severity.VIOLATION, "SC-6", "Graceful Boundaries SC-4 and SC-6", "limits." + e.key(),
            "endpoint '" + e.path() + "' is on another origin; not requested"));
        continue;
      }
      if (out.size() < run.maxEndpoints) {
        out.add(u);
      }
    }
    return out;
  }

  /** Level 2 "accurate": no quota the fields report may exceed every published maxRequests of the endpoint. */
  void checkAccuracy(Seen s) {
    if (document == null) {
      return;
    }
    String path = s.uri().getRawPath();
    List<Long> published = new ArrayList<>();
    for (DiscoveredLimits.Endpoint e : document.endpoints()) {
      if (e.matches("GET", path)) {
        e.limits().forEach(l -> l.max().ifPresent(published::add));
      }
    }
    if (published.isEmpty()) {
      return;
    }
    long maxPublished = published.stream().mapToLong(Long::longValue).max().getAsLong();
    for (long q : quotas(s.fields())) {
      if (q > maxPublished) {
        run.findings.add(new Finding(Finding.Severity.WARNING, "GB-1", "Graceful Boundaries Level 2 (\"exists and is accurate\"); SC-1",
            s.where(), "the fields report a quota of " + q + ", above every maxRequests published for " + path
                + " (" + published + ")"));
      }
    }
  }

  private List<Long> quotas(RateLimitFields f) {
    List<Long> out = new ArrayList<>();
    for (QuotaPolicyItem p : f.policies()) {
      if (p.unit().equals("requests")) {
        out.add(p.quota());
      }
    }
    if (out.isEmpty()) {
      for (ServiceLimitItem l : f.limits()) {
        l.limit().ifPresent(out::add);
      }
    }
    return out;
  }
}
