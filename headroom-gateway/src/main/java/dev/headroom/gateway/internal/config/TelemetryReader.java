package dev.headroom.gateway.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.headroom.gateway.config.TelemetrySettings;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads {@code telemetry}: {@code otlp.endpoint} (required once the section is there: an http(s)
 * URL without query or fragment), {@code otlp.headers} (names to strings), {@code otlp.interval}
 * (default 60s), {@code serviceName} and {@code sampler} (a ratio from 0 to 1, default 1).
 * Absent, telemetry is off.
 */
final class TelemetryReader extends SectionReader {
  TelemetryReader(List<String> problems) {
    super(problems);
  }

  Optional<TelemetrySettings> telemetry(JsonNode n) {
    if (n.isMissingNode() || !object("telemetry", n)) {
      return Optional.empty();
    }
    keys("telemetry", n, "otlp", "serviceName", "sampler");
    Optional<String> name = optionalText("telemetry.serviceName", n.path("serviceName"));
    if (name.isPresent() && name.get().isBlank()) {
      problem("telemetry.serviceName", n.path("serviceName"), "a service name, or no key for service.name");
      name = Optional.empty();
    }
    double sampler = 1;
    JsonNode s = n.path("sampler");
    if (!s.isMissingNode()) {
      if (s.isNumber() && s.asDouble() >= 0 && s.asDouble() <= 1) {
        sampler = s.asDouble();
      } else {
        problem("telemetry.sampler", s, "a ratio of traces to record from 0 to 1 (such as 0.1)");
      }
    }
    JsonNode otlp = n.path("otlp");
    if (!object("telemetry.otlp", otlp)) {
      return Optional.empty();
    }
    keys("telemetry.otlp", otlp, "endpoint", "headers", "interval");
    URI endpoint = endpoint(otlp.path("endpoint"));
    Map<String, String> headers = headers(otlp.path("headers"));
    Duration interval = duration("telemetry.otlp.interval", otlp.path("interval"), TelemetrySettings.DEFAULT_INTERVAL);
    if (endpoint == null || headers == null) {
      return Optional.empty();
    }
    return Optional.of(new TelemetrySettings(endpoint, headers, interval, name, sampler));
  }

  /** OTLP/HTTP only: a gRPC collector port (4317) speaks another protocol, which this exporter does not send. */
  private URI endpoint(JsonNode e) {
    String expected = "the collector's OTLP/HTTP URL, http:// or https:// with a host (such as http://127.0.0.1:4318)"
        + ", without query or fragment";
    if (!e.isTextual()) {
      problem("telemetry.otlp.endpoint", e, expected);
      return null;
    }
    try {
      URI uri = new URI(e.asText());
      if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null
          && uri.getRawQuery() == null && uri.getRawFragment() == null) {
        return uri;
      }
    } catch (URISyntaxException x) {
      // reported below, as any other URL that is not one
    }
    problem("telemetry.otlp.endpoint", e, expected);
    return null;
  }

  private Map<String, String> headers(JsonNode h) {
    Map<String, String> headers = new LinkedHashMap<>();
    if (h.isMissingNode()) {
      return headers;
    }
    if (!object("telemetry.otlp.headers", h)) {
      return null;
    }
    boolean ok = true;
    for (Iterator<Map.Entry<String, JsonNode>> it = h.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> f = it.next();
      if (!f.getKey().matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
        problems.add("telemetry.otlp.headers." + f.getKey() + ": not a header name; expected an HTTP field name (RFC 9110 section 5.1)");
        ok = false;
      } else if (!f.getValue().isTextual()) {
        problem("telemetry.otlp.headers." + f.getKey(), f.getValue(), "a string");
        ok = false;
      } else {
        headers.put(f.getKey(), f.getValue().asText());
      }
    }
    return ok ? headers : null;
  }
}
