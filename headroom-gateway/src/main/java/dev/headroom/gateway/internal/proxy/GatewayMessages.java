package dev.headroom.gateway.internal.proxy;

import dev.headroom.Ticker;
import dev.headroom.enforcement.discovery.LimitsDiscoveryDocument;
import dev.headroom.enforcement.partition.ClientAddressResolver;
import dev.headroom.enforcement.partition.ForwardedHeader;
import dev.headroom.enforcement.plan.Plans;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Route;
import dev.headroom.gateway.internal.config.ConfigSections;
import dev.headroom.http.IoFailure;
import dev.headroom.http.PartitionKeyExposure;
import dev.headroom.http.body.LimitRefusals;
import dev.headroom.http.body.PolicyTexts;
import dev.headroom.http.body.ProblemType;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.body.ServiceErrors;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.time.Duration;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's {@link HttpVocabulary}, all of it headroom-http: header dialects
 * ({@link RateLimitHeaders}, one prebuilt per route, with the route's {@code pk} exposure),
 * partition keys ({@link PartitionKeyDerivation} behind a {@link ClientAddressResolver} that trusts
 * the configured proxies), limit refusals ({@link LimitRefusals} from each policy's
 * {@link PolicyTexts}), gateway errors ({@link Refusal#builder(int)} with their class fields), the
 * body format ({@link RefusalFormat#negotiate}) and the discovery document ({@link LimitsDiscoveryDocument},
 * whose conformance level headroom-http computes from what the configuration delivers).
 * Immutable and thread-safe.
 *
 * <p>It also holds, as static factories, every message the gateway writes itself: the
 * {@code error}, {@code detail} and {@code why} of each gateway error (Graceful Boundaries
 * section 6), in one place so that they read alike.
 */
public final class GatewayMessages implements HttpVocabulary {
  private static final Logger LOG = LoggerFactory.getLogger(GatewayMessages.class);

  private final ConfigSections config;
  private final Ticker ticker;
  private final Map<Route, RateLimitHeaders> headers = new IdentityHashMap<>();
  private final LimitRefusals refusals;
  private final ClientAddressResolver clients;
  /** The configured plans; null without plans. */
  private final Plans plans;

  /** The {@code why} of a refusal whose policy has no text of its own; also of texts made for checks only. */
  public static final String DEFAULT_WHY = "Limits keep the service available for everyone.";

  /** The why of an error whose own texts headroom-http refused (see {@link #error}). */
  static final String FALLBACK_WHY = "The gateway answers every request it cannot complete, so that no caller waits in vain.";


  private GatewayMessages(ConfigSections config, Ticker ticker, Function<Route, PartitionKeyExposure> exposures) {
    this.config = config;
    this.ticker = ticker;
    // trustedProxies believes Forwarded and X-Forwarded-For (headroom-gateway/README.md, "Client addresses"): Forwarded wins when a
    // request carries both (RFC 7239 section 7.4), and the two are never mixed into one chain
    this.clients = ClientAddressResolver.builder()
        .trustedProxies(config.trustedProxies())
        .headers(List.of(ForwardedHeader.FORWARDED, ForwardedHeader.X_FORWARDED_FOR)).build();
    LimitRefusals.Builder rb = LimitRefusals.builder().ticker(ticker)
        .defaults(PolicyTexts.builder(DEFAULT_WHY).build());
    config.service().origin().ifPresent(rb::origin);
    this.plans = config.plans().map(ps -> ps.plans()).orElse(null);
    for (Policy p : config.policies().values()) {
      rb.texts(p.name(), p.texts());
    }
    if (plans != null) {
      plans.speakAsBases(rb); // a plan's policies speak as their base and point at the next plan
    }
    this.refusals = rb.build();
    for (Route r : config.routes()) {
      headers.put(r, r.fields().applyTo(RateLimitHeaders.builder())
          .dialects(r.dialects().stream().map(HeaderDialect::fromToken).toList())
          .ticker(ticker)
          .exposure(exposures.apply(r))
          .omitOnRedirect(r.omitOnRedirect())
          .policies(r.policies().stream().map(n -> config.policies().get(n).quota()).toList())
          .build());
    }
  }

  /**
   * The vocabulary of a configuration.
   *
   * @throws IllegalArgumentException when headroom-http refuses part of it (the configuration
   *     reader has checked each part already, so this means two parts disagree)
   */
  public static GatewayMessages of(ConfigSections config, Ticker ticker) {
    return new GatewayMessages(config, ticker, r -> RouteExposures.forRoute(config.pk(), r));
  }

  /**
   * Builds the vocabulary of {@code config} as requests will use it and the gate's discovery document,
   * so that the configuration reader catches, at load time, parts that are each valid but that
   * disagree with each other.
   *
   * @throws IllegalArgumentException when headroom-http refuses part of it
   */
  public static void check(ConfigSections config) {
    GateRoutes.check(config, of(config, Ticker.system()));
  }

  @Override
  public RateLimitHeaders headers(Route route) {
    return headers.get(route);
  }

  @Override
  public RefusalFormat format(String accept) {
    return RefusalFormat.negotiate(accept);
  }

  /** The refusal texts of every policy (a plan's policies speak as their base), for the gate. */
  LimitRefusals refusals() {
    return refusals;
  }

  /** How the client's address is found behind the trusted proxies, for the gate's partitions and allow lists. */
  ClientAddressResolver clients() {
    return clients;
  }

  // ---- the gateway's own errors: every error, detail and why it writes, in one place ----
  // (Graceful Boundaries section 6: each states what happened, why, and, for input, what was expected)

  /** 431: the request's header fields are over {@code limits.maxHeaderBytes} (RFC 6585 section 5). */
  static GatewayError headerFieldsTooLarge(int max) {
    return new GatewayError(431, "request_header_fields_too_large",
        "The request's header fields are larger than " + max + " bytes in total.",
        "Header size is bounded so that every connection costs the gateway a bounded amount of memory.",
        Map.of("maxHeaderBytes", max, "field", "headers",
            "expected", "Header fields of at most " + max + " bytes in total."));
  }

  /** 414: the request line is over {@code limits.maxRequestLineBytes} (RFC 9110 section 15.5.15). */
  static GatewayError requestLineTooLong(int max) {
    return new GatewayError(414, "uri_too_long",
        "The request line is longer than " + max + " bytes.",
        "The request line is bounded so that every connection costs the gateway a bounded amount of memory.",
        Map.of("maxRequestLineBytes", max, "field", "request-line",
            "expected", "A request line of at most " + max + " bytes."));
  }

  /** 400: the request could not be parsed (RFC 9112); {@code why} is the parser's message. */
  static GatewayError malformedRequest(String why) {
    return new GatewayError(400, "malformed_request",
        "The request could not be parsed as HTTP/1.1: " + why,
        "Only well-formed requests are forwarded, so that the upstream never sees ambiguous framing.",
        Map.of("expected", "A well-formed HTTP/1.1 request (RFC 9112)."));
  }

  private static final String FRAMING_WHY =
      "Only requests with one unambiguous body length are forwarded, so that the service behind the gateway never"
          + " reads a body boundary other than the gateway's.";

  /** 400: Transfer-Encoding in an HTTP/1.0 request (RFC 9112 section 6.1); {@code value} quoted, bounded. */
  static GatewayError transferEncodingInHttp10(String value) {
    return malformedFraming("Transfer-Encoding \"" + value + "\" in an HTTP/1.0 request, which has no transfer codings.",
        "An HTTP/1.0 request framed by Content-Length alone (RFC 9112 section 6.1).");
  }

  /** 400: Content-Length beside Transfer-Encoding (RFC 9112 section 6.1). */
  static GatewayError contentLengthBesideTransferEncoding(String value) {
    return malformedFraming("Content-Length beside Transfer-Encoding \"" + value + "\": the body length is ambiguous.",
        "Either Content-Length or Transfer-Encoding: chunked, never both (RFC 9112 section 6.1).");
  }

  /** 400: a Transfer-Encoding whose final coding is not chunked (RFC 9112 section 6.3). */
  static GatewayError transferEncodingNotChunked(String value) {
    return malformedFraming("Transfer-Encoding \"" + value + "\" does not end in chunked, so the body length cannot be"
        + " determined.", "Transfer-Encoding: chunked (RFC 9112 section 6.3).");
  }

  /** 400: chunked applied more than once (RFC 9112 section 6.1). */
  static GatewayError chunkedTwice(String value) {
    return malformedFraming("Transfer-Encoding \"" + value + "\" applies chunked more than once.",
        "Transfer-Encoding: chunked, once (RFC 9112 section 6.1).");
  }

  /** 501: codings before chunked in a request, which the gateway does not forward. */
  static GatewayError codingsBeforeChunked(String value) {
    return new GatewayError(501, "transfer_coding_not_implemented",
        "Transfer-Encoding \"" + value + "\" has codings before chunked, which the gateway does not forward.",
        "The gateway re-frames request bodies for the service behind it and forwards them only chunked, so that no"
            + " coding is lost on the way.",
        Map.of("field", "Transfer-Encoding",
            "expected", "Transfer-Encoding: chunked alone; a content coding belongs in Content-Encoding."));
  }

  private static GatewayError malformedFraming(String detail, String expected) {
    return new GatewayError(400, "malformed_request", detail, FRAMING_WHY,
        Map.of("field", "Transfer-Encoding", "expected", expected));
  }

  /** 400: the request body's chunked framing broke (RFC 9112 section 7.1). */
  static GatewayError malformedRequestBody() {
    return new GatewayError(400, "malformed_request",
        "The request body's chunked framing is invalid: a chunk-size line, chunk or trailer could not be read.",
        "Only complete, well-formed request bodies are forwarded, so that the service never takes part of a body"
            + " for all of it.",
        Map.of("field", "body", "expected", "A chunked body of hexadecimal chunk sizes, each chunk followed by CRLF,"
            + " ended by a zero-size chunk (RFC 9112 section 7.1)."));
  }

  /** 404: no route matches; the discovery document lists the routes. */
  static GatewayError notFound(String method, String path, String discoveryUrl) {
    return new GatewayError(404, "not_found",
        "No route of this service matches " + method + " " + path + ".",
        "The gateway only forwards the routes it is configured for; the discovery document at "
            + discoveryUrl + " lists them.",
        Map.of("discoveryUrl", discoveryUrl));
  }

  /** 405: the route exists for other methods (RFC 9110 section 15.5.6; the caller sets Allow). */
  static GatewayError methodNotAllowed(String path, Collection<String> allowed, String method) {
    return new GatewayError(405, "method_not_allowed",
        "The route " + path + " accepts " + String.join(", ", allowed) + ", not " + method + ".",
        "Each route accepts only the methods its service implements.",
        Map.of("allowedMethods", List.copyOf(allowed)));
  }

  /**
   * 400: the request asks to upgrade its connection (RFC 9110 section 7.8) to {@code offered},
   * which the route does not allow ({@code allowed}, sorted; empty when the route takes no upgrade,
   * {@code routes[].upgrade}).
   */
  static GatewayError upgradeNotAllowed(String path, String offered, Collection<String> allowed) {
    String accepts = allowed.isEmpty() ? "does not accept connection upgrades"
        : "accepts Upgrade: " + String.join(", ", allowed) + " only";
    return new GatewayError(400, "upgrade_not_allowed",
        "The route " + path + " " + accepts + ", not Upgrade: " + offered + ".",
        "A route switches a connection only to the protocols its service is configured to speak, so that no"
            + " connection becomes a tunnel its limits were not set for.",
        Map.of("field", "Upgrade", "allowedUpgrades", List.copyOf(allowed),
            "expected", allowed.isEmpty() ? "A request without Upgrade." : "Upgrade: " + String.join(", ", allowed) + "."));
  }

  /** 400: an upgrade request with a body: the connection would switch in the middle of it (RFC 9110 section 7.8). */
  static GatewayError upgradeWithBody() {
    return new GatewayError(400, "malformed_request",
        "The request asks to upgrade its connection and carries a body.",
        "A connection switches protocols right after the request that asks for it, so that request has no body to"
            + " finish first.",
        Map.of("field", "Upgrade", "expected", "An upgrade request without a body, such as a WebSocket handshake"
            + " (RFC 6455 section 4.1)."));
  }

  /** 413: the request body is over {@code limits.maxBodyBytes} (RFC 9110 section 15.5.14). */
  static GatewayError contentTooLarge(long maxBody) {
    return new GatewayError(413, "content_too_large",
        "The request body is larger than " + maxBody + " bytes.",
        "Request bodies are bounded so that one caller cannot tie up the service with an unbounded upload.",
        Map.of("maxBodyBytes", maxBody, "field", "body",
            "expected", "A request body of at most " + maxBody + " bytes."));
  }

  /**
   * 503: the store could not decide (a Redis store failing closed), or the gateway's own queue to
   * it is full ({@code overloaded}; Redis possibly healthy, so a shorter wait):
   * temporary-reduced-capacity (draft-ietf-httpapi-ratelimit-headers-09 section 5.2), with the
   * texts every front end sends ({@link ServiceErrors}); the caller sets Retry-After to
   * {@link ServiceErrors#storeRetryAfterSeconds}.
   */
  static GatewayError storeUnavailable(boolean overloaded) {
    return new GatewayError(503, ProblemType.TEMPORARY_REDUCED_CAPACITY.error(),
        ServiceErrors.storeUnavailableDetail(overloaded), ServiceErrors.STORE_UNAVAILABLE_WHY,
        Map.of("type", ProblemType.TEMPORARY_REDUCED_CAPACITY,
            "retryAfterSeconds", ServiceErrors.storeRetryAfterSeconds(overloaded)));
  }

  /** 408: the next request head was not complete within timeouts.idle (RFC 9110 section 15.5.9). */
  static GatewayError requestHeadTimedOut(Duration idle) {
    return new GatewayError(408, "request_timeout",
        "The request head was not complete within " + durationInWords(idle) + ". Send the request again.",
        "A connection is held open only while its request makes progress, so that slow senders cannot tie up the"
            + " gateway.",
        Map.of("timeoutSeconds", secondsOf(idle)));
  }

  /** 408: the request body stopped arriving for timeouts.idle. */
  static GatewayError requestBodyTimedOut(Duration idle) {
    return new GatewayError(408, "request_timeout",
        "The request body stopped arriving: no bytes for " + durationInWords(idle) + ". Send the request again.",
        "A connection is held open only while its request makes progress, so that stalled uploads cannot tie up the gateway.",
        Map.of("timeoutSeconds", secondsOf(idle)));
  }

  /** 504: the upstream's response head is later than timeouts.response (RFC 9110 section 15.6.5). */
  static GatewayError upstreamTimedOut(Duration response) {
    return new GatewayError(504, "upstream_timeout",
        "The upstream service did not answer within " + durationInWords(response) + ". Try again later.",
        "The gateway bounds how long a request may wait so that callers are never left hanging on a stalled service.",
        Map.of("timeoutSeconds", secondsOf(response)));
  }

  /** 502: the upstream could not be reached, closed early or answered with no valid HTTP; see the details below. */
  static GatewayError badGateway(String detail) {
    return new GatewayError(502, "upstream_unavailable", detail + " Try again later.",
        "The gateway forwards requests to the service behind it; when that service is down the gateway says so instead of guessing.",
        Map.of());
  }

  static String upstreamUnreachable(Throwable cause) {
    return "The upstream service could not be reached (" + IoFailure.inWords(cause) + ").";
  }

  /**
   * 502: the upstream is {@code https://} and its TLS handshake failed, so nothing was sent to it.
   * Says only the class of the failure ({@code tlsFailure}: {@code unknown-ca}, {@code wrong-name},
   * {@code expired}, {@code handshake-failed}); the certificate's details go to the log, not to callers.
   */
  static GatewayError upstreamNotSecure(UpstreamTlsFailure failure) {
    return new GatewayError(502, "upstream_not_secure",
        "The upstream service could not be reached securely: " + failure.words + ".",
        "The gateway forwards a request only over a connection on which the service behind it has proved who it is,"
            + " so that no request or answer passes through anyone else.",
        Map.of("tlsFailure", failure.token));
  }

  static final String UPSTREAM_CLOSED_EARLY = "The upstream service closed the connection before answering.";
  static final String UPSTREAM_RESPONSE_INVALID = "The upstream sent a response that is not valid HTTP/1.1.";
  /** An HTTP/2 extended CONNECT's upstream answered 2xx without switching (RFC 8441 section 5, {@link TunnelRequest}). */
  static final String UPSTREAM_DID_NOT_SWITCH =
      "The upstream service answered the tunnel's opening handshake without switching protocols (no 101).";
  /** Its 101 did not answer the WebSocket key sent (RFC 6455 section 4.1). */
  static final String UPSTREAM_HANDSHAKE_INVALID =
      "The upstream service switched protocols with a Sec-WebSocket-Accept that does not answer the key sent.";

  /**
   * 502 for an HTTP/1.0 client whose response carries a transfer coding such as gzip: HTTP/1.0
   * has no Transfer-Encoding (RFC 9112 section 6.1).
   */
  static GatewayError untransferable(String codings) {
    return new GatewayError(502, "upstream_response_undeliverable",
        "The upstream answered with the transfer coding " + codings + ", which an HTTP/1.0 request cannot receive.",
        "An HTTP/1.0 request cannot receive an answer sent with a transfer coding, so this answer cannot reach"
            + " this client unchanged; the same request in HTTP/1.1 receives it.",
        Map.of());
  }

  /**
   * A bare upstream error, normalised: the registered reason phrase, not the upstream's, so that
   * the body never quotes upstream text; {@code allow} is the upstream's Allow of a 405, or null.
   */
  static GatewayError upstreamAnswered(int status, String allow) {
    String phrase = HttpResponseStatus.valueOf(status).reasonPhrase();
    return new GatewayError(status,
        snakeCase(phrase),
        "The upstream service answered " + status + " " + phrase + ".",
        status >= 500
            ? "The service behind this gateway failed to complete the request; it is reported in a structured form so that callers can decide whether to retry."
            : "The service behind this gateway refused the request; it is reported in a structured form so that callers can correct it.",
        allow == null ? Map.of("upstreamStatus", status)
            : Map.of("upstreamStatus", status, "allowedMethods", allowList(allow)));
  }

  /** A duration as a caller reads it: "400 milliseconds", "1 second", "30 seconds". */
  static String durationInWords(Duration d) {
    long ms = d.toMillis();
    if (ms < 1000 || ms % 1000 != 0) {
      return ms + (ms == 1 ? " millisecond" : " milliseconds");
    }
    long s = ms / 1000;
    return s + (s == 1 ? " second" : " seconds");
  }

  /** A duration in seconds for a JSON body: whole seconds as an integer, else a decimal. */
  static Number secondsOf(Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? (Number) (ms / 1000) : (Number) (ms / 1000.0);
  }

  static String snakeCase(String reason) {
    String s = reason == null ? "upstream_error" : reason.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_");
    s = s.replaceAll("^_+|_+$", "");
    return s.isEmpty() ? "upstream_error" : s.length() > 64 ? s.substring(0, 64) : s;
  }

  static List<String> allowList(String allow) {
    return ServiceErrors.allowedMethods(allow);
  }

  @Override
  public LocalResponse error(GatewayError e, RefusalFormat format, String path) {
    Refusal body;
    try {
      body = errorBody(e, e.detail());
    } catch (IllegalArgumentException bad) {
      // the detail quoted something from the request or the upstream that is not sendable
      LOG.debug("error body for {} refused by headroom-http, sent without the quoted detail", e.status(), bad);
      String plain = "The request could not be completed (" + e.status() + ").";
      try {
        body = errorBody(e, plain);
      } catch (IllegalArgumentException worse) {
        // one of the gateway's own texts is refused: a defect, yet the caller still gets its answer
        LOG.warn("error body for {} refused by headroom-http, sent with plain texts: {}", e.status(), worse.getMessage());
        body = errorBody(new GatewayError(e.status(), e.error(), plain, FALLBACK_WHY, Map.of()), plain);
      }
    }
    return new LocalResponse.Builder().build(HttpResponseStatus.valueOf(e.status()), format, body, path);
  }

  private Refusal errorBody(GatewayError e, String detail) {
    Refusal.Builder b = Refusal.builder(e.status()).error(e.error()).detail(detail).why(e.why());
    config.service().origin().ifPresent(b::origin);
    for (Map.Entry<String, Object> x : e.extra().entrySet()) {
      Object v = x.getValue();
      switch (x.getKey()) {
        case "field" -> b.field((String) v);
        case "expected" -> b.expected((String) v);
        case "allowedMethods" -> {
          @SuppressWarnings("unchecked")
          List<String> methods = (List<String>) v;
          b.allowedMethods(methods);
        }
        case "retryAfterSeconds" -> b.retryAfterSeconds(((Number) v).longValue());
        case "type" -> b.type((ProblemType) v);
        default -> b.extension(x.getKey(), v);
      }
    }
    if (e.status() >= 500) {
      config.service().statusUrl().ifPresent(b::statusUrl);
    }
    return b.build();
  }
}
