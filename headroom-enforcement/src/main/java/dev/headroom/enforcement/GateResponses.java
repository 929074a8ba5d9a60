package dev.headroom.enforcement;

import dev.headroom.StoreException;
import dev.headroom.http.HeaderNames;
import dev.headroom.http.body.ProblemType;
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
    return refusal(status, fields, format, body, null, null);
  }

  /**
   * As {@link #refusal(int, List, RefusalFormat, byte[])}, metered as {@code problem}
   * ({@link #problem(Refusal)}) of {@code policy} (either may be null).
   */
  static GateResponse refusal(int status, List<Map.Entry<String, String>> fields, RefusalFormat format, byte[] body,
      String problem, String policy) {
    List<Map.Entry<String, String>> all = new ArrayList<>(fields);
    RefusalFormat.refusalFields((name, value) -> set(all, name, value)); // Cache-Control: no-store, Vary: Accept
    return new GateResponse(status, all, format.mediaType(), body, true, problem, policy);
  }

  /**
   * How a refusal is named in meters ({@link HeadroomMeters#PROBLEM}): its problem type's name
   * (the fragment of the IANA type URI, such as {@code quota-exceeded}), else its Graceful
   * Boundaries error token in kebab-case, else {@code status-NNN}.
   */
  static String problem(Refusal refusal) {
    if (refusal.problemType().isPresent()) {
      return problem(refusal.problemType().get());
    }
    return refusal.error().map(e -> e.replace('_', '-')).orElse("status-" + refusal.status());
  }

  /** The name of a problem type: the fragment of its IANA URI, such as {@code quota-exceeded}. */
  static String problem(ProblemType type) {
    String uri = type.uri();
    return uri.substring(uri.indexOf('#') + 1);
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
        format, format.body(refusal, null), problem(refusal), null);
  }
}
