package dev.headroom.http.body;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * One non-success response body that is at once RFC 9457 problem details and a Graceful
 * Boundaries structured refusal (Graceful Boundaries, "RFC 9457 profile"): an RFC
 * 9457 client reads {@code type}, {@code title}, {@code status}, {@code detail}, {@code instance};
 * a Graceful Boundaries agent reads {@code error}, {@code detail}, {@code why} and, on a 429,
 * {@code limit} and {@code retryAfterSeconds}; neither breaks on the other's members.
 *
 * <h2>Members, in the order they are written</h2>
 *
 * <ul>
 *   <li>RFC 9457 section 3.1: {@code type} (absent means {@code about:blank}), {@code title},
 *       {@code status}, {@code detail}, {@code instance}.
 *   <li>Graceful Boundaries core (spec section 6): {@code error}, {@code why}; limit class (section
 *       2): {@code limit}, {@code retryAfterSeconds}, {@code limitId}, {@code limitType},
 *       {@code scope}, {@code windowResetAt}.
 *   <li>draft-ietf-httpapi-ratelimit-headers-09 section 5: {@code violated-policies}.
 *   <li>Constructive guidance (section 3): {@code cached}, {@code cachedResultUrl},
 *       {@code alternativeEndpoint}, {@code upgradeUrl}, {@code humanUrl}.
 *   <li>Class fields (section 6): input {@code field}, {@code expected}, {@code allowedMethods};
 *       access {@code authUrl}; not found {@code scanAvailable}, {@code scanUrl}; availability
 *       {@code statusUrl}.
 *   <li>Any further extension members.
 * </ul>
 *
 * <h2>Built refusals are conformant; read refusals are whatever arrived</h2>
 *
 * <p>{@link Builder#build()} enforces the spec: the core fields on every status, {@code limit} and
 * {@code retryAfterSeconds} on 429, {@code allowedMethods} on 405, and the security
 * considerations a program can check (SC-2, SC-3, SC-6, SC-16; see {@code OperatorTextChecks}). It refuses
 * anything else with a message naming the field, the value and what is expected. A refusal read
 * by {@link RefusalReader} is built leniently instead: members of the wrong type are dropped, and
 * {@link #issues()} lists what was dropped and which requirements the body does not meet.
 *
 * <h2>Who owns what</h2>
 *
 * <p>This class is the value (its members, equality, {@link #toBuilder()}) and its {@link Builder}'s
 * setters; {@link RefusalRules} holds the rules {@link Builder#build()} enforces and the issues a
 * read refusal reports; {@link RefusalJson} writes the JSON; {@link RefusalReader} reads it back;
 * {@link RefusalHtml} renders the HTML form; {@link ReasonPhrase} gives the about:blank title.
 *
 * <p>Immutable and thread-safe.
 */
public final class Refusal {

  /** The RFC 9457 media type. */
  public static final String PROBLEM_JSON = "application/problem+json";

  /** Member names with a meaning of their own; {@link #extensions()} never holds these. */
  public static final Set<String> MEMBERS = Set.of("type", "title", "status", "detail", "instance", "error", "why",
      "limit", "retryAfterSeconds", "limitId", "limitType", "scope", "windowResetAt", "violated-policies", "cached",
      "cachedResultUrl", "alternativeEndpoint", "upgradeUrl", "humanUrl", "field", "expected", "allowedMethods",
      "authUrl", "scanAvailable", "scanUrl", "statusUrl");

  /** Most extension members a refusal carries. */
  public static final int MAX_EXTENSIONS = 32;

  // package-private for RefusalJson (the writer) and RefusalRules; final and never exposed mutable
  final int status;
  final String type;
  final String title;
  final String detail;
  final String instance;
  final String error;
  final String why;
  final String limit;
  final Long retryAfterSeconds;
  final String limitId;
  final String limitType;
  final String scope;
  final Instant windowResetAt;
  final List<String> violatedPolicies;
  final Boolean cached;
  final String cachedResultUrl;
  final String alternativeEndpoint;
  final String upgradeUrl;
  final String humanUrl;
  final String field;
  final String expected;
  final List<String> allowedMethods;
  final String authUrl;
  final Boolean scanAvailable;
  final String scanUrl;
  final String statusUrl;
  final Map<String, Object> extensions;
  final List<String> issues;

  private Refusal(Builder b, List<String> issues) {
    this.status = b.status;
    this.type = b.type;
    this.title = b.title;
    this.detail = b.detail;
    this.instance = b.instance;
    this.error = b.error;
    this.why = b.why;
    this.limit = b.limit;
    this.retryAfterSeconds = b.retryAfterSeconds;
    this.limitId = b.limitId;
    this.limitType = b.limitType;
    this.scope = b.scope;
    this.windowResetAt = b.windowResetAt;
    this.violatedPolicies = List.copyOf(b.violatedPolicies);
    this.cached = b.cached;
    this.cachedResultUrl = b.cachedResultUrl;
    this.alternativeEndpoint = b.alternativeEndpoint;
    this.upgradeUrl = b.upgradeUrl;
    this.humanUrl = b.humanUrl;
    this.field = b.field;
    this.expected = b.expected;
    this.allowedMethods = b.allowedMethods == null ? null : List.copyOf(b.allowedMethods);
    this.authUrl = b.authUrl;
    this.scanAvailable = b.scanAvailable;
    this.scanUrl = b.scanUrl;
    this.statusUrl = b.statusUrl;
    this.extensions = Collections.unmodifiableMap(new LinkedHashMap<>(b.extensions));
    this.issues = List.copyOf(issues);
  }

  /** Starts a refusal for an HTTP status from 400 to 599. */
  public static Builder builder(int status) {
    return new Builder(status);
  }

  /** A builder holding this refusal's values, to derive a changed copy (then validated again). */
  public Builder toBuilder() {
    Builder b = new Builder(status);
    b.type = type;
    b.title = title;
    b.detail = detail;
    b.instance = instance;
    b.error = error;
    b.why = why;
    b.limit = limit;
    b.retryAfterSeconds = retryAfterSeconds;
    b.limitId = limitId;
    b.limitType = limitType;
    b.scope = scope;
    b.windowResetAt = windowResetAt;
    b.violatedPolicies = new ArrayList<>(violatedPolicies);
    b.cached = cached;
    b.cachedResultUrl = cachedResultUrl;
    b.alternativeEndpoint = alternativeEndpoint;
    b.upgradeUrl = upgradeUrl;
    b.humanUrl = humanUrl;
    b.field = field;
    b.expected = expected;
    b.allowedMethods = allowedMethods == null ? null : new ArrayList<>(allowedMethods);
    b.authUrl = authUrl;
    b.scanAvailable = scanAvailable;
    b.scanUrl = scanUrl;
    b.statusUrl = statusUrl;
    b.extensions.putAll(extensions);
    return b;
  }

  /** The HTTP status code. */
  public int status() {
    return status;
  }

  /** The problem type URI; empty means {@code about:blank} (RFC 9457 section 3.1.1). */
  public Optional<String> type() {
    return Optional.ofNullable(type);
  }

  /** The problem type, when it is one of the draft's. */
  public Optional<ProblemType> problemType() {
    return type == null ? Optional.empty() : ProblemType.fromUri(type);
  }

  /** The short summary of the problem type. */
  public Optional<String> title() {
    return Optional.ofNullable(title);
  }

  /** The human-readable explanation of this occurrence (shared by both specifications). */
  public Optional<String> detail() {
    return Optional.ofNullable(detail);
  }

  /** A URI reference identifying this occurrence. */
  public Optional<String> instance() {
    return Optional.ofNullable(instance);
  }

  /** The stable snake_case error category. */
  public Optional<String> error() {
    return Optional.ofNullable(error);
  }

  /** Why the limit exists. */
  public Optional<String> why() {
    return Optional.ofNullable(why);
  }

  /** The limit in human-readable form. */
  public Optional<String> limit() {
    return Optional.ofNullable(limit);
  }

  /** Seconds until the caller may retry. */
  public OptionalLong retryAfterSeconds() {
    return retryAfterSeconds == null ? OptionalLong.empty() : OptionalLong.of(retryAfterSeconds);
  }

  /** The stable identifier of the limit exceeded. */
  public Optional<String> limitId() {
    return Optional.ofNullable(limitId);
  }

  /** The type of the limit exceeded, such as {@code ip-rate}. */
  public Optional<String> limitType() {
    return Optional.ofNullable(limitType);
  }

  /** Who the limit applies to: {@code ip}, {@code key}, {@code user}, {@code resource}, {@code global}. */
  public Optional<String> scope() {
    return Optional.ofNullable(scope);
  }

  /** When the caller may retry, as an instant. */
  public Optional<Instant> windowResetAt() {
    return Optional.ofNullable(windowResetAt);
  }

  /** The names of the policies whose quota was exceeded; empty when none is named. */
  public List<String> violatedPolicies() {
    return violatedPolicies;
  }

  /** Whether a cached result is available. */
  public Optional<Boolean> cached() {
    return Optional.ofNullable(cached);
  }

  /** Where to get a cached result (relative or same-origin). */
  public Optional<String> cachedResultUrl() {
    return Optional.ofNullable(cachedResultUrl);
  }

  /** Another endpoint that may serve the need (relative or same-origin). */
  public Optional<String> alternativeEndpoint() {
    return Optional.ofNullable(alternativeEndpoint);
  }

  /** Where to get higher limits (may be cross-origin; for browsers). */
  public Optional<String> upgradeUrl() {
    return Optional.ofNullable(upgradeUrl);
  }

  /** A browser-friendly URL for human follow-up (may be cross-origin). */
  public Optional<String> humanUrl() {
    return Optional.ofNullable(humanUrl);
  }

  /** The input field that failed validation. */
  public Optional<String> field() {
    return Optional.ofNullable(field);
  }

  /** What valid input looks like. */
  public Optional<String> expected() {
    return Optional.ofNullable(expected);
  }

  /** The methods the resource accepts (405). */
  public Optional<List<String>> allowedMethods() {
    return Optional.ofNullable(allowedMethods);
  }

  /** Where to obtain credentials. */
  public Optional<String> authUrl() {
    return Optional.ofNullable(authUrl);
  }

  /** Whether the caller can create the missing resource. */
  public Optional<Boolean> scanAvailable() {
    return Optional.ofNullable(scanAvailable);
  }

  /** Where to create the missing resource (relative or same-origin). */
  public Optional<String> scanUrl() {
    return Optional.ofNullable(scanUrl);
  }

  /** A status page or health endpoint. */
  public Optional<String> statusUrl() {
    return Optional.ofNullable(statusUrl);
  }

  /**
   * Other members, in order: values are {@link String}, {@link Boolean}, {@link Long},
   * {@link BigInteger}, {@link Double}, {@link BigDecimal}, {@code null}, and unmodifiable
   * {@link List}s and {@link Map}s of these.
   */
  public Map<String, Object> extensions() {
    return extensions;
  }

  /**
   * For a refusal read from a body: what the reader dropped and which Graceful Boundaries
   * requirements the body does not meet (missing {@code error}, {@code detail} or {@code why};
   * on a 429, missing {@code limit} or {@code retryAfterSeconds}). Always empty for a built
   * refusal.
   */
  public List<String> issues() {
    return issues;
  }

  /** Whether the body meets the Graceful Boundaries Level 1 requirements for its status. */
  public boolean isConformant() {
    return issues.isEmpty();
  }

  /** The JSON text, UTF-8 encoded; to be sent as {@value #PROBLEM_JSON} or {@code application/json}. */
  public byte[] toJsonBytes() {
    ByteArrayOutputStream out = new ByteArrayOutputStream(512);
    try (JsonGenerator g = RefusalJson.JSON.createGenerator(out)) {
      RefusalJson.write(g, this);
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory cannot fail", e);
    }
    return out.toByteArray();
  }

  /** The JSON text. */
  public String toJson() {
    return new String(toJsonBytes(), StandardCharsets.UTF_8);
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Refusal)) {
      return false;
    }
    Refusal r = (Refusal) o;
    return status == r.status && Objects.equals(type, r.type) && Objects.equals(title, r.title)
        && Objects.equals(detail, r.detail) && Objects.equals(instance, r.instance) && Objects.equals(error, r.error)
        && Objects.equals(why, r.why) && Objects.equals(limit, r.limit)
        && Objects.equals(retryAfterSeconds, r.retryAfterSeconds) && Objects.equals(limitId, r.limitId)
        && Objects.equals(limitType, r.limitType) && Objects.equals(scope, r.scope)
        && Objects.equals(windowResetAt, r.windowResetAt) && violatedPolicies.equals(r.violatedPolicies)
        && Objects.equals(cached, r.cached) && Objects.equals(cachedResultUrl, r.cachedResultUrl)
        && Objects.equals(alternativeEndpoint, r.alternativeEndpoint) && Objects.equals(upgradeUrl, r.upgradeUrl)
        && Objects.equals(humanUrl, r.humanUrl) && Objects.equals(field, r.field)
        && Objects.equals(expected, r.expected) && Objects.equals(allowedMethods, r.allowedMethods)
        && Objects.equals(authUrl, r.authUrl) && Objects.equals(scanAvailable, r.scanAvailable)
        && Objects.equals(scanUrl, r.scanUrl) && Objects.equals(statusUrl, r.statusUrl)
        && extensions.equals(r.extensions);
  }

  @Override
  public int hashCode() {
    return Objects.hash(status, type, error, detail, why, retryAfterSeconds, violatedPolicies);
  }

  @Override
  public String toString() {
    return "Refusal" + toJson();
  }

  /**
   * Builds a {@link Refusal}. Setters take the value as sent; {@link #build()} validates the whole.
   * Not thread-safe.
   */
  public static final class Builder {
    // package-private for RefusalRules, which validates them at build()
    final int status;
    String type;
    String title;
    String detail;
    String instance;
    String error;
    String why;
    String limit;
    Long retryAfterSeconds;
    String limitId;
    String limitType;
    String scope;
    Instant windowResetAt;
    List<String> violatedPolicies = new ArrayList<>();
    Boolean cached;
    String cachedResultUrl;
    String alternativeEndpoint;
    String upgradeUrl;
    String humanUrl;
    String field;
    String expected;
    List<String> allowedMethods;
    String authUrl;
    Boolean scanAvailable;
    String scanUrl;
    String statusUrl;
    URI origin;
    final Map<String, Object> extensions = new LinkedHashMap<>();

    private Builder(int status) {
      this.status = status;
    }

    /** The problem type URI; absent means {@code about:blank}. */
    public Builder type(String type) {
      this.type = type;
      return this;
    }

    /** One of the draft's problem types: sets {@code type} and {@code title}. */
    public Builder type(ProblemType type) {
      this.type = type.uri();
      this.title = type.title();
      return this;
    }

    /** The problem title; defaults to the status's reason phrase when the type is about:blank. */
    public Builder title(String title) {
      this.title = title;
      return this;
    }

    /** Required: what happened and how to proceed; on 429, the wait in words. */
    public Builder detail(String detail) {
      this.detail = detail;
      return this;
    }

    /** A URI reference for this occurrence. */
    public Builder instance(String instance) {
      this.instance = instance;
      return this;
    }

    /** Required: the snake_case error category. */
    public Builder error(String error) {
      this.error = error;
      return this;
    }

    /** Required: the reason the limit or rule exists, as a category, never a mechanism. */
    public Builder why(String why) {
      this.why = why;
      return this;
    }

    /** Required on 429: the limit in concrete terms. */
    public Builder limit(String limit) {
      this.limit = limit;
      return this;
    }

    /** Required on 429: whole seconds until a retry can succeed, at least 0. */
    public Builder retryAfterSeconds(long seconds) {
      this.retryAfterSeconds = seconds;
      return this;
    }

    /** The stable id of the limit exceeded. */
    public Builder limitId(String limitId) {
      this.limitId = limitId;
      return this;
    }

    /** The type of the limit exceeded. */
    public Builder limitType(LimitType limitType) {
      this.limitType = limitType == null ? null : limitType.token();
      return this;
    }

    /** Who the limit applies to: {@code ip}, {@code key}, {@code user}, {@code resource}, {@code global}. */
    public Builder scope(String scope) {
      this.scope = scope;
      return this;
    }

    /** When a retry can succeed; sent in ISO 8601 at whole seconds. */
    public Builder windowResetAt(Instant windowResetAt) {
      this.windowResetAt = windowResetAt == null ? null : windowResetAt.truncatedTo(ChronoUnit.SECONDS);
      return this;
    }

    /** The names of the policies whose quota was exceeded (draft-09 section 5). */
    public Builder violatedPolicies(List<String> names) {
      this.violatedPolicies = new ArrayList<>(names);
      return this;
    }

    /** Whether a cached result is available. */
    public Builder cached(Boolean cached) {
      this.cached = cached;
      return this;
    }

    /** Where to get a cached result: relative or same-origin (SC-6). */
    public Builder cachedResultUrl(String url) {
      this.cachedResultUrl = url;
      return this;
    }

    /** Another endpoint that may serve the need: relative or same-origin (SC-6). */
    public Builder alternativeEndpoint(String url) {
      this.alternativeEndpoint = url;
      return this;
    }

    /** Where to get higher limits; any http(s) URL. */
    public Builder upgradeUrl(String url) {
      this.upgradeUrl = url;
      return this;
    }

    /** A page for human follow-up; any http(s) URL. */
    public Builder humanUrl(String url) {
      this.humanUrl = url;
      return this;
    }

    /** Input class: the field that failed. */
    public Builder field(String field) {
      this.field = field;
      return this;
    }

    /** Input class: what valid input looks like, in positive terms (SC-3). */
    public Builder expected(String expected) {
      this.expected = expected;
      return this;
    }

    /** 405: the methods accepted. Required on 405. */
    public Builder allowedMethods(List<String> methods) {
      this.allowedMethods = methods == null ? null : new ArrayList<>(methods);
      return this;
    }

    /** Access class: where to obtain credentials. */
    public Builder authUrl(String url) {
      this.authUrl = url;
      return this;
    }

    /** Not-found class: whether the caller can create the resource. */
    public Builder scanAvailable(Boolean scanAvailable) {
      this.scanAvailable = scanAvailable;
      return this;
    }

    /** Not-found class: where to create the resource: relative or same-origin (SC-6). */
    public Builder scanUrl(String url) {
      this.scanUrl = url;
      return this;
    }

    /** Availability class: a status page. */
    public Builder statusUrl(String url) {
      this.statusUrl = url;
      return this;
    }

    /**
     * The origin that same-origin absolute guidance URLs must share, such as
     * {@code https://api.example.com}; without it only relative guidance URLs are accepted. Not
     * sent.
     */
    public Builder origin(URI origin) {
      this.origin = origin;
      return this;
    }

    /**
     * An extension member. The value must be a String, Boolean, Integer, Long, BigInteger, Double,
     * BigDecimal, null, or a List or Map (String keys) of these.
     */
    public Builder extension(String name, Object value) {
      extensions.put(name, value);
      return this;
    }

    Builder putExtension(String name, Object value) {
      extensions.put(name, value);
      return this;
    }

    Builder retryAfterSecondsRaw(Long seconds) {
      this.retryAfterSeconds = seconds;
      return this;
    }

    Builder limitTypeRaw(String token) {
      this.limitType = token;
      return this;
    }

    Builder windowResetAtRaw(Instant instant) {
      this.windowResetAt = instant;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws IllegalArgumentException naming the field, the value and what is expected
     */
    public Refusal build() {
      RefusalRules.check(this);
      return new Refusal(this, List.of());
    }

    /** For {@link RefusalReader}: a refusal of whatever arrived, with its issues. */
    Refusal buildRead(List<String> readIssues) {
      List<String> issues = new ArrayList<>(readIssues);
      RefusalRules.readIssues(this, issues);
      return new Refusal(this, issues);
    }
  }
}
