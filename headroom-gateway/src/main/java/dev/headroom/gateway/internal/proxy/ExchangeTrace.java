package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.Verdict;
import dev.headroom.gateway.internal.telemetry.ExchangeSpan;
import dev.headroom.gateway.internal.telemetry.Telemetry;
import dev.headroom.http.body.ProblemType;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http2.Http2StreamChannel;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * An exchange's access log record and its span at once, when {@code telemetry} is on: every hook
 * goes to the access log's {@link ExchangeLog} as before, and what a span says goes to its
 * {@link ExchangeSpan}. The outcome, policy and problem type are worked out when the exchange ends,
 * as the access log's writer works them out ({@link AccessRecord#outcome}), but on the event loop:
 * that is the part of tracing's cost a refusal adds. Confined to the exchange's event loop.
 */
final class ExchangeTrace extends ExchangeLog {
  private final ExchangeLog log;
  private final ExchangeSpan span;
  /** The status answered; 0 while none was. */
  private int status;
  /** The gateway's own answer, if it gave one: a refusal's problem type and Retry-After are read from it. */
  private LocalResponse local;
  private Verdict verdict;

  private ExchangeTrace(ExchangeLog log, ExchangeSpan span) {
    super(null, 0);
    this.log = log;
    this.span = span;
  }

  /** {@code log}, and the span of the exchange of {@code request} on {@code conn} under {@code telemetry}. */
  static ExchangeLog open(Telemetry telemetry, ExchangeLog log, ProxyHandler conn, HttpRequest request,
      CompiledRoute route) {
    // an HTTP/2 stream reaches the exchange converted to an HTTP/1.1 request, on a stream channel of its own
    String version = conn.ctx.channel() instanceof Http2StreamChannel ? "2"
        : request.protocolVersion().majorVersion() + "." + request.protocolVersion().minorVersion();
    return new ExchangeTrace(log, telemetry.exchange(request, route == null ? null : route.route().name(),
        route == null ? null : route.route().path(), conn.transport().secure(), version));
  }

  @Override
  void local(LocalResponse r, boolean head) {
    log.local(r, head);
    status = r.status().code();
    local = r;
  }

  @Override
  void head(int s, long wait) {
    log.head(s, wait);
    status = s;
  }

  @Override
  void verdict(Verdict v) {
    log.verdict(v);
    verdict = v;
  }

  @Override
  void decisionTook(long nanos) {
    span.decided(nanos);
  }

  @Override
  void forwarding(HttpRequest request) {
    span.forwarding(request.headers());
  }

  @Override
  void end(ProxyExchange x, boolean clean) {
    log.end(x, clean);
    if (!span.recording()) {
      return; // not sampled: nothing to say, and nothing to end that would be sent
    }
    long now = span.now();
    AccessRecord.Outcome o = AccessRecord.outcome(x.route, x.vend != null, verdict,
        Instant.ofEpochSecond(0, now), null);
    String problemType = null;
    long retryAfter = -1;
    if (local != null && status >= 400) {
      problemType = problemType(local.body());
      String ra = local.headers().get(HttpHeaderNames.RETRY_AFTER);
      if (ra != null && ra.chars().allMatch(Character::isDigit) && ra.length() <= 18) {
        retryAfter = Long.parseLong(ra);
      }
    }
    span.end(status, o.outcome(), o.policy(), o.policies(), problemType, retryAfter, clean);
  }

  /**
   * The registered problem type a refusal's body names (draft-ietf-httpapi-ratelimit-headers-09
   * section 5): its URI appears in every body format the gateway writes that carries one.
   */
  private static String problemType(byte[] body) {
    String text = new String(body, StandardCharsets.ISO_8859_1);
    for (ProblemType t : ProblemType.values()) {
      if (text.contains(t.uri())) {
        return t.uri();
      }
    }
    return null;
  }
}
