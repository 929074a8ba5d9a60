package dev.headroom.checker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.Ticker;
import dev.headroom.client.LimitsDocument;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.RetryAfter;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalParseException;
import dev.headroom.http.body.RefusalReader;
import dev.headroom.http.headers.Diagnostic;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.QuotaPolicyItem;
import dev.headroom.http.headers.RateLimitFields;
import dev.headroom.http.headers.ServiceLimitItem;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The conformance checker behind {@code headroom check URL}: finds and validates the Graceful
 * Boundaries discovery document, requests the endpoints it lists, validates every RateLimit field
 * of every response in every dialect, checks every non-success body, optionally provokes one
 * refusal ({@link Builder#probe(int)}), and reports the level with its evidence.
 *
 * <h2>What it checks, and where the rule comes from</h2>
 * <ul>
 *   <li>Discovery (Graceful Boundaries section 1): found at the given path or at
 *       {@code /.well-known/limits}, {@code /api/limits} or a {@code Link: rel="limits"} target; JSON;
 *       valid against {@code limits.schema.json}; {@code changelog}, {@code feed} and
 *       {@code extensions} relative or same-origin (SC-6); cacheable ({@code s-maxage >= 300},
 *       RECOMMENDED); accurate (a quota the fields report is not above every published one).
 *   <li>RateLimit fields (draft-ietf-httpapi-ratelimit-headers-09 sections 3, 4, 6 and RFC 9651):
 *       every diagnostic of {@link RateLimitFields} (strict Structured Fields syntax, parameter types,
 *       remaining above quota, reset against Retry-After, mixed dialects), and fields on 3xx
 *       (section 6).
 *   <li>Every non-success body (section 6): {@code error} (snake_case), {@code detail}, {@code why}.
 *   <li>Refusals (section 2): Retry-After present and valid, JSON content type (or an HTML body with
 *       {@code <meta name="retry-after">}), {@code limit} and {@code retryAfterSeconds} agreeing with
 *       Retry-After, {@code detail} naming the wait, {@code why} not restating the error; the
 *       {@code refusal-429.schema.json}.
 *   <li>Guidance (section 3, SC-6, CONFORMANCE level 3): machine-actionable URLs same-origin, and
 *       honest: a same-origin {@code cachedResultUrl} or {@code alternativeEndpoint} is requested
 *       once and must not be a 404 or 410.
 * </ul>
 *
 * <h2>How many requests</h2>
 * The target once, each discovery path until one answers, at most {@link Builder#maxEndpoints(int)}
 * listed GET endpoints once each, one request to a path that does not exist (to see a 404 body),
 * at most {@link Builder#probe(int)} requests to the probed endpoint (stopping at the first
 * refusal), and each same-origin guidance URL of that refusal once.
 *
 * <p>Immutable and thread-safe; each {@link #check} is independent.
 */
public final class Checker {

  /** Discovery paths tried when none is given. */
  public static final List<String> DISCOVERY_PATHS = List.of("/.well-known/limits", "/api/limits");

  /** A path no service is expected to have, requested to see a 404 body. */
  public static final String NOT_FOUND_PATH = "/.headroom-check/does-not-exist";

  /** Largest body read. */
  public static final int MAX_BODY_BYTES = 1 << 20;

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final Pattern META_RETRY_AFTER = Pattern.compile(
      "<meta\\s+name=[\"']retry-after[\"']\\s+content=[\"'](\\d+)[\"']", Pattern.CASE_INSENSITIVE);
  private static final Pattern LINK_LIMITS = Pattern.compile("<([^>]*)>\\s*;[^,]*rel=\"?limits\"?", Pattern.CASE_INSENSITIVE);
  private static final Set<String> RESTATEMENTS = Set.of("ratelimitexceeded", "ratelimited", "toomanyrequests",
      "limitexceeded", "quotaexceeded", "requestlimitexceeded");

  private final HttpClient http;
  private final Ticker ticker;
  private final String limitsPath;
  private final int probe;
  private final String probePath;
  private final Duration timeout;
  private final int maxEndpoints;

  private Checker(Builder b) {
    this.http = b.http;
    this.ticker = b.ticker;
    this.limitsPath = b.limitsPath;
    this.probe = b.probe;
    this.probePath = b.probePath;
    this.timeout = b.timeout;
    this.maxEndpoints = b.maxEndpoints;
  }

  public static Builder builder(HttpClient http) {
    return new Builder(http);
  }

  /**
   * Checks a service.
   *
   * @param target an absolute http or https URL
   * @throws IOException when the target itself cannot be reached
   * @throws IllegalArgumentException when the target is not an absolute http(s) URL
   */
  public Report check(URI target) throws IOException, InterruptedException {
    Objects.requireNonNull(target, "target");
    if (target.getScheme() == null || !(target.getScheme().equalsIgnoreCase("http") || target.getScheme().equalsIgnoreCase("https"))
        || target.getHost() == null) {
      throw new IllegalArgumentException("target: expected an absolute http or https URL, got '" + target + "'");
    }
    return new Run(target).run();
  }

  /** One observed exchange. */
  private record Seen(String method, URI uri, int status, HttpHeaders headers, byte[] body, RateLimitFields fields) {
    String where() {
      String q = uri.getRawQuery();
      return method + " " + (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
          + (q == null ? "" : "?" + q) + " -> " + status;
    }

    boolean success() {
      return status >= 200 && status < 300;
    }

    boolean refusal() {
      return status == 429 || (status == 503 && headers.firstValue(HeaderNames.RETRY_AFTER).isPresent());
    }

    String contentType() {
      return headers.firstValue("Content-Type").orElse("").toLowerCase(Locale.ROOT);
    }
  }

  /** The state of one check. */
  private final class Run {
    private final URI target;
    private final List<Finding> findings = new ArrayList<>();
    private final List<Seen> seen = new ArrayList<>();
    private final Map<Seen, Optional<Refusal>> read = new java.util.IdentityHashMap<>();
    private final Set<HeaderDialect> dialects = EnumSet.noneOf(HeaderDialect.class);
    private final List<Seen> limitedSuccesses = new ArrayList<>();
    private final List<String> nonSuccessEvidence = new ArrayList<>();
    private boolean nonSuccessFailed;
    private int requests;
    private LimitsDocument document;
    private JsonNode documentJson;
    private final List<String> discoveryEvidence = new ArrayList<>();
    private boolean discoveryFailed;
    private Seen refusal;
    private final List<String> refusalEvidence = new ArrayList<>();
    private boolean refusalFailed;
    private final List<String> guidanceEvidence = new ArrayList<>();
    private boolean guidanceFailed;
    private boolean guidanceFound;

    Run(URI target) {
      this.target = target;
    }

    Report run() throws IOException, InterruptedException {
      Seen first = get(target, true);
      discover(first);
      List<URI> endpoints = endpoints();
      for (URI u : endpoints) {
        Seen s = get(u, false);
        if (s != null && s.success()) {
          limitedSuccesses.add(s);
          checkAccuracy(s);
        }
      }
      if (endpoints.isEmpty() && first.success()) {
        limitedSuccesses.add(first);
      }
      get(target.resolve(NOT_FOUND_PATH), false);
      if (probe > 0) {
        probe(endpoints);
      }
      return report();
    }

    // ---- requests

    /** GETs a URL and checks what came back; null when it could not be reached (and was not the target). */
    private Seen get(URI uri, boolean mustReach) throws IOException, InterruptedException {
      HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET()
          .header("Accept", "application/json, application/problem+json;q=0.9, */*;q=0.1")
          .header("User-Agent", "headroom-check").build();
      requests++;
      HttpResponse<InputStream> response;
      try {
        response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
      } catch (IOException e) {
        if (mustReach) {
          throw new IOException("target " + uri + " unreachable: " + describe(e), e);
        }
        findings.add(new Finding(Finding.Severity.WARNING, "HTTP", "RFC 9110", "GET " + uri.getRawPath(),
            "no response: " + describe(e)));
        return null;
      }
      byte[] body;
      try (InputStream in = response.body()) {
        body = in.readNBytes(MAX_BODY_BYTES);
      }
      RateLimitFields fields = RateLimitFields.parse(response.headers(), ticker.instant());
      Seen s = new Seen("GET", uri, response.statusCode(), response.headers(), body, fields);
      seen.add(s);
      checkFields(s);
      if (s.status() >= 400) {
        checkNonSuccessBody(s);
      }
      return s;
    }

    // ---- RateLimit fields

    private void checkFields(Seen s) {
      dialects.addAll(s.fields().dialects());
      for (Diagnostic d : s.fields().diagnostics()) {
        Finding.Severity sev = switch (d.severity()) {
          case ERROR -> Finding.Severity.VIOLATION;
          case WARNING -> Finding.Severity.WARNING;
          case NOTE -> Finding.Severity.NOTE;
        };
        String message = d.field() + ": " + d.detail();
        if (d.kind() == Diagnostic.Kind.RESET_DISAGREES_WITH_RETRY_AFTER && notExhausted(s.fields(), d.detail())) {
          // Retry-After is the wait of the exhausted policy; a policy with quota left keeps its own reset.
          sev = Finding.Severity.NOTE;
          message += " (this policy has quota left; its reset need not match)";
        }
        findings.add(new Finding(sev, "IETF-" + d.kind().name(), d.reference(), s.where(), message));
      }
      if (s.status() >= 300 && s.status() < 400 && !s.fields().limits().isEmpty()) {
        findings.add(new Finding(Finding.Severity.WARNING, "IETF-REDIRECT", "draft-09 section 6", s.where(),
            "RateLimit fields on a redirection: a low remaining value may keep clients from following it"));
      }
    }

    /** Whether the named limit a reset diagnostic quotes ('name' reset ...) reports remaining quota. */
    private boolean notExhausted(RateLimitFields f, String detail) {
      if (!detail.startsWith("'")) {
        return false;
      }
      int end = detail.indexOf('\'', 1);
      if (end < 0) {
        return false;
      }
      String name = detail.substring(1, end);
      for (ServiceLimitItem l : f.limits()) {
        if (l.name().filter(name::equals).isPresent() && l.remaining().isPresent() && l.remaining().getAsLong() > 0) {
          return true;
        }
      }
      return false;
    }

    // ---- non-success bodies (Graceful Boundaries section 6)

    private void checkNonSuccessBody(Seen s) {
      Optional<Refusal> r = readRefusal(s, s.refusal() ? "GB-2" : "GB-6");
      if (r.isEmpty()) {
        nonSuccessFailed = true;
        nonSuccessEvidence.add(s.where() + ": body is not a structured refusal");
        return;
      }
      List<String> core = new ArrayList<>();
      for (String issue : r.get().issues()) {
        if (issue.startsWith("error:") || issue.startsWith("detail:") || issue.startsWith("why:")) {
          core.add(issue);
        }
      }
      if (core.isEmpty()) {
        nonSuccessEvidence.add(s.where() + ": error, detail and why present");
      } else {
        nonSuccessFailed = true;
        nonSuccessEvidence.add(s.where() + ": " + String.join("; ", core));
      }
      if (!s.refusal()) {
        for (String issue : r.get().issues()) {
          findings.add(new Finding(core.contains(issue) ? Finding.Severity.VIOLATION : Finding.Severity.WARNING, "GB-6",
              "Graceful Boundaries section 6", s.where(), issue));
        }
        checkGuidanceOrigins(s, r.get());
      }
    }

    /** The body as a refusal, or empty (with a finding, once) when it is not JSON. */
    private Optional<Refusal> readRefusal(Seen s, String rule) {
      return read.computeIfAbsent(s, x -> parseRefusal(x, rule));
    }

    private Optional<Refusal> parseRefusal(Seen s, String rule) {
      String type = s.contentType();
      if (type.startsWith("text/html")) {
        String html = new String(s.body(), StandardCharsets.UTF_8);
        Matcher m = META_RETRY_AFTER.matcher(html);
        if (s.refusal()) {
          if (m.find()) {
            findings.add(new Finding(Finding.Severity.NOTE, "GB-2", "Graceful Boundaries section 2 (HTML 429 responses)",
                s.where(), "HTML refusal with <meta name=\"retry-after\" content=\"" + m.group(1) + "\">"));
          } else if (s.headers().firstValue(HeaderNames.RETRY_AFTER).isEmpty()) {
            findings.add(new Finding(Finding.Severity.VIOLATION, "GB-2", "Graceful Boundaries section 2 (HTML 429 responses)",
                s.where(), "HTML refusal with neither Retry-After nor <meta name=\"retry-after\">: the wait is not machine-accessible"));
          }
        }
        findings.add(new Finding(Finding.Severity.VIOLATION, rule, "Graceful Boundaries section 2 (\"Content-Type MUST be application/json for API endpoints\")",
            s.where(), "body is text/html, not a JSON refusal with error, detail and why"));
        return Optional.empty();
      }
      if (s.body().length == 0) {
        findings.add(new Finding(Finding.Severity.VIOLATION, rule, "Graceful Boundaries section 6", s.where(),
            "empty body: every non-success response needs error, detail and why"));
        return Optional.empty();
      }
      try {
        Refusal r = RefusalReader.defaults().read(s.status(), s.body());
        if (!(type.startsWith("application/json") || type.startsWith("application/problem+json"))) {
          findings.add(new Finding(Finding.Severity.WARNING, rule, "Graceful Boundaries section 2; RFC 9457 section 3",
              s.where(), "JSON body sent as '" + (type.isEmpty() ? "no Content-Type" : type)
                  + "', expected application/json or application/problem+json"));
        }
        return Optional.of(r);
      } catch (RefusalParseException e) {
        findings.add(new Finding(Finding.Severity.VIOLATION, rule, "Graceful Boundaries section 6", s.where(),
            "body is not a JSON object (" + e.getMessage() + ")"));
        return Optional.empty();
      }
    }

    // ---- discovery (section 1)

    private void discover(Seen first) throws IOException, InterruptedException {
      Set<String> paths = new LinkedHashSet<>();
      if (limitsPath != null) {
        paths.add(limitsPath);
      } else {
        for (String link : first.headers().allValues("Link")) {
          Matcher m = LINK_LIMITS.matcher(link);
          while (m.find()) {
            paths.add(m.group(1));
          }
        }
        paths.addAll(DISCOVERY_PATHS);
      }
      for (String path : paths) {
        URI uri;
        try {
          uri = target.resolve(new URI(path));
        } catch (URISyntaxException e) {
          findings.add(new Finding(Finding.Severity.VIOLATION, "GB-1", "Graceful Boundaries section 1", "Link: rel=\"limits\"",
              "'" + path + "' is not a URI reference"));
          continue;
        }
        if (!sameOrigin(uri, target)) {
          findings.add(new Finding(Finding.Severity.VIOLATION, "SC-6", "Graceful Boundaries SC-6", "Link: rel=\"limits\"",
              "discovery link '" + path + "' is cross-origin; not followed"));
          continue;
        }
        Seen s = get(uri, false);
        if (s == null || s.status() != 200) {
          discoveryEvidence.add("GET " + uri.getRawPath() + (s == null ? ": no response" : ": " + s.status()));
          continue;
        }
        readDocument(s);
        return;
      }
      discoveryFailed = true;
      findings.add(new Finding(Finding.Severity.WARNING, "GB-1", "Graceful Boundaries section 1", target.toString(),
          "no limits discovery document at " + String.join(" or ", paths) + "; Level 2 and above need one"));
    }

    private void readDocument(Seen s) {
      discoveryEvidence.add(s.where() + " (" + s.body().length + " bytes)");
      try {
        documentJson = MAPPER.readTree(s.body());
      } catch (IOException e) {
        documentJson = null;
      }
      if (documentJson == null || !documentJson.isObject()) {
        discoveryFailed = true;
        findings.add(new Finding(Finding.Severity.VIOLATION, "GB-1", "Graceful Boundaries section 1", s.where(),
            "the discovery document is not a JSON object"));
        return;
      }
      List<String> schema = Schemas.violations(Schemas.LIMITS, documentJson);
      for (String v : schema) {
        findings.add(new Finding(Finding.Severity.VIOLATION, "SCHEMA", "Graceful Boundaries section 1; limits.schema.json",
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
        if (v != null && v.isTextual() && !sameOriginReference(v.asText(), s.uri())) {
          discoveryFailed = true;
          findings.add(new Finding(Finding.Severity.VIOLATION, "SC-6", "Graceful Boundaries section 1 and SC-6", s.where(),
              field + " '" + v.asText() + "' must be a relative path or a same-origin URL"));
        }
      }
      JsonNode ext = documentJson.get("extensions");
      if (ext != null && ext.isObject()) {
        Iterator<Map.Entry<String, JsonNode>> it = ext.fields();
        while (it.hasNext()) {
          Map.Entry<String, JsonNode> e = it.next();
          if (e.getValue().isTextual() && !sameOriginReference(e.getValue().asText(), s.uri())) {
            discoveryFailed = true;
            findings.add(new Finding(Finding.Severity.VIOLATION, "SC-6", "Graceful Boundaries section 1 (extension discovery) and SC-6",
                s.where(), "extensions." + e.getKey() + " '" + e.getValue().asText() + "' must be a relative path or a same-origin URL"));
          }
        }
      }
      String cache = String.join(", ", s.headers().allValues("Cache-Control")).toLowerCase(Locale.ROOT);
      Matcher m = Pattern.compile("s-maxage=(\\d+)").matcher(cache);
      if (!m.find() || Long.parseLong(m.group(1).length() > 12 ? "999999999999" : m.group(1)) < 300) {
        findings.add(new Finding(Finding.Severity.NOTE, "GB-1", "Graceful Boundaries section 1 (\"s-maxage of at least 300 seconds is RECOMMENDED\")",
            s.where(), "Cache-Control is '" + cache + "'"));
      }
      if (!s.contentType().startsWith("application/json")) {
        findings.add(new Finding(Finding.Severity.WARNING, "GB-1", "Graceful Boundaries section 1", s.where(),
            "discovery document sent as '" + s.contentType() + "', expected application/json"));
      }
      try {
        document = LimitsDocument.parse(s.body());
        for (String issue : document.issues()) {
          if (issue.contains(".endpoint: ")) {
            // Section 1 leaves "path pattern" undefined: a pattern outside the grammar Headroom's
            // front ends write and its client reads (dev.headroom.http.path.PathTemplate) is not a
            // violation, but a client cannot know which requests it covers.
            findings.add(new Finding(Finding.Severity.WARNING, "GB-1", "Graceful Boundaries section 1", s.where(),
                issue.replace("; skipped", "; a client cannot tell which requests the entry covers")));
          }
        }
      } catch (IllegalArgumentException e) {
        discoveryFailed = true;
        findings.add(new Finding(Finding.Severity.VIOLATION, "GB-1", "Graceful Boundaries section 1", s.where(), e.getMessage()));
      }
    }

    /** The listed GET endpoints that can be requested as they are, at most maxEndpoints. */
    private List<URI> endpoints() {
      List<URI> out = new ArrayList<>();
      if (document == null) {
        return out;
      }
      for (LimitsDocument.Endpoint e : document.endpoints()) {
        if (e.method().filter(m -> !m.equals("GET")).isPresent()) {
          findings.add(new Finding(Finding.Severity.NOTE, "GB-1", "Graceful Boundaries section 1", "limits." + e.key(),
              "not requested: " + e.method().get() + " " + e.path() + " may change state"));
          continue;
        }
        if (e.isTemplate()) {
          findings.add(new Finding(Finding.Severity.NOTE, "GB-1", "Graceful Boundaries section 1", "limits." + e.key(),
              "not requested: '" + e.path() + "' is a pattern"));
          continue;
        }
        URI u;
        try {
          u = target.resolve(new URI(e.path()));
        } catch (URISyntaxException ex) {
          findings.add(new Finding(Finding.Severity.VIOLATION, "GB-1", "Graceful Boundaries section 1", "limits." + e.key(),
              "endpoint '" + e.path() + "' is not a path"));
          continue;
        }
        if (!sameOrigin(u, target)) {
          findings.add(new Finding(Finding.Severity.VIOLATION, "SC-6", "Graceful Boundaries SC-4 and SC-6", "limits." + e.key(),
              "endpoint '" + e.path() + "' is on another origin; not requested"));
          continue;
        }
        if (out.size() < maxEndpoints) {
          out.add(u);
        }
      }
      return out;
    }

    /** Level 2 "accurate": no quota the fields report may exceed every published maxRequests of the endpoint. */
    private void checkAccuracy(Seen s) {
      if (document == null) {
        return;
      }
      String path = s.uri().getRawPath();
      List<Long> published = new ArrayList<>();
      for (LimitsDocument.Endpoint e : document.endpoints()) {
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
          findings.add(new Finding(Finding.Severity.WARNING, "GB-1", "Graceful Boundaries Level 2 (\"exists and is accurate\"); SC-1",
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

    // ---- probe (section 2, section 3)

    private void probe(List<URI> endpoints) throws IOException, InterruptedException {
      URI uri = probePath != null ? target.resolve(probePath) : endpoints.isEmpty() ? target : endpoints.get(0);
      int sent = 0;
      while (sent < probe) {
        sent++;
        Seen s = get(uri, false);
        if (s == null) {
          break;
        }
        if (s.success()) {
          limitedSuccesses.add(s);
        }
        if (s.refusal()) {
          refusal = s;
          break;
        }
      }
      if (refusal == null) {
        findings.add(new Finding(Finding.Severity.NOTE, "GB-2", "Graceful Boundaries section 2", "GET " + uri.getRawPath(),
            "no refusal within " + sent + " request(s) (--probe " + probe + "); refusal requirements unverified"));
        return;
      }
      refusalEvidence.add("refused after " + sent + " of at most " + probe + " request(s): " + refusal.where());
      checkRefusal(refusal);
    }

    private void checkRefusal(Seen s) throws IOException, InterruptedException {
      Optional<String> raHeader = s.headers().firstValue(HeaderNames.RETRY_AFTER);
      Optional<RetryAfter> ra = raHeader.flatMap(v -> RetryAfter.parse(v, ticker.instant()));
      if (raHeader.isEmpty()) {
        refusalFailed = true;
        findings.add(new Finding(Finding.Severity.VIOLATION, "GB-2", "Graceful Boundaries section 2 (\"Return status 429 ... with a Retry-After header\"); RFC 6585 section 4",
            s.where(), "no Retry-After"));
      } else if (ra.isEmpty()) {
        refusalFailed = true;
        findings.add(new Finding(Finding.Severity.VIOLATION, "GB-2", "RFC 9110 section 10.2.3", s.where(),
            "Retry-After '" + raHeader.get() + "' is neither delay-seconds nor an HTTP-date"));
      } else {
        refusalEvidence.add("Retry-After: " + raHeader.get());
      }
      Optional<Refusal> body = readRefusal(s, "GB-2");
      if (body.isEmpty()) {
        refusalFailed = true;
        refusalEvidence.add("body is not a JSON refusal");
        guidanceEvidence.add("no JSON refusal to carry guidance");
        guidanceFailed = true;
        return;
      }
      Refusal r = body.get();
      for (String issue : r.issues()) {
        refusalFailed = true;
        findings.add(new Finding(Finding.Severity.VIOLATION, "GB-2", "Graceful Boundaries section 2", s.where(), issue));
      }
      try {
        JsonNode json = MAPPER.readTree(s.body());
        for (String v : Schemas.violations(s.status() == 429 ? Schemas.REFUSAL_429 : Schemas.REFUSAL, json)) {
          refusalFailed = true;
          findings.add(new Finding(Finding.Severity.VIOLATION, "SCHEMA", "Graceful Boundaries section 2; "
              + (s.status() == 429 ? "refusal-429.schema.json" : "refusal.schema.json"), s.where(), v));
        }
      } catch (IOException e) {
        refusalFailed = true;
      }
      if (r.issues().isEmpty()) {
        refusalEvidence.add("error, detail, why, limit and retryAfterSeconds present");
      }
      OptionalLong ras = r.retryAfterSeconds();
      if (ras.isPresent() && ra.isPresent() && Math.abs(ras.getAsLong() - ra.get().delaySeconds()) > 1) {
        findings.add(new Finding(Finding.Severity.WARNING, "GB-2", "Graceful Boundaries appendix B.1 (\"Set the Retry-After HTTP header to match\")",
            s.where(), "retryAfterSeconds " + ras.getAsLong() + " but Retry-After " + ra.get().delaySeconds() + " s"));
      }
      r.detail().ifPresent(d -> {
        if (!d.matches("(?s).*\\d.*")) {
          findings.add(new Finding(Finding.Severity.WARNING, "GB-2", "Graceful Boundaries section 2 (\"detail MUST include the specific retry time\")",
              s.where(), "detail '" + shorten(d) + "' names no wait"));
        }
      });
      r.why().ifPresent(w -> {
        String norm = w.toLowerCase(Locale.ROOT).replaceAll("[^a-z]", "");
        String err = r.error().orElse("").toLowerCase(Locale.ROOT).replaceAll("[^a-z]", "");
        if (RESTATEMENTS.contains(norm) || (!err.isEmpty() && norm.equals(err))) {
          refusalFailed = true;
          findings.add(new Finding(Finding.Severity.VIOLATION, "GB-2", "Graceful Boundaries section 2 (\"why MUST explain the purpose of the limit, not just restate it\")",
              s.where(), "why '" + shorten(w) + "' restates the error"));
        }
      });
      r.problemType().ifPresent(t -> findings.add(new Finding(Finding.Severity.NOTE, "IETF-PROBLEM", "draft-09 section 5",
          s.where(), "problem type " + t.uri() + (r.violatedPolicies().isEmpty() ? "" : ", violated-policies " + r.violatedPolicies()))));
      checkGuidance(s, r);
    }

    private void checkGuidance(Seen s, Refusal r) throws IOException, InterruptedException {
      checkGuidanceOrigins(s, r);
      List<String[]> present = new ArrayList<>();
      r.cachedResultUrl().ifPresent(u -> present.add(new String[] {"cachedResultUrl", u}));
      r.alternativeEndpoint().ifPresent(u -> present.add(new String[] {"alternativeEndpoint", u}));
      r.upgradeUrl().ifPresent(u -> present.add(new String[] {"upgradeUrl", u}));
      if (present.isEmpty()) {
        guidanceFailed = true;
        guidanceEvidence.add(s.where() + ": no cachedResultUrl, alternativeEndpoint or upgradeUrl");
        return;
      }
      guidanceFound = true;
      for (String[] g : present) {
        guidanceEvidence.add(s.where() + ": " + g[0] + " " + g[1]);
        if (g[0].equals("upgradeUrl")) {
          continue;
        }
        if (!sameOriginReference(g[1], s.uri())) {
          guidanceFailed = true;
          continue;
        }
        Seen followed = get(s.uri().resolve(g[1].strip()), false);
        if (followed == null || followed.status() == 404 || followed.status() == 410) {
          guidanceFailed = true;
          findings.add(new Finding(Finding.Severity.VIOLATION, "GB-3", "CONFORMANCE Level 3 (\"Guidance MUST be honest\")",
              s.where(), g[0] + " '" + g[1] + "' leads to " + (followed == null ? "no response" : followed.status())));
          guidanceEvidence.add("  followed: " + (followed == null ? "no response" : followed.where()) + " (a dead end)");
        } else {
          guidanceEvidence.add("  followed: " + followed.where());
        }
      }
    }

    /** SC-6: machine-actionable guidance never leaves the origin. */
    private void checkGuidanceOrigins(Seen s, Refusal r) {
      List<String[]> actionable = new ArrayList<>();
      r.cachedResultUrl().ifPresent(u -> actionable.add(new String[] {"cachedResultUrl", u}));
      r.alternativeEndpoint().ifPresent(u -> actionable.add(new String[] {"alternativeEndpoint", u}));
      r.scanUrl().ifPresent(u -> actionable.add(new String[] {"scanUrl", u}));
      for (String[] g : actionable) {
        if (!sameOriginReference(g[1], s.uri())) {
          if (s.refusal()) {
            refusalFailed = true;
          }
          findings.add(new Finding(Finding.Severity.VIOLATION, "SC-6", "Graceful Boundaries SC-6", s.where(),
              g[0] + " '" + g[1] + "' is cross-origin; machine-actionable guidance must be relative or same-origin"));
        }
      }
    }

    // ---- the verdict

    private Report report() {
      List<Requirement> reqs = new ArrayList<>();
      List<String> nonSuccess = new ArrayList<>(nonSuccessEvidence);
      Requirement.Status ns = nonSuccess.isEmpty() ? Requirement.Status.UNVERIFIED
          : nonSuccessFailed ? Requirement.Status.FAIL : Requirement.Status.PASS;
      if (nonSuccess.isEmpty()) {
        nonSuccess.add("no non-success response observed");
      }
      reqs.add(new Requirement(Level.LEVEL_1, "every non-success response carries error, detail and why (section 6)", ns, nonSuccess));
      Requirement.Status rs;
      List<String> refusalEv = new ArrayList<>(refusalEvidence);
      if (refusal == null) {
        rs = Requirement.Status.UNVERIFIED;
        refusalEv.add(probe > 0 ? "no refusal provoked within --probe " + probe : "no refusal observed; run with --probe N to provoke one");
      } else {
        rs = refusalFailed ? Requirement.Status.FAIL : Requirement.Status.PASS;
      }
      reqs.add(new Requirement(Level.LEVEL_1, "429 responses add limit and retryAfterSeconds, with Retry-After (section 2)", rs, refusalEv));
      Requirement.Status ds = document != null && !discoveryFailed ? Requirement.Status.PASS : Requirement.Status.FAIL;
      List<String> discEv = new ArrayList<>(discoveryEvidence);
      if (discEv.isEmpty()) {
        discEv.add("no discovery path answered");
      }
      reqs.add(new Requirement(Level.LEVEL_2, "a valid limits discovery document (section 1)", ds, discEv));
      Requirement.Status gs = refusal == null ? Requirement.Status.UNVERIFIED
          : guidanceFound && !guidanceFailed ? Requirement.Status.PASS : Requirement.Status.FAIL;
      List<String> guideEv = new ArrayList<>(guidanceEvidence);
      if (refusal == null) {
        guideEv.add("no refusal observed to carry guidance");
      }
      reqs.add(new Requirement(Level.LEVEL_3, "refusals carry honest, same-origin constructive guidance (section 3, SC-6)", gs, guideEv));
      List<String> proEv = new ArrayList<>();
      boolean proFailed = false;
      for (Seen s : limitedSuccesses) {
        boolean errors = s.fields().diagnostics().stream().anyMatch(d -> d.severity() == Diagnostic.Severity.ERROR);
        if (s.fields().limits().isEmpty()) {
          proFailed = true;
          proEv.add(s.where() + ": no RateLimit fields");
        } else if (errors) {
          proFailed = true;
          proEv.add(s.where() + ": malformed RateLimit fields");
        } else {
          proEv.add(s.where() + ": " + s.fields().dialects() + " " + s.fields().limits());
        }
      }
      Requirement.Status ps = limitedSuccesses.isEmpty() ? Requirement.Status.UNVERIFIED
          : proFailed ? Requirement.Status.FAIL : Requirement.Status.PASS;
      if (proEv.isEmpty()) {
        proEv.add("no success response from a limited endpoint observed");
      }
      reqs.add(new Requirement(Level.LEVEL_4, "success responses carry well-formed RateLimit fields (section 4)", ps, proEv));

      String declared = documentJson != null && documentJson.path("conformance").isTextual()
          ? documentJson.get("conformance").asText() : null;
      Level level;
      boolean anyLimits = !dialects.isEmpty() || refusal != null || seen.stream().anyMatch(Seen::refusal)
          || (document != null && !document.endpoints().isEmpty());
      if ("not-applicable".equals(declared) && !anyLimits) {
        level = Level.NOT_APPLICABLE;
      } else {
        level = Level.LEVEL_0;
        if (ns == Requirement.Status.PASS && rs != Requirement.Status.FAIL) {
          level = Level.LEVEL_1;
          if (ds == Requirement.Status.PASS) {
            level = Level.LEVEL_2;
            if (gs == Requirement.Status.PASS) {
              level = Level.LEVEL_3;
              if (ps == Requirement.Status.PASS) {
                level = Level.LEVEL_4;
              }
            }
          }
        }
      }
      if (declared != null) {
        try {
          Level d = Level.parse(declared);
          if (d.compareTo(level) > 0) {
            findings.add(new Finding(Finding.Severity.WARNING, "GB-CONFORMANCE", "Graceful Boundaries \"Self-Assertion and External Validation\"",
                "conformance", "declares " + declared + " but validates as level " + level.label()));
          }
        } catch (IllegalArgumentException e) {
          // The schema check already reported a conformance value outside the enumeration.
        }
      }
      return new Report(target, level, declared, dialects, reqs, findings, requests);
    }
  }

  static boolean sameOrigin(URI a, URI b) {
    return a.getScheme() != null && b.getScheme() != null && a.getScheme().equalsIgnoreCase(b.getScheme())
        && a.getHost() != null && b.getHost() != null && a.getHost().equalsIgnoreCase(b.getHost()) && port(a) == port(b);
  }

  private static int port(URI u) {
    return u.getPort() >= 0 ? u.getPort() : u.getScheme().equalsIgnoreCase("https") ? 443 : 80;
  }

  /** A reference that is a relative path (not scheme-relative) or an absolute URL of the base's origin. */
  static boolean sameOriginReference(String reference, URI base) {
    String r = reference.strip();
    if (r.startsWith("//") || r.startsWith("\\")) {
      return false;
    }
    try {
      URI u = new URI(r);
      if (!u.isAbsolute()) {
        return true;
      }
      return sameOrigin(u, base);
    } catch (URISyntaxException e) {
      return false;
    }
  }

  private static String describe(IOException e) {
    return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
  }

  private static String shorten(String s) {
    return s.length() > 120 ? s.substring(0, 117) + "..." : s;
  }

  /** Builds a {@link Checker}. */
  public static final class Builder {
    private final HttpClient http;
    private Ticker ticker = Ticker.system();
    private String limitsPath;
    private int probe;
    private String probePath;
    private Duration timeout = Duration.ofSeconds(10);
    private int maxEndpoints = 20;

    private Builder(HttpClient http) {
      this.http = Objects.requireNonNull(http, "http");
    }

    /** The clock that resolves HTTP-dates and epoch resets; exists for testing. */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /** The discovery path to use instead of the conventional ones; must start with {@code /}. */
    public Builder limitsPath(String path) {
      if (path == null || !path.startsWith("/")) {
        throw new IllegalArgumentException("limitsPath: expected a path starting with '/', got '" + path + "'");
      }
      this.limitsPath = path;
      return this;
    }

    /** Send at most {@code n} requests (0 to 10 000) to one endpoint to provoke a refusal; 0, the default, sends none. */
    public Builder probe(int n) {
      if (n < 0 || n > 10_000) {
        throw new IllegalArgumentException("probe: expected 0 to 10000 requests, got " + n);
      }
      this.probe = n;
      return this;
    }

    /** The endpoint to probe (a path); the first listed GET endpoint, or the target, by default. */
    public Builder probeEndpoint(String path) {
      if (path == null || !path.startsWith("/")) {
        throw new IllegalArgumentException("probeEndpoint: expected a path starting with '/', got '" + path + "'");
      }
      this.probePath = path;
      return this;
    }

    /** Per-request timeout, positive; 10 s by default. */
    public Builder timeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isZero() || timeout.isNegative()) {
        throw new IllegalArgumentException("timeout: expected a positive duration, got " + timeout);
      }
      this.timeout = timeout;
      return this;
    }

    /** Most listed endpoints requested, 0 to 1000; 20 by default. */
    public Builder maxEndpoints(int n) {
      if (n < 0 || n > 1000) {
        throw new IllegalArgumentException("maxEndpoints: expected 0 to 1000, got " + n);
      }
      this.maxEndpoints = n;
      return this;
    }

    public Checker build() {
      return new Checker(this);
    }
  }
}
