package dev.headroom.gateway.internal.telemetry;

import dev.headroom.gateway.config.TelemetrySettings;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.registry.otlp.OtlpConfig;
import io.micrometer.registry.otlp.OtlpMeterRegistry;
import io.netty.handler.codec.http.HttpRequest;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporterBuilder;
import io.opentelemetry.sdk.common.Clock;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The gateway's telemetry once {@code telemetry.otlp.endpoint} is set: a tracer whose spans are
 * batched to {@code <endpoint>/v1/traces} (OTLP/HTTP, protobuf), and a Micrometer registry that
 * pushes every gateway meter to {@code <endpoint>/v1/metrics} each {@code telemetry.otlp.interval}.
 *
 * <p>Sampling is parent-based: a request whose {@code traceparent} says its trace is sampled (or
 * not) is recorded (or not) as its caller decided; a trace the gateway starts is recorded with the
 * probability {@code telemetry.sampler}, decided from the trace id (W3C Trace Context, section
 * 3.2.2.5, and OpenTelemetry's TraceIdRatioBased) so every participant agrees.
 *
 * <p>Exporting runs on the SDK's and Micrometer's own threads, never on an event loop; a
 * collector that is down costs dropped batches (the SDK logs them), never a request. Thread-safe.
 */
public final class Telemetry implements AutoCloseable {
  /** The instrumentation scope of the gateway's spans. */
  static final String SCOPE = "dev.headroom.gateway";
  /** How long {@link #close} waits for the last spans to leave. */
  private static final Duration FLUSH_ON_CLOSE = Duration.ofSeconds(5);

  private final SdkTracerProvider tracers;
  final Tracer tracer;
  final Clock clock;
  private final OtlpMeterRegistry otlpMeters;
  private final CompositeMeterRegistry meters;

  private Telemetry(SdkTracerProvider tracers, Clock clock, OtlpMeterRegistry otlpMeters, CompositeMeterRegistry meters) {
    this.tracers = tracers;
    this.tracer = tracers.get(SCOPE);
    this.clock = clock;
    this.otlpMeters = otlpMeters;
    this.meters = meters;
  }

  /** Starts exporting, spans stamped by the SDK's clock ({@link Clock#getDefault()}). */
  public static Telemetry start(TelemetrySettings settings, String serviceName, MeterRegistry scraped,
      io.micrometer.core.instrument.Clock meterClock) {
    return start(settings, serviceName, scraped, meterClock, Clock.getDefault());
  }

  /**
   * Starts exporting. {@code scraped} is the registry the admin port serves; the gateway's meters
   * go to {@link #meters()}, which records in both.
   *
   * @param serviceName the configuration's {@code service.name}, unless {@code telemetry.serviceName} says otherwise
   * @param meterClock the clock the meters step on
   * @param clock the clock spans are stamped with ({@link Clock#getDefault()} but in tests)
   */
  public static Telemetry start(TelemetrySettings settings, String serviceName, MeterRegistry scraped,
      io.micrometer.core.instrument.Clock meterClock, Clock clock) {
    String name = settings.serviceName().orElse(serviceName);
    Resource resource = Resource.getDefault().merge(Resource.create(
        Attributes.of(AttributeKey.stringKey("service.name"), name)));
    OtlpHttpSpanExporterBuilder exporter = OtlpHttpSpanExporter.builder()
        .setEndpoint(under(settings.endpoint(), "v1/traces"));
    settings.headers().forEach(exporter::addHeader);
    SdkTracerProvider tracers = SdkTracerProvider.builder()
        .setClock(clock)
        .setResource(resource)
        .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(settings.sampler())))
        .addSpanProcessor(BatchSpanProcessor.builder(exporter.build()).build())
        .build();
    OtlpMeterRegistry otlp = new OtlpMeterRegistry(new Config(settings, name), meterClock);
    CompositeMeterRegistry both = new CompositeMeterRegistry(meterClock);
    both.add(scraped);
    both.add(otlp);
    return new Telemetry(tracers, clock, otlp, both);
  }

  /** {@code path} under the endpoint's own path: a collector behind a prefix keeps it. */
  static String under(URI endpoint, String path) {
    String base = endpoint.toString();
    return base.endsWith("/") ? base + path : base + "/" + path;
  }

  /** Where the gateway's meters are registered: the scraped registry and the OTLP one. */
  public MeterRegistry meters() {
    return meters;
  }

  /**
   * Opens the server span of one exchange, a child of the request's {@code traceparent} when it
   * carries a valid one. Called on the event loop when the request head has been read.
   *
   * @param routeName the matched route's name; null for a request answered from its head alone
   * @param routePath the matched route's path pattern ({@code /api/{id}}), the span's low-cardinality name
   * @param secure whether the client connection is TLS
   * @param protocolVersion the client's HTTP version as {@code network.protocol.version} says it ({@code 1.1}, {@code 2})
   */
  public ExchangeSpan exchange(HttpRequest request, String routeName, String routePath, boolean secure,
      String protocolVersion) {
    Context parent = W3CTraceContextPropagator.getInstance().extract(Context.root(), request.headers(),
        HeaderCarrier.INSTANCE);
    return ExchangeSpan.open(this, parent, request, routeName, routePath, secure, protocolVersion);
  }

  /** Sends what is left (the last spans, one last push of the meters) and stops. */
  @Override
  public void close() {
    tracers.shutdown().join(FLUSH_ON_CLOSE.toMillis(), TimeUnit.MILLISECONDS);
    meters.remove(otlpMeters);
    otlpMeters.close();
  }

  /** Micrometer's OTLP settings from {@code telemetry}: nothing read from the environment. */
  private record Config(TelemetrySettings settings, String serviceName) implements OtlpConfig {
    @Override
    public String get(String key) {
      return null; // every setting below is the configuration's; the rest keep their defaults
    }

    @Override
    public String url() {
      return under(settings.endpoint(), "v1/metrics");
    }

    @Override
    public Map<String, String> headers() {
      return settings.headers();
    }

    @Override
    public Duration step() {
      return settings.interval();
    }

    @Override
    public Map<String, String> resourceAttributes() {
      return Map.of("service.name", serviceName);
    }
  }
}
