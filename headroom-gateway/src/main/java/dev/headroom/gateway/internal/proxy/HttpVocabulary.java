package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.config.Route;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.headers.RateLimitHeaders;
import java.util.Map;

/**
 * The HTTP vocabulary of the gateway, in one place: header dialects, error bodies and the discovery
 * document (limit refusals and partition keys are headroom-http's enforcement gate's). The vocabulary itself belongs to headroom-http; this
 * interface is the gateway's seam onto it, so the proxy never formats a header or a body itself.
 * Implementations are immutable and thread-safe; a new one is built for each configuration.
 */
public interface HttpVocabulary {

  /**
   * A non-success response the gateway produces itself (Graceful Boundaries level 1): status,
   * {@code error}, {@code detail}, {@code why}, and its class fields (section 6: {@code field},
   * {@code expected}, {@code allowedMethods} for input errors, {@code retryAfterSeconds} for
   * availability errors) or extension members, by name.
   */
  record GatewayError(int status, String error, String detail, String why, Map<String, Object> extra) {}

  /** The route's header writer (dialects, pk exposure), for hosts such as headroom-vend that write through it. */
  RateLimitHeaders headers(Route route);

  /** A gateway-produced error response (404, 405, 413, 431, 502, 504, normalised upstream errors). */
  LocalResponse error(GatewayError error, RefusalFormat format, String path);

  /** The body format the caller asked for (Graceful Boundaries section 2, "HTML 429 responses"). */
  RefusalFormat format(String accept);
}
