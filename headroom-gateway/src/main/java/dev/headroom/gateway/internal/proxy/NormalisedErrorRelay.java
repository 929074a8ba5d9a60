package dev.headroom.gateway.internal.proxy;

import dev.headroom.gateway.internal.wire.ResponseBody;
import dev.headroom.gateway.internal.wire.ResponseHead;
import dev.headroom.http.body.RefusalFormat;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.util.Locale;

/**
 * The normalised-error path (a route's {@code normaliseErrors}): a bare upstream error, one
 * without a JSON body a caller could parse, is replaced by the gateway's structured error for its
 * status (Graceful Boundaries: error, detail, why; the texts are in {@link GatewayMessages}). The upstream's
 * body is read and dropped; the answer goes out when it ends, with the route's RateLimit fields.
 */
final class NormalisedErrorRelay implements ResponseRelay {
  private final ClientSink client;
  private final int status;
  /** The gateway's answer for the status, its Allow included; sent with the fields once the upstream's body ends. */
  private final LocalResponse answer;

  /**
   * @param answer the gateway's structured error for {@code status} (with the upstream's Allow of a
   *     405), made by the exchange's vocabulary
   */
  NormalisedErrorRelay(ClientSink client, int status, LocalResponse answer) {
    this.client = client;
    this.status = status;
    this.answer = answer;
  }

  /** The gateway's answer for an upstream's bare {@code status} ({@code allow}: its Allow of a 405, or null). */
  static LocalResponse answer(HttpVocabulary vocabulary, int status, String allow, RefusalFormat format, String path) {
    LocalResponse r = vocabulary.error(GatewayMessages.upstreamAnswered(status, allow), format, path);
    if (allow != null) {
      r.headers().set(HttpHeaderNames.ALLOW, allow);
    }
    return r;
  }

  /** Whether the route normalises this upstream response: a bare error whose facts the gateway can state. */
  static boolean applies(CompiledRoute route, ResponseHead h) {
    int code = h.status();
    return route.route().normaliseErrors() && code >= 400 && isBare(h.get("content-type"))
        && normalisable(code, h.get("allow"));
  }

  /**
   * Whether the gateway can state what Graceful Boundaries requires of the status: a 429 needs the
   * limit and the wait, which only the upstream knows, and a 405 its methods, known only from its
   * {@code Allow} field; those pass through as they are otherwise.
   */
  static boolean normalisable(int code, String allow) {
    return code != 429 && (code != 405 || allow != null);
  }

  /** A bare response is one without a JSON body: nothing a caller could parse for error, detail, why. */
  static boolean isBare(String ct) {
    if (ct == null) {
      return true;
    }
    String base = ct.toLowerCase(Locale.ROOT);
    return !(base.startsWith("application/json") || base.startsWith("application/problem+json"));
  }

  @Override
  public void body(ResponseBody piece) {
    boolean last = piece.last();
    piece.release();
    if (!last) {
      client.readUpstream();
      return;
    }
    client.lastWrite();
    client.writeFields(status, answer.headers()::add);
    client.writeLocal(answer);
  }

  @Override
  public boolean nothingSent() {
    return true;
  }
}
