package dev.headroom.gateway.internal.telemetry;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The server span of one exchange (OpenTelemetry semantic conventions, HTTP server spans): named
 * {@code METHOD route-path} ({@code GET /api/{id}}), never by the request's own path, so the names
 * stay as few as the routes; a request no route matched is named by its method alone. It carries
 * the HTTP attributes ({@code http.request.method}, {@code url.path} without the query,
 * {@code url.scheme}, {@code server.address}, {@code network.protocol.version},
 * {@code http.route}, {@code http.response.status_code}) and Headroom's ({@code headroom.route},
 * {@code headroom.outcome}, {@code headroom.policy}, {@code headroom.policies}, and on a refusal
 * {@code headroom.problem.type} and {@code headroom.retry_after}). The store's decision is a child
 * span, {@code headroom.decision}, as long as the store took: a trace shows the limiter's share of
 * the request beside the upstream's.
 *
 * <p>Confined to the exchange's event loop.
 */
public final class ExchangeSpan {
  static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
  static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
  static final AttributeKey<String> PATH = AttributeKey.stringKey("url.path");
  static final AttributeKey<String> SCHEME = AttributeKey.stringKey("url.scheme");
  static final AttributeKey<String> SERVER = AttributeKey.stringKey("server.address");
  static final AttributeKey<String> PROTOCOL = AttributeKey.stringKey("network.protocol.version");
  static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
  static final AttributeKey<String> ROUTE_NAME = AttributeKey.stringKey("headroom.route");
  static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("headroom.outcome");
  static final AttributeKey<String> POLICY = AttributeKey.stringKey("headroom.policy");
  static final AttributeKey<List<String>> POLICIES = AttributeKey.stringArrayKey("headroom.policies");
  static final AttributeKey<String> PROBLEM_TYPE = AttributeKey.stringKey("headroom.problem.type");
  static final AttributeKey<Long> RETRY_AFTER = AttributeKey.longKey("headroom.retry_after");
  static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
  /** The name of the store decision's child span. */
  static final String DECISION = "headroom.decision";
  /**
   * The methods a span is named by; any other is {@code _OTHER}, as the semantic conventions say,
   * so that a client inventing methods cannot invent span names.
   */
  private static final Set<String> KNOWN_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT",
      "OPTIONS", "TRACE", "PATCH", "QUERY");

  private final Telemetry telemetry;
  private final Span span;
  private final Context context;

  private ExchangeSpan(Telemetry telemetry, Span span, Context context) {
    this.telemetry = telemetry;
    this.span = span;
    this.context = context;
  }

  static ExchangeSpan open(Telemetry telemetry, Context parent, HttpRequest request, String routeName,
      String routePath, boolean secure, String protocolVersion) {
    String method = KNOWN_METHODS.contains(request.method().name()) ? request.method().name() : "_OTHER";
    String uri = request.uri();
    int q = uri.indexOf('?');
    String host = request.headers().get("host");
    var b = telemetry.tracer.spanBuilder(routePath == null ? method : method + " " + routePath)
        .setParent(parent)
        .setSpanKind(SpanKind.SERVER)
        .setAttribute(METHOD, method)
        .setAttribute(PATH, q < 0 ? uri : uri.substring(0, q))
        .setAttribute(SCHEME, secure ? "https" : "http")
        .setAttribute(PROTOCOL, protocolVersion);
    if (host != null) {
      b.setAttribute(SERVER, hostOnly(host));
    }
    if (routePath != null) {
      b.setAttribute(ROUTE, routePath).setAttribute(ROUTE_NAME, routeName);
    }
    Span span = b.startSpan();
    return new ExchangeSpan(telemetry, span, parent.with(span));
  }

  /** The Host field without its port ({@code server.address} is the name alone). */
  private static String hostOnly(String host) {
    if (host.startsWith("[")) {
      int end = host.indexOf(']');
      return end < 0 ? host : host.substring(0, end + 1);
    }
    int colon = host.indexOf(':');
    return colon < 0 ? host : host.substring(0, colon);
  }

  /**
   * Whether the span is recorded (sampled): an exchange whose trace is not sampled skips working
   * out what only a recorded span would say, and only carries its {@code traceparent} upstream.
   */
  public boolean recording() {
    return span.isRecording();
  }

  /** The store decided in {@code nanos}, ending now: the {@code headroom.decision} child span. */
  public void decided(long nanos) {
    if (!span.isRecording()) {
      return;
    }
    long end = telemetry.clock.now();
    telemetry.tracer.spanBuilder(DECISION).setParent(context).setSpanKind(SpanKind.INTERNAL)
        .setStartTimestamp(end - nanos, TimeUnit.NANOSECONDS).startSpan().end(end, TimeUnit.NANOSECONDS);
  }

  /**
   * The request goes upstream with {@code headers}: its {@code traceparent} becomes this span's
   * (W3C Trace Context section 3.2: a participant sends its own span id as the parent id), and a
   * {@code tracestate} the client sent goes on unchanged.
   */
  public void forwarding(HttpHeaders headers) {
    W3CTraceContextPropagator.getInstance().inject(context, headers, HeaderCarrier.INSTANCE);
  }

  /** The time the span's clock reads, in nanoseconds since the epoch. */
  public long now() {
    return telemetry.clock.now();
  }

  /**
   * Ends the span with what the exchange came to.
   *
   * @param status the status answered; 0 when none was (the connection died first)
   * @param outcome as the access log says it ({@code allowed}, {@code refused}, {@code shadow}, ...)
   * @param policy the policy the outcome names (the refusing one, a shadow's); null for none
   * @param policies the policies asked
   * @param problemType a refusal's problem type URI; null for none
   * @param retryAfter a refusal's Retry-After in seconds; negative for none
   * @param clean whether the response went out whole
   */
  public void end(int status, String outcome, String policy, List<String> policies, String problemType,
      long retryAfter, boolean clean) {
    span.setAttribute(OUTCOME, outcome);
    if (status > 0) {
      span.setAttribute(STATUS, (long) status);
    }
    if (policy != null) {
      span.setAttribute(POLICY, policy);
    }
    if (!policies.isEmpty()) {
      span.setAttribute(POLICIES, policies);
    }
    if (problemType != null) {
      span.setAttribute(PROBLEM_TYPE, problemType);
    }
    if (retryAfter >= 0) {
      span.setAttribute(RETRY_AFTER, retryAfter);
    }
    // a server span is in error for a 5xx, or when no response went out (semantic conventions, HTTP spans)
    if (status >= 500) {
      span.setStatus(StatusCode.ERROR);
      span.setAttribute(ERROR_TYPE, Integer.toString(status));
    } else if (!clean) {
      span.setStatus(StatusCode.ERROR);
      span.setAttribute(ERROR_TYPE, "incomplete");
    }
    span.end();
  }
}
