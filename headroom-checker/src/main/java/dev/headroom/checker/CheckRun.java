package dev.headroom.checker;

import dev.headroom.Ticker;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitFields;
import dev.headroom.http.headers.VendorDialect;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The state of one {@link Checker#check}: the settings, every exchange seen, the findings, and one
 * instance of each check, which add to them. {@link #run} orders the requests; {@link #get} sends
 * one and passes the response to {@link FieldCheck} and, when it is not a success, {@link BodyCheck}.
 *
 * <p>Not thread-safe; one per check.
 */
final class CheckRun {
  final HttpClient http;
  final Ticker ticker;
  final String limitsPath;
  final int probe;
  final String probePath;
  final Duration timeout;
  final int maxEndpoints;
  final boolean checkCloaking;
  final FieldCheck fieldCheck = new FieldCheck(this);
  final BodyCheck bodyCheck = new BodyCheck(this);
  final DiscoveryCheck discovery = new DiscoveryCheck(this);
  final RefusalCheck refusals = new RefusalCheck(this);
  final GuidanceCheck guidance = new GuidanceCheck(this);
  final CloakingCheck cloaking = new CloakingCheck(this);
  final Verdict verdict = new Verdict(this);

  final URI target;
  final List<Finding> findings = new ArrayList<>();
  final List<Seen> seen = new ArrayList<>();
  final Map<Seen, Optional<Refusal>> read = new IdentityHashMap<>();
  final Set<HeaderDialect> dialects = EnumSet.noneOf(HeaderDialect.class);
  final Set<VendorDialect> vendors = EnumSet.noneOf(VendorDialect.class);
  /** What was read of each budget (by dialect and name), from the last response that reported it. */
  final Map<String, String> readings = new LinkedHashMap<>();
  final List<Seen> limitedSuccesses = new ArrayList<>();
  int requests;

  CheckRun(Checker checker, URI target) {
    this.http = checker.http;
    this.ticker = checker.ticker;
    this.limitsPath = checker.limitsPath;
    this.probe = checker.probe;
    this.probePath = checker.probePath;
    this.timeout = checker.timeout;
    this.maxEndpoints = checker.maxEndpoints;
    this.checkCloaking = checker.cloaking;
    this.target = target;
  }

  Report run() throws IOException, InterruptedException {
    Seen first = get(target, true);
    discovery.discover(first);
    if (checkCloaking) {
      cloaking.compare(first);
      if (discovery.documentSeen != null) {
        cloaking.compare(discovery.documentSeen);
      }
    }
    List<URI> endpoints = discovery.endpoints();
    for (URI u : endpoints) {
      Seen s = get(u, false);
      if (s != null && s.success()) {
        limitedSuccesses.add(s);
        discovery.checkAccuracy(s);
      }
    }
    if (endpoints.isEmpty() && first.success()) {
      limitedSuccesses.add(first);
    }
    get(target.resolve(Checker.NOT_FOUND_PATH), false);
    if (probe > 0) {
      refusals.probe(endpoints);
    }
    return verdict.report();
  }

  // ---- requests

  /** The User-Agent of every request but the cloaking check's. */
  static final String USER_AGENT = "headroom-check";

  /** GETs a URL and checks what came back; null when it could not be reached (and was not the target). */
  Seen get(URI uri, boolean mustReach) throws IOException, InterruptedException {
    return get(uri, mustReach, USER_AGENT);
  }

  /** {@link #get(URI, boolean)} as another client ({@code User-Agent}). */
  Seen get(URI uri, boolean mustReach, String userAgent) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET()
        .header("Accept", "application/json, application/problem+json;q=0.9, */*;q=0.1")
        .header("User-Agent", userAgent).build();
    requests++;
    HttpResponse<InputStream> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    } catch (IOException e) {
      if (mustReach) {
        throw new IOException("target " + uri + " unreachable: " + Checker.describe(e), e);
      }
      findings.add(new Finding(Finding.Severity.WARNING, "HTTP", "RFC 9110", "GET " + uri.getRawPath(),
          "no response: " + Checker.describe(e)));
      return null;
    }
    byte[] body;
    try (InputStream in = response.body()) {
      body = in.readNBytes(Checker.MAX_BODY_BYTES);
    }
    RateLimitFields fields = RateLimitFields.parse(response.headers(), ticker.instant());
    Seen s = new Seen("GET", uri, response.statusCode(), response.headers(), body, fields);
    seen.add(s);
    fieldCheck.checkFields(s);
    if (s.status() >= 400) {
      bodyCheck.checkNonSuccessBody(s);
    }
    return s;
  }
}
