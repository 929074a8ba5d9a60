package dev.headroom.gateway.config;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Traces and metrics over OTLP ({@code telemetry}): one server span per exchange and the
 * gateway's meters, sent to an OpenTelemetry collector over OTLP/HTTP with protobuf bodies.
 * Absent, the gateway creates no OpenTelemetry object at all.
 *
 * @param endpoint the collector's OTLP/HTTP base URL ({@code telemetry.otlp.endpoint}); spans go to
 *     {@code /v1/traces} under it, metrics to {@code /v1/metrics}
 * @param headers sent with every export ({@code telemetry.otlp.headers}), such as an API key
 * @param interval how often the meters are exported ({@code telemetry.otlp.interval})
 * @param serviceName the {@code service.name} resource attribute; empty for the configuration's
 *     {@code service.name}
 * @param sampler the fraction of traces the gateway starts that it records, from 0 to 1; a request
 *     whose {@code traceparent} says whether its trace is sampled follows it (parent-based)
 */
public record TelemetrySettings(URI endpoint, Map<String, String> headers, Duration interval,
    Optional<String> serviceName, double sampler) {

  /** The metrics export interval unless told otherwise: OpenTelemetry's own default. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(60);

  public TelemetrySettings {
    Objects.requireNonNull(endpoint, "endpoint");
    headers = Map.copyOf(headers);
    Objects.requireNonNull(interval, "interval");
    Objects.requireNonNull(serviceName, "serviceName");
    if (!(sampler >= 0 && sampler <= 1)) {
      throw new IllegalArgumentException("sampler: " + sampler + " is not valid; expected a ratio from 0 to 1");
    }
  }
}
