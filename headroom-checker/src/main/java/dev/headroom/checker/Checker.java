package dev.headroom.checker;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.Ticker;
import dev.headroom.http.DiscoveryPaths;
import dev.headroom.http.IoFailure;
import dev.headroom.http.headers.RateLimitFields;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

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
 *       honest: every same-origin link of the refusal ({@code cachedResultUrl},
 *       {@code alternativeEndpoint}, {@code upgradeUrl}, {@code humanUrl}) is requested once and
 *       must not be a 404 or 410.
 *   <li>Text that instructs agents in any non-success body (SC-16, a warning).
 *   <li>Both conventional discovery paths, which must publish the same document (section 1).
 *   <li>Absurd field values: a reset over a year, or beyond its policy's window (draft-09 sections
 *       3.1.3 and 4.1.2).
 *   <li>With {@link Builder#cloaking(boolean)}, content cloaking (SC-9): the target and the
 *       discovery document as a browser sees them against what the checker was sent.
 * </ul>
 *
 * <h2>How many requests</h2>
 * The target once, each discovery path (all of the conventional ones), at most {@link Builder#maxEndpoints(int)}
 * listed GET endpoints once each, one request to a path that does not exist (to see a 404 body),
 * at most {@link Builder#probe(int)} requests to the probed endpoint (stopping at the first
 * refusal), each same-origin guidance URL of that refusal once, and with cloaking two more.
 *
 * <h2>Who owns what</h2>
 * This class is the entry point (settings, {@link #check}, the origin rules the checks share);
 * {@link CheckRun} holds one check's state and sends the requests; one class per concern adds
 * findings and evidence: {@link DiscoveryCheck} (discovery document, endpoints, accuracy),
 * {@link FieldCheck} (RateLimit fields), {@link BodyCheck} (non-success bodies), {@link RefusalCheck}
 * (the probe and its refusal), {@link GuidanceCheck} (guidance links), {@link CloakingCheck} (SC-9); {@link Verdict} computes the
 * requirements and the level that make the {@link Report}.
 *
 * <p>Immutable and thread-safe; each {@link #check} is independent.
 */
public final class Checker {

  /** Discovery paths tried when none is given. */
  public static final List<String> DISCOVERY_PATHS = DiscoveryPaths.ALL;

  /** A path no service is expected to have, requested to see a 404 body. */
  public static final String NOT_FOUND_PATH = "/.headroom-check/does-not-exist";

  /** Largest body read. */
  public static final int MAX_BODY_BYTES = 1 << 20;

  /** Reads discovery documents and refusal bodies as trees. */
  static final ObjectMapper MAPPER = new ObjectMapper();

  final HttpClient http;
  final Ticker ticker;
  final String limitsPath;
  final int probe;
  final String probePath;
  final Duration timeout;
  final int maxEndpoints;
  final boolean cloaking;

  private Checker(Builder b) {
    this.http = b.http;
    this.ticker = b.ticker;
    this.limitsPath = b.limitsPath;
    this.probe = b.probe;
    this.probePath = b.probePath;
    this.timeout = b.timeout;
    this.maxEndpoints = b.maxEndpoints;
    this.cloaking = b.cloaking;
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
    return new CheckRun(this, target).run();
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

  static String describe(IOException e) {
    return IoFailure.inWords(e);
  }

  static String shorten(String s) {
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
    private boolean cloaking;

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

    /**
     * Also request the target and the discovery document as a browser ({@code User-Agent}) and
     * compare with what the checker was sent (Graceful Boundaries SC-9, content cloaking); off by
     * default. Two more requests.
     */
    public Builder cloaking(boolean cloaking) {
      this.cloaking = cloaking;
      return this;
    }

    public Checker build() {
      return new Checker(this);
    }
  }
}
