package dev.headroom.gateway.internal.telemetry;

import io.netty.handler.codec.http.HttpHeaders;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;

/**
 * Netty's header map as W3C Trace Context reads and writes it: {@code traceparent} and
 * {@code tracestate} of the client's request in, {@code traceparent} of the request sent upstream
 * out, set (not added) so the upstream sees one, the gateway's. Stateless.
 */
enum HeaderCarrier implements TextMapGetter<HttpHeaders>, TextMapSetter<HttpHeaders> {
  INSTANCE;

  @Override
  public Iterable<String> keys(HttpHeaders carrier) {
    return carrier.names();
  }

  @Override
  public String get(HttpHeaders carrier, String key) {
    return carrier == null ? null : carrier.get(key);
  }

  @Override
  public void set(HttpHeaders carrier, String key, String value) {
    carrier.set(key, value);
  }
}
