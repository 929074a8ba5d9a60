package dev.headroom.client;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.RetryAfter;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalParseException;
import dev.headroom.http.body.RefusalReader;
import dev.headroom.http.headers.RateLimitFields;
import dev.headroom.http.headers.VendorDialect;
import dev.headroom.vend.format.VendBackoff;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One request and the response it got, as the client's interceptors see it: the response, its
 * parsed RateLimit fields and, for a refusal, the refusal body.
 *
 * <p>Retry-After comes from the field, or, for an HTML refusal without the field, from its
 * {@code <meta name="retry-after">}.
 *
 * <p>A response served from a cache ({@code Age} greater than zero) has its RateLimit fields and
 * Retry-After ignored, as draft-ietf-httpapi-ratelimit-headers-09 section 7.3 advises: they
 * describe someone else's past. A refusal is what {@link ClientBudget#isRefusal} says (a 429, a 503
 * with Retry-After, a 403 that says it is a rate limit); its body was read
 * (at most {@link RefusalReader#DEFAULT_MAX_BYTES} bytes) instead of being handed to the caller's
 * body handler.
 *
 * <p>Times a server states as instants (a Retry-After HTTP-date, an {@code X-RateLimit-Reset} in
 * epoch seconds, milliseconds or as an HTTP-date) are read against the response's own {@code Date}
 * field when it has a valid one, not against the client's clock: both are the server's clock, so
 * their difference is the wait the server meant whatever the two clocks disagree by
 * (draft-ietf-httpapi-ratelimit-headers-09 section 7: a client "MAY ... use other information
 * (e.g. the "Date" response header field ...) to better estimate the reset parameter moment
 * intended by the server"). The wait then runs from the receipt: {@code Date} is truncated to the
 * second and precedes the receipt, so {@code receipt + (instant - Date)} is never earlier than the
 * server's instant, just as {@code receipt + t} is never earlier than a relative reset, which
 * {@code Date} leaves alone. Without a valid {@code Date}, the client's clock is the reference.
 * Either way the wait is bounded by {@link Ceilings}.
 *
 * <p>Immutable and thread-safe.
 */
public final class Exchange {

  private static final RateLimitFields NONE = RateLimitFields.parse(Map.of(), Instant.EPOCH);

  private final HttpRequest request;
  private final HttpResponse<?> response;
  private final RateLimitFields fields;
  private final boolean fromCache;
  private final boolean refused;
  private final Refusal refusal;
  private final Duration retryAfter;
  private final Instant receivedAt;
  /** For a vend call: the client's bounded copy of a body handed to the caller's handler. */
  private byte[] bodyCopy;
  /** For a vend call: what its body said about limits (see {@link VendReading}). */
  private VendReading vend;
  /** Whether pacing sent the request to ask a budget that may be spent (see {@link #asked()}). */
  private boolean asked;

  private Exchange(HttpRequest request, HttpResponse<?> response, RateLimitFields fields, boolean fromCache,
      boolean refused, Refusal refusal, Duration retryAfter, Instant receivedAt) {
    this.request = request;
    this.response = response;
    this.fields = fields;
    this.fromCache = fromCache;
    this.refused = refused;
    this.refusal = refusal;
    this.retryAfter = retryAfter;
    this.receivedAt = receivedAt;
  }

  /**
   * An exchange for a response received at {@code receivedAt} (from the client's ticker). A body of
   * a refusal read by the client is parsed as problem details / Graceful Boundaries.
   */
  public static Exchange of(HttpRequest request, HttpResponse<?> response, Instant receivedAt) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(response, "response");
    Objects.requireNonNull(receivedAt, "receivedAt");
    boolean cached = isFromCache(response);
    RateLimitFields fields = cached ? NONE : RateLimitFields.parse(response.headers(), serverNow(response, receivedAt));
    Duration retryAfter = fields.retryAfter().map(RetryAfter::delay).orElse(null);
    int status = response.statusCode();
    boolean refused = ClientBudget.isRefusal(status, response.headers().map());
    Refusal refusal = null;
    if (refused && response.body() instanceof RefusalBody) {
      byte[] bytes = ((RefusalBody) response.body()).bytes();
      if (bytes.length > 0) {
        try {
          refusal = RefusalReader.defaults().read(status, bytes);
        } catch (RefusalParseException e) {
          // Not problem details (an HTML or plain-text refusal): the status and the fields still say enough.
          refusal = null;
        }
      }
    }
    if (refused && retryAfter == null && !cached && response.body() instanceof RefusalBody) {
      retryAfter = htmlRetryAfter(response, (RefusalBody) response.body());
    }
    if (refused && !cached && response.body() instanceof RefusalBody && fields.vendors().contains(VendorDialect.DISCORD)) {
      retryAfter = discordRetryAfter((RefusalBody) response.body()).orElse(retryAfter);
    }
    return new Exchange(request, response, fields, cached, refused, refusal, retryAfter, receivedAt);
  }

  private static final Pattern META_RETRY_AFTER = Pattern.compile(
      "<meta\\s+name=[\"']retry-after[\"']\\s+content=[\"']([0-9]{1,10})[\"']", Pattern.CASE_INSENSITIVE);

  /**
   * An HTML refusal without Retry-After may carry the wait as {@code <meta name="retry-after"
   * content="N">} (Graceful Boundaries section 2, HTML 429 responses).
   */
  private static Duration htmlRetryAfter(HttpResponse<?> response, RefusalBody body) {
    String type = response.headers().firstValue("Content-Type").orElse("").toLowerCase(Locale.ROOT);
    if (!type.startsWith("text/html")) {
      return null;
    }
    Matcher m = META_RETRY_AFTER.matcher(new String(body.bytes(), StandardCharsets.UTF_8));
    return m.find() ? Duration.ofSeconds(Long.parseLong(m.group(1))) : null;
  }

  /** The longest wait a Discord body may ask for: what Retry-After's own ceiling allows the client to read. */
  private static final double MAX_BODY_SECONDS = 1e9;

  /**
   * Discord's 429 body, {@code {"retry_after": 1.234, "global": false}}: the wait in seconds with
   * millisecond precision, where its {@code Retry-After} rounds to whole seconds (Discord developer
   * documentation, "Rate Limits", "Exceeding A Rate Limit"). Not JSON, no such number, a negative,
   * infinite or absurd one: nothing, and the header stands.
   */
  static Optional<Duration> discordRetryAfter(RefusalBody body) {
    byte[] bytes = body.bytes();
    if (bytes.length == 0 || bytes.length > 4096) {
      return Optional.empty();
    }
    try (JsonParser p = BODY_JSON.createParser(bytes)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return Optional.empty();
      }
      int depth = 1;
      Double seconds = null;
      JsonToken t;
      while (depth > 0 && (t = p.nextToken()) != null) {
        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
          depth++;
        } else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
          depth--;
        } else if (t == JsonToken.FIELD_NAME && depth == 1 && "retry_after".equals(p.currentName())) {
          JsonToken v = p.nextToken();
          if (v == JsonToken.VALUE_NUMBER_INT || v == JsonToken.VALUE_NUMBER_FLOAT) {
            seconds = p.getDoubleValue();
          } else if (v == JsonToken.START_OBJECT || v == JsonToken.START_ARRAY) {
            depth++;
          }
        }
      }
      if (seconds == null || !(seconds >= 0) || seconds > MAX_BODY_SECONDS) {
        return Optional.empty();
      }
      return Optional.of(Duration.ofMillis((long) Math.ceil(seconds * 1000)));
    } catch (IOException | RuntimeException e) {
      // A body that is not JSON, or cut: the header stands.
      return Optional.empty();
    }
  }

  private static final JsonFactory BODY_JSON = JsonFactory.builder()
      .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(16).maxNumberLength(64).build()).build();

  /** A copy that the retry step treats as a refusal, to wait at least {@code retryAfter} (for extensions that signal refusals in a 200 body). */
  public Exchange asRefused(Duration retryAfter) {
    Objects.requireNonNull(retryAfter, "retryAfter");
    if (retryAfter.isNegative()) {
      throw new IllegalArgumentException("retryAfter: expected zero or more, got " + retryAfter);
    }
    Exchange out = new Exchange(request, response, fields, fromCache, true, refusal, retryAfter, receivedAt);
    out.bodyCopy = bodyCopy;
    out.vend = vend;
    out.asked = asked;
    return out;
  }

  /** A copy carrying the body the client copied while the caller's handler read it. */
  Exchange withBodyCopy(byte[] copy) {
    Exchange out = new Exchange(request, response, fields, fromCache, refused, refusal, retryAfter, receivedAt);
    out.bodyCopy = copy;
    out.vend = vend;
    out.asked = asked;
    return out;
  }

  /**
   * A copy carrying what a vend body said; a {@code RATE_LIMITED} error makes it a refusal whose
   * wait is {@code details.retry_after} (or the Retry-After header, or {@link
   * dev.headroom.vend.format.VendBackoff#MIN_RETRY_AFTER}).
   */
  Exchange withVend(VendReading reading) {
    boolean limited = reading.rateLimited().isPresent();
    Duration wait = reading.retryAfter().orElse(retryAfter);
    if (limited && wait == null) {
      wait = VendBackoff.MIN_RETRY_AFTER;
    }
    Exchange out = new Exchange(request, response, fields, fromCache, refused || limited, refusal,
        limited ? wait : retryAfter, receivedAt);
    out.bodyCopy = bodyCopy;
    out.vend = reading;
    out.asked = asked;
    return out;
  }

  /**
   * A copy marked as sent by pacing to ask a budget that may be spent and states no reset
   * ({@link BudgetTracker.Permit#ask()}).
   */
  Exchange asAsk() {
    Exchange out = new Exchange(request, response, fields, fromCache, refused, refusal, retryAfter, receivedAt);
    out.bodyCopy = bodyCopy;
    out.vend = vend;
    out.asked = true;
    return out;
  }

  /**
   * Whether pacing sent this request knowing its budget may be spent, with no reset to wait for
   * (Azure Resource Manager's remaining-only fields, Shopify's call limit once its leak is
   * contradicted): one request asks, and its refusal's Retry-After says when to ask again. Such a
   * refusal is the answer sought, not a sign of overload, so the retry waits its Retry-After as it
   * stands instead of doubling it ({@link RetryPolicy#askDelay}).
   */
  boolean asked() {
    return asked;
  }

  /** The body as the client read it: a refusal's, or the copy of a vend call's; null otherwise. */
  byte[] clientBytes() {
    if (response.body() instanceof RefusalBody) {
      return ((RefusalBody) response.body()).bytes();
    }
    return bodyCopy;
  }

  /** What a vend body said, when this is a vend call whose body was read. */
  Optional<VendReading> vend() {
    return Optional.ofNullable(vend);
  }

  /**
   * The instant the server's stated instants are read against: its {@code Date} (RFC 9110 section
   * 6.6.1), when the field is one valid HTTP-date; otherwise the receipt, by the client's clock.
   */
  static Instant serverNow(HttpResponse<?> response, Instant receivedAt) {
    List<String> dates = response.headers().allValues("Date");
    if (dates.size() != 1) {
      return receivedAt;
    }
    return RetryAfter.parseHttpDate(dates.get(0).strip(), receivedAt).orElse(receivedAt);
  }

  private static boolean isFromCache(HttpResponse<?> response) {
    // RFC 9111 section 5.1: Age is delta-seconds; any positive value means the response was stored.
    Optional<String> age = response.headers().firstValue("Age");
    if (age.isEmpty()) {
      return false;
    }
    String v = age.get().strip();
    if (v.isEmpty() || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return false;
    }
    return !v.chars().allMatch(c -> c == '0');
  }

  public HttpRequest request() {
    return request;
  }

  /** The response; for a refusal its body is the client's internal copy, not the caller's type. */
  public HttpResponse<?> response() {
    return response;
  }

  public int status() {
    return response.statusCode();
  }

  /** The parsed RateLimit fields; empty for a response from a cache. */
  public RateLimitFields fields() {
    return fields;
  }

  /** Whether the response came from a cache ({@code Age > 0}), so that its fields were ignored. */
  public boolean fromCache() {
    return fromCache;
  }

  /** Whether this is a refusal: 429, 503 with Retry-After, or marked by {@link #asRefused}. */
  public boolean isRefused() {
    return refused;
  }

  /** Whether the status is 2xx. */
  public boolean isSuccess() {
    return response.statusCode() >= 200 && response.statusCode() < 300;
  }

  /** The refusal body, when the response was a refusal whose body is problem details or Graceful Boundaries JSON. */
  public Optional<Refusal> refusal() {
    return Optional.ofNullable(refusal);
  }

  /** Retry-After, as a delay from {@link #receivedAt()}; absent on cached responses. */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  /** When the response arrived, by the client's ticker. */
  public Instant receivedAt() {
    return receivedAt;
  }

  boolean hasClientBody() {
    return response.body() instanceof RefusalBody;
  }

  @Override
  public String toString() {
    return request.method() + " " + request.uri() + " -> " + status() + (fromCache ? " (cached)" : "")
        + (refused ? " refused" : "") + " " + fields;
  }
}
