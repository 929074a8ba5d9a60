package dev.headroom.gateway.internal;

import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.gateway.config.Policy;
import dev.headroom.gateway.config.Route;
import dev.headroom.http.body.RefusalFormat;
import io.netty.handler.codec.http.HttpHeaders;
import java.net.InetAddress;
import java.util.Map;
import java.util.Set;

/**
 * The HTTP vocabulary of the gateway, in one place: header dialects, refusal and error bodies,
 * the discovery document, partition keys. The vocabulary itself belongs to headroom-http; this
 * interface is the gateway's seam onto it, so the proxy never formats a header or a body itself.
 * Implementations are immutable and thread-safe; a new one is built for each configuration.
 */
interface HttpVocabulary {

  /** The refusal classes of draft-ietf-httpapi-ratelimit-headers-09 section 5. */
  enum RefusalKind {
    /** 429 quota-exceeded. */
    QUOTA_EXCEEDED,
    /** 503 temporary-reduced-capacity: an operator lowered capacity at run time. */
    TEMPORARY_REDUCED_CAPACITY,
    /** 429 abnormal-usage-detected: escalated after repeated requests during Retry-After. */
    ABNORMAL_USAGE_DETECTED
  }

  /**
   * One refusal: its class, the violated policy as configured, the decision (absent for a blocked
   * partition, which never reaches the store), and the wait.
   */
  record LimitRefusal(RefusalKind kind, Policy policy, Decision decision, long retryAfterSeconds,
      Route route, String path) {}

  /**
   * A non-success response the gateway produces itself (Graceful Boundaries level 1): status,
   * {@code error}, {@code detail}, {@code why}, and its class fields (section 6: {@code field},
   * {@code expected}, {@code allowedMethods} for input errors, {@code retryAfterSeconds} for
   * availability errors) or extension members, by name.
   */
  record GatewayError(int status, String error, String detail, String why, Map<String, Object> extra) {}

  /** What partition derivation may look at. */
  record RequestFacts(InetAddress peer, String method, String path, HttpHeaders headers, String routeTemplate) {}

  /** The discovery document as served: JSON bytes and their strong ETag. */
  record Discovery(byte[] json, String etag, String cacheControl) {}

  /** The route's header writer (dialects, pk exposure), for hosts such as headroom-vend that write through it. */
  dev.headroom.http.headers.RateLimitHeaders headers(Route route);

  /** Adds the route's RateLimit fields for an allowed decision's response with this status. */
  void rateLimitHeaders(Route route, Decision decision, int status, HttpHeaders out);

  /** The refusal response: status, Retry-After, fields, body in the negotiated format. */
  LocalResponse refusal(LimitRefusal refusal, RefusalFormat format);

  /** A gateway-produced error response (404, 405, 413, 431, 502, 504, normalised upstream errors). */
  LocalResponse error(GatewayError error, RefusalFormat format, String path);

  /** The partition key a policy's partitioning selects for the request. */
  PartitionKey partition(Policy policy, RequestFacts facts);

  /** The client's address as {@code trustedProxies} resolve it; empty when there is none. */
  java.util.Optional<String> clientAddress(RequestFacts facts);

  /**
   * A partition key and whether deriving it read nothing but the peer's address, so that it
   * holds for every request on the same connection.
   */
  record Derived(PartitionKey key, boolean peerOnly) {}

  /** As {@link #partition}, saying whether the key depends on the peer's address alone. */
  Derived derive(Policy policy, RequestFacts facts);

  /** The body format the caller asked for (Graceful Boundaries section 2, "HTML 429 responses"). */
  RefusalFormat format(String accept);

  /** The discovery document for the configuration, with the capacities currently in force. */
  Discovery discovery(Map<String, Long> effectiveQuotas, Set<String> reduced);
}
