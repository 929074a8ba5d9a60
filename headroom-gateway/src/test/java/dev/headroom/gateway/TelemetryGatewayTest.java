package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.headroom.ManualTicker;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Traces and metrics over OTLP ({@code telemetry}), read as a collector receives them: one server
 * span per exchange named by the route (OpenTelemetry semantic conventions, HTTP server spans), its
 * attributes for an allowed and a refused request, the store's decision as a child span, W3C Trace
 * Context carried through (the client's trace continues upstream, with the gateway's span as the
 * upstream's parent: W3C Trace Context section 3.2), the meters pushed; and, with no
 * {@code telemetry}, no OpenTelemetry class loaded at all.
 */
class TelemetryGatewayTest {
  private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String CLIENT_SPAN = "00f067aa0ba902b7";
  private static final String API_KEY = "telemetry-test-key";

  @TempDir Path dir;
  final TestUpstream upstream = new TestUpstream();
  final OtlpReceiver receiver = new OtlpReceiver();
  final HttpClient client = HttpClient.newHttpClient();
  Gateway gateway;

  TelemetryGatewayTest() throws IOException {}

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    upstream.close();
    receiver.close();
  }

  private String yaml(String telemetry) {
    return """
        service: {name: Telemetry test}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        %s
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          one: {quota: 1, window: 1h, partition: api-key, why: Limits keep the service available for everyone.}
        routes:
          - {name: echo, method: GET, path: "/echo/{id}", upstream: up, policies: [one], dialect: ietf}
        """.formatted(telemetry, upstream.port());
  }

  private HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + path))
        .version(HttpClient.Version.HTTP_1_1);
    if (headers.length > 0) {
      b.headers(headers);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The spans exported once the gateway closed (closing sends what is batched). */
  private List<OtlpReceiver.Received> spansAfterClose() {
    gateway.close();
    gateway = null;
    List<OtlpReceiver.Received> all = new ArrayList<>();
    receiver.spans.drainTo(all);
    return all;
  }

  private static String hex(com.google.protobuf.ByteString b) {
    return HexFormat.of().formatHex(b.toByteArray());
  }

  @Test
  void anAllowedAndARefusedRequestEachMakeOneServerSpanNamedByTheirRoute() throws Exception {
    gateway = Gateway.builder(GatewayConfig.parse(yaml("""
        telemetry:
          serviceName: edge-test
          otlp: {endpoint: "%s", headers: {x-collector-key: k1}}
        """.formatted(receiver.endpoint())), "telemetry.yaml")).ticker(ManualTicker.atFixedInstant()).start();
    HttpResponse<String> allowed = get("/echo/1?token=secret", "X-Api-Key", API_KEY,
        "traceparent", "00-" + TRACE_ID + "-" + CLIENT_SPAN + "-01", "tracestate", "vendor=x");
    HttpResponse<String> refused = get("/echo/2", "X-Api-Key", API_KEY, "Accept", "application/json");
    assertThat(allowed.statusCode()).isEqualTo(200);
    assertThat(refused.statusCode()).isEqualTo(429);
    TestUpstream.Seen seen = upstream.requests.poll(10, TimeUnit.SECONDS);

    List<OtlpReceiver.Received> spans = spansAfterClose();
    List<OtlpReceiver.Received> server = spans.stream().filter(s -> s.span().getKind() == Span.SpanKind.SPAN_KIND_SERVER)
        .toList();
    assertThat(server).as("%s", spans).extracting(s -> s.span().getName()).containsExactly("GET /echo/{id}", "GET /echo/{id}");
    assertThat(OtlpReceiver.attribute(server.get(0).resource().getAttributesList(), "service.name")).isEqualTo("edge-test");
    assertThat(receiver.headers.get("/v1/traces")).containsEntry("x-collector-key", "k1");

    Span a = server.get(0).span();
    assertThat(hex(a.getTraceId())).as("the client's trace continues").isEqualTo(TRACE_ID);
    assertThat(hex(a.getParentSpanId())).as("the client's span is the parent").isEqualTo(CLIENT_SPAN);
    OtlpReceiver.Received ar = server.get(0);
    assertThat(ar.attribute("http.request.method")).isEqualTo("GET");
    assertThat(ar.attribute("url.path")).isEqualTo("/echo/1");
    assertThat(ar.attribute("http.route")).isEqualTo("/echo/{id}");
    assertThat(ar.attribute("headroom.route")).isEqualTo("echo");
    assertThat(ar.attribute("server.address")).isEqualTo("127.0.0.1");
    assertThat(ar.attribute("network.protocol.version")).isEqualTo("1.1");
    assertThat(ar.attribute("http.response.status_code")).isEqualTo("200");
    assertThat(ar.attribute("headroom.outcome")).isEqualTo("allowed");
    assertThat(ar.attribute("headroom.policies")).isEqualTo("one");
    assertThat(ar.attribute("headroom.problem.type")).isNull();

    // the upstream got the same trace, with the gateway's span as its parent, and the tracestate as sent
    assertThat(seen).isNotNull();
    assertThat(seen.headers().get("traceparent")).containsExactly("00-" + TRACE_ID + "-" + hex(a.getSpanId()) + "-01");
    assertThat(seen.headers().get("tracestate")).containsExactly("vendor=x");

    OtlpReceiver.Received rr = server.get(1);
    assertThat(rr.span().getTraceId()).as("a request without traceparent starts a trace").isNotEqualTo(a.getTraceId());
    assertThat(rr.span().getParentSpanId().isEmpty()).isTrue();
    assertThat(rr.attribute("headroom.outcome")).isEqualTo("refused");
    assertThat(rr.attribute("headroom.policy")).isEqualTo("one");
    assertThat(rr.attribute("http.response.status_code")).isEqualTo("429");
    assertThat(rr.attribute("headroom.problem.type"))
        .isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
    assertThat(rr.attribute("headroom.retry_after")).isEqualTo(refused.headers().firstValue("Retry-After").orElseThrow());

    // each decision is a child span of its exchange's
    List<OtlpReceiver.Received> decisions = spans.stream().filter(s -> s.span().getName().equals("headroom.decision"))
        .toList();
    assertThat(decisions).hasSize(2);
    assertThat(decisions).extracting(d -> d.span().getParentSpanId())
        .containsExactlyInAnyOrder(a.getSpanId(), rr.span().getSpanId());
    assertThat(decisions).allSatisfy(d ->
        assertThat(d.span().getEndTimeUnixNano()).isGreaterThanOrEqualTo(d.span().getStartTimeUnixNano()));
  }

  @Test
  void aRequestNoRouteMatchesIsNamedByItsMethodAlone() throws Exception {
    gateway = Gateway.builder(GatewayConfig.parse(yaml("telemetry: {otlp: {endpoint: \"" + receiver.endpoint() + "\"}}"),
        "telemetry.yaml")).start();
    assertThat(get("/nowhere/" + System.identityHashCode(this)).statusCode()).isEqualTo(404);
    List<OtlpReceiver.Received> spans = spansAfterClose();
    assertThat(spans).extracting(s -> s.span().getName()).containsExactly("GET");
    assertThat(spans.get(0).attribute("headroom.outcome")).isEqualTo("local");
    assertThat(spans.get(0).attribute("http.route")).isNull();
    assertThat(OtlpReceiver.attribute(spans.get(0).resource().getAttributesList(), "service.name"))
        .as("service.name of the configuration by default").isEqualTo("Telemetry test");
  }

  @Test
  void aZeroSamplerRecordsNoTraceTheGatewayStartsButFollowsASampledCaller() throws Exception {
    gateway = Gateway.builder(GatewayConfig.parse(yaml("telemetry: {sampler: 0, otlp: {endpoint: \""
        + receiver.endpoint() + "\"}}"), "telemetry.yaml")).start();
    get("/echo/1", "X-Api-Key", API_KEY);
    get("/echo/2", "X-Api-Key", API_KEY + "2", "traceparent", "00-" + TRACE_ID + "-" + CLIENT_SPAN + "-01");
    upstream.requests.poll(10, TimeUnit.SECONDS);
    TestUpstream.Seen second = upstream.requests.poll(10, TimeUnit.SECONDS);
    List<OtlpReceiver.Received> server = spansAfterClose().stream()
        .filter(s -> s.span().getKind() == Span.SpanKind.SPAN_KIND_SERVER).toList();
    assertThat(server).hasSize(1);
    assertThat(hex(server.get(0).span().getTraceId())).isEqualTo(TRACE_ID);
    assertThat(second.headers().get("traceparent").get(0)).startsWith("00-" + TRACE_ID + "-").endsWith("-01");
  }

  @Test
  void theGatewaysMetersArePushedToTheCollector() throws Exception {
    gateway = Gateway.builder(GatewayConfig.parse(yaml("""
        telemetry: {otlp: {endpoint: "%s/", interval: 1s, headers: {x-collector-key: k2}}}
        """.formatted(receiver.endpoint())), "telemetry.yaml")).start();
    assertThat(get("/echo/1", "X-Api-Key", API_KEY).statusCode()).isEqualTo(200);
    gateway.close(); // closing pushes the meters once more
    gateway = null;
    List<Metric> metrics = new ArrayList<>();
    receiver.metrics.drainTo(metrics);
    assertThat(metrics).extracting(Metric::getName).contains("headroom.decisions", "headroom.store.latency",
        "headroom.upstream.latency");
    assertThat(receiver.headers.get("/v1/metrics")).containsEntry("x-collector-key", "k2");
    synchronized (receiver.metricResources) {
      assertThat(receiver.metricResources).allSatisfy(r ->
          assertThat(OtlpReceiver.attribute(r.getAttributesList(), "service.name")).isEqualTo("Telemetry test"));
    }
  }

  /**
   * Off costs nothing: a gateway without {@code telemetry}, in a process of its own, serves a
   * request without loading one OpenTelemetry class; the same process with it on does load them
   * (so the check can fail).
   */
  @Test
  void withoutTelemetryNoOpenTelemetryClassIsLoaded() throws Exception {
    Path off = dir.resolve("off.yaml");
    Files.writeString(off, yaml(""));
    Path on = dir.resolve("on.yaml");
    Files.writeString(on, yaml("telemetry: {otlp: {endpoint: \"" + receiver.endpoint() + "\"}}"));

    String withoutIt = loadedClasses(off);
    assertThat(withoutIt).contains("status 200").contains("dev.headroom.gateway.internal.proxy.ProxyExchange");
    assertThat(withoutIt.lines().filter(l -> l.contains("io.opentelemetry") || l.contains("io.micrometer.registry.otlp")))
        .isEmpty();
    assertThat(loadedClasses(on)).contains("status 200").contains("io.opentelemetry.sdk.trace.SdkTracerProvider");
  }

  private String loadedClasses(Path config) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-verbose:class", "-cp",
        System.getProperty("java.class.path"), TelemetryMain.class.getName(), config.toString(), "/echo/1")
        .redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return out;
  }

  @Test
  void aBadEndpointOrRatioIsOneLineNamingTheKeyTheValueAndWhatIsExpected() {
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml("""
        telemetry:
          sampler: 1.5
          otlp: {endpoint: "127.0.0.1:4317", interval: soon, headers: {"bad key": x}}
        """), "bad.yaml"), ConfigException.class);
    assertThat(e).isNotNull();
    assertThat(e.problems()).containsExactlyInAnyOrder(
        "telemetry.sampler: 1.5 is not valid; expected a ratio of traces to record from 0 to 1 (such as 0.1)",
        "telemetry.otlp.endpoint: \"127.0.0.1:4317\" is not valid; expected the collector's OTLP/HTTP URL, http:// or "
            + "https:// with a host (such as http://127.0.0.1:4318), without query or fragment",
        "telemetry.otlp.interval: \"soon\" is not valid; expected a duration: whole seconds (60) or a value such as "
            + "500ms, 30s, 5m, 1h, 1d or PT1H",
        "telemetry.otlp.headers.bad key: not a header name; expected an HTTP field name (RFC 9110 section 5.1)");
    ConfigException missing = catchThrowableOfType(() -> GatewayConfig.parse(yaml("telemetry: {serviceName: x}"),
        "bad.yaml"), ConfigException.class);
    assertThat(missing.problems()).containsExactly("telemetry.otlp: missing; expected a mapping");
  }
}
