package dev.headroom.gateway.internal.proxy;

import dev.headroom.enforcement.Verdict;
import io.netty.handler.codec.http.HttpRequest;

/**
 * What one exchange keeps for its access log line while it runs: when it began (the ticker's
 * time), the status it answered, how long the upstream took from the request head sent to the
 * response head, and the gate's verdict. {@link #NONE} keeps nothing (the access log is off);
 * {@link ExchangeTrace} keeps the same facts for the exchange's span too, when telemetry is on,
 * which is why the two hooks only a span needs ({@link #decisionTook}, {@link #forwarding}) are here.
 * Confined to the exchange's event loop; {@link #end} copies it into an immutable
 * {@link AccessRecord}.
 */
class ExchangeLog {
  /** Keeps nothing: the access log is off. */
  static final ExchangeLog NONE = new ExchangeLog(null, 0) {
    @Override
    void local(LocalResponse r, boolean head) {}

    @Override
    void head(int s, long wait) {}

    @Override
    void verdict(Verdict v) {}

    @Override
    void end(ProxyExchange x, boolean clean) {}
  };

  private final AccessLog log;
  private final long start;
  /** The status answered; 0 while none was. */
  private int status;
  /** The body bytes of the gateway's own answer (a relayed body is counted by the exchange). */
  private long localBytes;
  /** Nanoseconds from the request head sent upstream to the response head; -1 without one. */
  private long upstreamWait = -1;
  private Verdict verdict;

  ExchangeLog(AccessLog log, long start) {
    this.log = log;
    this.start = start;
  }

  /** The gateway answered itself with {@code r} (a refusal, an error, a page); its body unless {@code head}. */
  void local(LocalResponse r, boolean head) {
    status = r.status().code();
    localBytes = head ? 0 : r.body().length;
  }

  /** The upstream's response head came, with {@code s}, {@code wait} nanoseconds after the request head went. */
  void head(int s, long wait) {
    status = s;
    upstreamWait = wait;
  }

  /** What the route's policies decided. */
  void verdict(Verdict v) {
    verdict = v;
  }

  /** The store took {@code nanos} to decide (a span's {@code headroom.decision}; the access log has no use for it). */
  void decisionTook(long nanos) {}

  /** The request goes upstream with {@code request}'s headers, which a span adds its {@code traceparent} to. */
  void forwarding(HttpRequest request) {}

  /** The exchange ended ({@code clean}: its response complete): its line goes to the writer. */
  void end(ProxyExchange x, boolean clean) {
    log.offer(new AccessRecord(log.settings(), log.clock().instant(), log.clock().getZone(), x.conn.peerText(),
        x.request.method().name(), x.request.uri(), x.request.protocolVersion().text(),
        x.request.headers().get("Referer"), x.request.headers().get("User-Agent"), status, x.requestBytes,
        x.responseBytes + localBytes, x.conn.now() - start, upstreamWait, x.snap.config().pk(), x.route,
        x.vend != null, verdict, clean));
  }
}
