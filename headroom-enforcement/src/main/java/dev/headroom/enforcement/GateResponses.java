package dev.headroom.enforcement;

import dev.headroom.StoreException;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.body.Refusal;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.body.ServiceErrors;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How the gate's own responses are made: a refusal's body in its negotiated format with
 * {@code Cache-Control: no-store} and {@code Vary: Accept} ({@link RefusalFormat#refusalFields}).
 * Stateless.
 */
final class GateResponses {
  private GateResponses() {}

  /** A refusal: {@code fields} (in order), then the refusal fields, then the body. */
  static GateResponse refusal(int status, List<Map.Entry<String, String>> fields, RefusalFormat format, byte[] body) {
    List<Map.Entry<String, String>> all = new ArrayList<>(fields);
    RefusalFormat.refusalFields((name, value) -> set(all, name, value)); // Cache-Control: no-store, Vary: Accept
    return new GateResponse(status, all, format.mediaType(), body, true);
  }

  /** Replaces every field named {@code name} (case-insensitively) with one of {@code value}. */
  static void set(List<Map.Entry<String, String>> fields, String name, String value) {
    fields.removeIf(e -> e.getKey().equalsIgnoreCase(name));
    fields.add(Map.entry(name, value));
  }

  /**
   * 503 temporary-reduced-capacity with the Retry-After every front end sends, for a store that
   * cannot decide under {@link Gate.StoreFailureMode#REFUSE} ({@link ServiceErrors#storeUnavailable}); a
   * shorter wait when the store says this process is overloaded ({@link StoreException#overloaded}).
   */
  static GateResponse unavailable(GateRequest request, URI origin, boolean overloaded) {
    Refusal refusal = ServiceErrors.storeUnavailable(overloaded, origin);
    RefusalFormat format = RefusalFormat.negotiate(request.header("Accept"));
    return refusal(refusal.status(),
        List.of(Map.entry(HeaderNames.RETRY_AFTER, Long.toString(ServiceErrors.storeRetryAfterSeconds(overloaded)))),
        format, format.body(refusal, null));
  }
}
