package dev.headroom.gateway;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.stream.Collectors;

/**
 * An OTLP/HTTP collector in the test's process: a JDK HttpServer on a free loopback port that
 * decodes what arrives at {@code /v1/traces} and {@code /v1/metrics} (protobuf, OTLP 1.x) with the
 * OpenTelemetry protocol's own classes, answers 200 with an empty response message, and keeps the
 * spans, the metric names, the resources and the request headers.
 */
final class OtlpReceiver implements AutoCloseable {
  /** A span with the resource it came under. */
  record Received(Span span, Resource resource) {
    String attribute(String key) {
      return OtlpReceiver.attribute(span.getAttributesList(), key);
    }
  }

  final BlockingQueue<Received> spans = new LinkedBlockingQueue<>();
  final BlockingQueue<Metric> metrics = new LinkedBlockingQueue<>();
  final List<Resource> metricResources = new ArrayList<>();
  /** The request headers of the last export to each path. */
  final Map<String, Map<String, String>> headers = new ConcurrentHashMap<>();
  private final HttpServer server;

  OtlpReceiver() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.createContext("/v1/traces", ex -> answer(ex, () -> {
      ExportTraceServiceRequest r = ExportTraceServiceRequest.parseFrom(ex.getRequestBody().readAllBytes());
      r.getResourceSpansList().forEach(rs -> rs.getScopeSpansList().forEach(ss -> ss.getSpansList()
          .forEach(s -> spans.add(new Received(s, rs.getResource())))));
    }));
    server.createContext("/v1/metrics", ex -> answer(ex, () -> {
      ExportMetricsServiceRequest r = ExportMetricsServiceRequest.parseFrom(ex.getRequestBody().readAllBytes());
      r.getResourceMetricsList().forEach(rm -> {
        synchronized (metricResources) {
          metricResources.add(rm.getResource());
        }
        rm.getScopeMetricsList().forEach(sm -> metrics.addAll(sm.getMetricsList()));
      });
    }));
    server.start();
  }

  private interface Decode {
    void run() throws IOException;
  }

  private void answer(HttpExchange ex, Decode decode) throws IOException {
    headers.put(ex.getRequestURI().getPath(), ex.getRequestHeaders().entrySet().stream()
        .collect(Collectors.toMap(e -> e.getKey().toLowerCase(), e -> e.getValue().get(0), (a, b) -> a)));
    decode.run();
    ex.getResponseHeaders().set("Content-Type", "application/x-protobuf");
    ex.sendResponseHeaders(200, -1);
    ex.close();
  }

  String endpoint() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  static String attribute(List<KeyValue> attributes, String key) {
    for (KeyValue kv : attributes) {
      if (kv.getKey().equals(key)) {
        AnyValue v = kv.getValue();
        return switch (v.getValueCase()) {
          case STRING_VALUE -> v.getStringValue();
          case INT_VALUE -> Long.toString(v.getIntValue());
          case ARRAY_VALUE -> v.getArrayValue().getValuesList().stream().map(AnyValue::getStringValue)
              .collect(Collectors.joining(","));
          default -> v.toString();
        };
      }
    }
    return null;
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
