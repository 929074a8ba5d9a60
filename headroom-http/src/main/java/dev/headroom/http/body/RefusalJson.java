package dev.headroom.http.body;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * Writes a {@link Refusal} as JSON, members in the order {@link Refusal}'s class comment lists them
 * (RFC 9457 members first, then Graceful Boundaries core, limit class, draft-09 section 5
 * {@code violated-policies}, guidance, class fields, extensions); absent members are not written.
 * The values were validated when the refusal was built, so writing cannot refuse them.
 * Stateless and thread-safe.
 */
final class RefusalJson {
  static final JsonFactory JSON = new JsonFactory();

  private RefusalJson() {}

  static void write(JsonGenerator g, Refusal r) throws IOException {
    g.writeStartObject();
    str(g, "type", r.type);
    str(g, "title", r.title);
    g.writeNumberField("status", r.status);
    str(g, "detail", r.detail);
    str(g, "instance", r.instance);
    str(g, "error", r.error);
    str(g, "why", r.why);
    str(g, "limit", r.limit);
    if (r.retryAfterSeconds != null) {
      g.writeNumberField("retryAfterSeconds", r.retryAfterSeconds);
    }
    str(g, "limitId", r.limitId);
    str(g, "limitType", r.limitType);
    str(g, "scope", r.scope);
    if (r.windowResetAt != null) {
      g.writeStringField("windowResetAt", r.windowResetAt.toString());
    }
    if (!r.violatedPolicies.isEmpty()) {
      array(g, "violated-policies", r.violatedPolicies);
    }
    if (r.cached != null) {
      g.writeBooleanField("cached", r.cached);
    }
    str(g, "cachedResultUrl", r.cachedResultUrl);
    str(g, "alternativeEndpoint", r.alternativeEndpoint);
    str(g, "upgradeUrl", r.upgradeUrl);
    str(g, "humanUrl", r.humanUrl);
    str(g, "field", r.field);
    str(g, "expected", r.expected);
    if (r.allowedMethods != null) {
      array(g, "allowedMethods", r.allowedMethods);
    }
    str(g, "authUrl", r.authUrl);
    if (r.scanAvailable != null) {
      g.writeBooleanField("scanAvailable", r.scanAvailable);
    }
    str(g, "scanUrl", r.scanUrl);
    str(g, "statusUrl", r.statusUrl);
    for (Map.Entry<String, Object> e : r.extensions.entrySet()) {
      g.writeFieldName(e.getKey());
      value(g, e.getValue());
    }
    g.writeEndObject();
  }

  private static void str(JsonGenerator g, String name, String value) throws IOException {
    if (value != null) {
      g.writeStringField(name, value);
    }
  }

  private static void array(JsonGenerator g, String name, List<String> values) throws IOException {
    g.writeArrayFieldStart(name);
    for (String v : values) {
      g.writeString(v);
    }
    g.writeEndArray();
  }

  static void value(JsonGenerator g, Object v) throws IOException {
    if (v == null) {
      g.writeNull();
    } else if (v instanceof String) {
      g.writeString((String) v);
    } else if (v instanceof Boolean) {
      g.writeBoolean((Boolean) v);
    } else if (v instanceof Long || v instanceof Integer) {
      g.writeNumber(((Number) v).longValue());
    } else if (v instanceof BigInteger) {
      g.writeNumber((BigInteger) v);
    } else if (v instanceof Double) {
      g.writeNumber((Double) v);
    } else if (v instanceof BigDecimal) {
      g.writeNumber((BigDecimal) v);
    } else if (v instanceof List) {
      g.writeStartArray();
      for (Object o : (List<?>) v) {
        value(g, o);
      }
      g.writeEndArray();
    } else if (v instanceof Map) {
      g.writeStartObject();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        g.writeFieldName(String.valueOf(e.getKey()));
        value(g, e.getValue());
      }
      g.writeEndObject();
    } else {
      throw new IllegalStateException("extension values are checked on the way in, got " + v.getClass());
    }
  }
}
