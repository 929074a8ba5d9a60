package dev.headroom.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.vend.format.RateLimitExtension;
import dev.headroom.vend.format.Scope;
import dev.headroom.vend.format.VendDuration;
import dev.headroom.vend.format.VendError;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a vend response body says about limits (seed 003, "Data (Response)", "Rate Limit
 * Exceeded", "Multiple Scopes"): the extension data per scope and the {@code RATE_LIMITED} error.
 *
 * <p>Read as the client reads RateLimit fields (draft-09 section 7): a scope whose data is
 * malformed (a missing or negative {@code limit}/{@code remaining}, a {@code resets_in} that is not
 * {@code {value, unit}}, an unknown scope name) is left out and the others are kept; a
 * {@code retry_after} that is malformed is ignored (the Retry-After header, if any, then says the
 * wait). Immutable.
 *
 * @param limits one per scope; empty when the body carried no (usable) extension data
 * @param rateLimited the {@code RATE_LIMITED} error, when the body carried one
 * @param retryAfter {@code details.retry_after} of that error
 */
record VendReading(List<Limit> limits, Optional<VendError> rateLimited, Optional<Duration> retryAfter) {

  static final VendReading NONE = new VendReading(List.of(), Optional.empty(), Optional.empty());

  /**
   * One scope's data as a budget.
   *
   * @param policy the budget's name: {@code vend:<scope>}, or {@code vend:function:<function>}
   * @param selector the vend calls it paces: {@link VendCall#ALL_CALLS} or the function's label
   */
  record Limit(String policy, String selector, long limit, long remaining, Duration resetsIn, Optional<Duration> window) {}

  /** Reads a response body; {@link #NONE} when it is not a vend envelope. */
  static VendReading parse(byte[] body, Optional<String> function) {
    if (body == null || body.length == 0) {
      return NONE;
    }
    JsonNode root;
    try {
      root = VendCall.MAPPER.readTree(body);
    } catch (IOException notJson) {
      return NONE;
    }
    if (root == null || !root.isObject()) {
      return NONE;
    }
    VendError error = null;
    Duration retryAfter = null;
    JsonNode errors = root.get("errors");
    if (errors != null && errors.isArray()) {
      for (int i = 0; i < errors.size() && error == null; i++) {
        JsonNode e = errors.get(i);
        if (e.isObject() && VendError.RATE_LIMITED.equals(text(e.get("code")))) {
          JsonNode details = e.get("details");
          error = VendError.of(VendError.RATE_LIMITED, Optional.ofNullable(text(e.get("message"))).orElse(""),
              e.path("retryable").asBoolean(true), details instanceof ObjectNode ? (ObjectNode) details : null);
          if (details != null && details.has("retry_after")) {
            try {
              retryAfter = VendDuration.fromJson("errors[" + i + "].details.retry_after", details.get("retry_after"))
                  .toDuration();
            } catch (IllegalArgumentException malformed) {
              retryAfter = null;
            }
          }
        }
      }
    }
    List<Limit> limits = new ArrayList<>();
    JsonNode extensions = root.get("extensions");
    if (extensions != null && extensions.isArray()) {
      for (JsonNode ext : extensions) {
        if (ext.isObject() && RateLimitExtension.URN.equals(text(ext.get("urn"))) && ext.get("data") instanceof ObjectNode) {
          JsonNode data = ext.get("data");
          JsonNode scopes = data.get("scopes");
          if (scopes != null && scopes.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = scopes.fields(); it.hasNext(); ) {
              Map.Entry<String, JsonNode> s = it.next();
              limit(s.getKey(), s.getValue(), function).ifPresent(limits::add);
            }
          } else {
            limit(text(data.get("scope")), data, function).ifPresent(limits::add);
          }
          break;
        }
      }
    }
    return new VendReading(List.copyOf(limits), Optional.ofNullable(error), Optional.ofNullable(retryAfter));
  }

  private static Optional<Limit> limit(String scopeName, JsonNode data, Optional<String> function) {
    if (scopeName == null || data == null || !data.isObject()) {
      return Optional.empty();
    }
    Scope scope;
    try {
      scope = Scope.fromToken(scopeName);
    } catch (IllegalArgumentException unknownScope) {
      return Optional.empty();
    }
    JsonNode limit = data.get("limit");
    JsonNode remaining = data.get("remaining");
    if (!count(limit) || !count(remaining) || !data.has("resets_in")) {
      return Optional.empty();
    }
    Duration resetsIn;
    Optional<Duration> window = Optional.empty();
    try {
      resetsIn = VendDuration.fromJson("resets_in", data.get("resets_in")).toDuration();
      if (data.has("window")) {
        window = Optional.of(VendDuration.fromJson("window", data.get("window")).toDuration()).filter(d -> !d.isZero());
      }
    } catch (IllegalArgumentException malformed) {
      return Optional.empty();
    }
    String policy;
    String selector;
    if (scope == Scope.FUNCTION && function.isPresent()) {
      policy = VendCall.functionLabel(function.get());
      selector = policy;
    } else {
      // A function scope of a call whose function is unknown paces every vend call: the safe side.
      policy = "vend:" + scope.token();
      selector = VendCall.ALL_CALLS;
    }
    return Optional.of(new Limit(policy, selector, limit.asLong(), remaining.asLong(), resetsIn, window));
  }

  private static boolean count(JsonNode n) {
    return n != null && n.canConvertToExactIntegral() && n.canConvertToLong() && n.asLong() >= 0;
  }

  private static String text(JsonNode n) {
    return n != null && n.isTextual() ? n.textValue() : null;
  }
}
