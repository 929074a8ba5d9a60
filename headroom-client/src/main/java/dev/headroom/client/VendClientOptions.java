package dev.headroom.client;

import dev.headroom.vend.format.VendBackoff;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * How the client treats vend calls and the vend rate-limit extension ({@code urn:vnd:ext:rate-limit},
 * seed 003), given to {@link HeadroomClient.Builder#vend(VendClientOptions)}.
 *
 * <ul>
 *   <li><b>Which requests are vend calls</b>: POST requests whose path is one of {@link #paths()}
 *       ({@code /vend} by default), or those {@link Builder#calls(Predicate)} selects. Every other
 *       request goes through the client exactly as without this option.
 *   <li><b>Pacing</b> (seed 003, "Proactive Throttling"): the extension data of each response
 *       ({@code limit}, {@code remaining}, {@code resets_in}, {@code window}, flat with
 *       {@code scope} or under {@code scopes}) becomes one budget per scope, named
 *       {@code vend:global}, {@code vend:service}, {@code vend:user} and
 *       {@code vend:function:<call.function>}; the next vend call waits as it would for RateLimit
 *       headers (a {@code function} budget paces only calls of that function, the others every
 *       vend call). Non-vend requests are not paced by them.
 *   <li><b>Precedence</b>: when a response carries extension data, its RateLimit and Retry-After
 *       headers are not read for budgets: the seed's HTTP mapping makes them a summary of the same
 *       counters (one scope of the data), and the data says which scope and function they belong
 *       to. A response without extension data (no declaration, or a server that sent none) is
 *       read by its headers as any response.
 *   <li><b>Refusals</b> (seed 003, "Handling RATE_LIMITED"): an error {@code RATE_LIMITED} in the
 *       envelope (with HTTP 429, or any status), or a 429 without a readable envelope, is a
 *       refusal. A vend call is a POST and not idempotent, so it is retried only when
 *       {@link Builder#retry(boolean)} is on; the wait before retry {@code n} (from 0) is
 *       {@code min(retry_after * 2^n, maxWait)} ({@link VendBackoff#waitTime}, seed 003, "Backoff
 *       Strategy"), where {@code retry_after} is {@code details.retry_after}, else the Retry-After
 *       header, else {@link VendBackoff#MIN_RETRY_AFTER}; never an immediate retry. After
 *       {@link #maxAttempts()} tries, or at once when retry is off, the call fails with
 *       {@link VendRateLimitedException}, which carries the parsed error.
 *   <li><b>Explicit extension</b>: with {@link Builder#declareExtension(boolean)} the client adds
 *       {@code {"urn": "urn:vnd:ext:rate-limit", "options": {}}} to the {@code extensions} of a
 *       request that does not declare it (vend-notes.md, "Extensions": a server sends data only
 *       for a declared extension).
 * </ul>
 *
 * <p>Bodies are read bounded by {@link #maxBodyBytes()}: a request body longer than that, or of
 * unknown length (a streaming publisher), is sent untouched and its function is not known (its
 * {@code function} budget then paces every vend call); a response body longer than that, or one the
 * caller's handler streams (an {@code InputStream}), is not read for extension data.
 *
 * <p>Immutable.
 */
public final class VendClientOptions {

  /** Default {@link #maxAttempts()}: the first try and three retries. */
  public static final int DEFAULT_MAX_ATTEMPTS = 4;

  /** Default {@link #maxBodyBytes()}: 64 KiB. */
  public static final int DEFAULT_MAX_BODY_BYTES = 64 * 1024;

  private static final VendClientOptions DEFAULTS = builder().build();

  private final Set<String> paths;
  private final Predicate<HttpRequest> calls;
  private final boolean retry;
  private final int maxAttempts;
  private final Duration maxWait;
  private final boolean declareExtension;
  private final int maxBodyBytes;

  private VendClientOptions(Builder b) {
    this.paths = b.paths;
    this.calls = b.calls;
    this.retry = b.retry;
    this.maxAttempts = b.maxAttempts;
    this.maxWait = b.maxWait;
    this.declareExtension = b.declareExtension;
    this.maxBodyBytes = b.maxBodyBytes;
  }

  /** POST to {@code /vend}; no retry; 4 attempts and a 5 minute {@code max_wait} once retry is on; no declaration added. */
  public static VendClientOptions defaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Whether the client treats this request as a vend call. */
  public boolean isVendCall(HttpRequest request) {
    if (calls != null) {
      return calls.test(request);
    }
    String path = request.uri().getRawPath();
    return "POST".equals(request.method()) && paths.contains(path == null || path.isEmpty() ? "/" : path);
  }

  /** The paths of vend endpoints (unused when {@link Builder#calls(Predicate)} was given). */
  public Set<String> paths() {
    return paths;
  }

  /** Whether refused vend calls are retried. */
  public boolean retry() {
    return retry;
  }

  /** Tries in all, the first included, when {@link #retry()} is on. */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** The seed's {@code max_wait}: the longest wait before one retry. */
  public Duration maxWait() {
    return maxWait;
  }

  /** Whether the client adds the extension's declaration to vend requests lacking it. */
  public boolean declareExtension() {
    return declareExtension;
  }

  /** The largest request or response body the client reads. */
  public int maxBodyBytes() {
    return maxBodyBytes;
  }

  @Override
  public String toString() {
    return "VendClientOptions{paths=" + (calls != null ? "custom" : paths) + ", retry=" + retry + ", maxAttempts="
        + maxAttempts + ", maxWait=" + maxWait + ", declareExtension=" + declareExtension + ", maxBodyBytes="
        + maxBodyBytes + "}";
  }

  /** Builds {@link VendClientOptions}; every setter validates its argument and names it when it refuses it. */
  public static final class Builder {
    private Set<String> paths = Set.of("/vend");
    private Predicate<HttpRequest> calls;
    private boolean retry;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private Duration maxWait = VendBackoff.DEFAULT_MAX_WAIT;
    private boolean declareExtension;
    private int maxBodyBytes = DEFAULT_MAX_BODY_BYTES;

    private Builder() {}

    /** POST requests to these paths (each starting with {@code /}) are vend calls. */
    public Builder paths(String... paths) {
      Objects.requireNonNull(paths, "paths");
      if (paths.length == 0) {
        throw new IllegalArgumentException("paths: expected at least one path such as \"/vend\", got none");
      }
      for (String p : paths) {
        if (p == null || !p.startsWith("/")) {
          throw new IllegalArgumentException("paths: expected paths starting with \"/\", got "
              + (p == null ? "null" : "\"" + p + "\""));
        }
      }
      this.paths = Set.of(paths);
      this.calls = null;
      return this;
    }

    /** Selects vend calls by any rule instead of {@link #paths(String...)}. */
    public Builder calls(Predicate<HttpRequest> calls) {
      this.calls = Objects.requireNonNull(calls, "calls");
      return this;
    }

    /** Whether refused vend calls are retried with the seed's backoff; off by default (POST is not idempotent). */
    public Builder retry(boolean retry) {
      this.retry = retry;
      return this;
    }

    /** Tries in all, from 1 to 100; {@value VendClientOptions#DEFAULT_MAX_ATTEMPTS} by default. */
    public Builder maxAttempts(int n) {
      if (n < 1 || n > 100) {
        throw new IllegalArgumentException("maxAttempts: expected 1 to 100, got " + n);
      }
      this.maxAttempts = n;
      return this;
    }

    /** The seed's {@code max_wait}, positive; {@link VendBackoff#DEFAULT_MAX_WAIT} (5 minutes) by default. */
    public Builder maxWait(Duration maxWait) {
      Objects.requireNonNull(maxWait, "maxWait");
      if (maxWait.isNegative() || maxWait.isZero()) {
        throw new IllegalArgumentException("maxWait: expected a positive duration (an immediate retry is not allowed), got "
            + maxWait);
      }
      this.maxWait = maxWait;
      return this;
    }

    /** Whether to add the extension's declaration to vend requests that lack it; off by default. */
    public Builder declareExtension(boolean declare) {
      this.declareExtension = declare;
      return this;
    }

    /** The largest body read, from 1 KiB to 16 MiB. */
    public Builder maxBodyBytes(int max) {
      if (max < 1024 || max > (16 << 20)) {
        throw new IllegalArgumentException("maxBodyBytes: expected 1024 to 16777216, got " + max);
      }
      this.maxBodyBytes = max;
      return this;
    }

    public VendClientOptions build() {
      return new VendClientOptions(this);
    }
  }
}
