package dev.headroom.webflux;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import dev.headroom.conformance.SpecEndpoint;
import dev.headroom.conformance.SpecFixture;
import dev.headroom.conformance.SpecRoute;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateBuilder;
import dev.headroom.http.path.PathTemplate;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.VendRateLimits;
import dev.headroom.vend.VendRoute;
import dev.headroom.vend.format.Scope;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebHandler;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The specification's application on a real Reactor Netty server: a {@link WebHandler} serving the
 * {@link SpecEndpoint}s behind the filter, without blocking an event loop (the blocking endpoints
 * wait on a bounded-elastic thread, where blocking is allowed).
 */
final class SpecServer implements AutoCloseable {

  private final DisposableServer server;

  private SpecServer(DisposableServer server) {
    this.server = server;
  }

  /** Serves {@code handler} behind {@code filter} on a loopback port. */
  static SpecServer start(WebHandler handler, WebFilter filter) {
    // made here, not lazily on an event loop: creating it reads its defaults from a file
    HttpHandler http = WebHttpHandlerBuilder.webHandler(handler).filter(filter)
        .codecConfigurer(ServerCodecConfigurer.create()).build();
    DisposableServer s = HttpServer.create().host("127.0.0.1").port(0)
        .handle(new ReactorHttpHandlerAdapter(http)).bindNow(Duration.ofSeconds(30));
    return new SpecServer(s);
  }

  URI base() {
    return URI.create("http://127.0.0.1:" + server.port());
  }

  @Override
  public void close() {
    server.disposeNow(Duration.ofSeconds(30));
  }

  /** The gate for the fixture, as the servlet's SpecApplication configures its filter. */
  static Gate<ServerWebExchange> gate(SpecFixture fixture) {
    GateBuilder<ServerWebExchange> b = Gate.<ServerWebExchange>builder()
        .limiter(fixture.limiter())
        .refusals(fixture.refusals())
        .ticker(fixture.ticker())
        .omitOnRedirect(SpecFixture.OMIT_ON_REDIRECT)
        .storeFailureMode(Gate.StoreFailureMode.REFUSE)
        .discovery(SpecFixture.SERVICE, SpecFixture.DESCRIPTION);
    for (SpecRoute r : fixture.routes()) {
      if (!r.policies().isEmpty()) {
        b.route(r.rules());
        r.policies().forEach(p -> r.escalation(p.name()).ifPresent(e -> b.escalation(p.name(), e)));
      }
    }
    return b.build();
  }

  /** The filter for the fixture: the user from {@link SpecFixture#USER_HEADER}, error bodies on. */
  static HeadroomWebFilter filter(Gate<ServerWebExchange> gate, SpecFixture fixture) {
    return HeadroomWebFilter.builder(gate)
        .users(exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst(SpecFixture.USER_HEADER)))
        .errorBodies(true)
        .vendRoute(vendRoute(fixture))
        .build();
  }

  /** {@link SpecFixture#VEND_PATH}: one call a minute per function, on the fixture's limiter. */
  static VendRoute vendRoute(SpecFixture fixture) {
    QuotaPolicy calls = QuotaPolicy.builder(SpecFixture.VEND_POLICY).quota(1).window(SpecFixture.WINDOW)
        .algorithm(Algorithm.FIXED_WINDOW).build();
    return VendRoute.builder(SpecFixture.VEND_PATH, VendRateLimiter.builder(VendRateLimits.builder()
        .limit(Scope.FUNCTION, calls).build()).limiter(fixture.limiter()).build()).build();
  }

  /** A vend service's success envelope (seed 003) for every call. */
  static final String VEND_RESULT = "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"spec\","
      + "\"result\":{\"ok\":true}}";

  /** Serves the endpoints of the fixture's routes; 404 (an error, as WebFlux's own) elsewhere. */
  static WebHandler handler(SpecFixture fixture) {
    List<SpecRoute> routes = fixture.routes();
    return exchange -> {
      String path = ExchangeRequest.decodedPath(exchange.getRequest().getPath());
      String m = exchange.getRequest().getMethod().name();
      String method = m.equals("HEAD") ? "GET" : m;
      SpecEndpoint endpoint = routes.stream()
          .filter(r -> r.methods().contains(method) && PathTemplate.parse(r.template()).matchesDecoded(path))
          .map(SpecRoute::endpoint).findFirst().orElse(null);
      ServerHttpResponse res = exchange.getResponse();
      if (path.equals(SpecFixture.VEND_PATH)) { // the envelope, replayed by the filter
        return DataBufferUtils.join(exchange.getRequest().getBody()).doOnNext(DataBufferUtils::release)
            .then(Mono.defer(() -> {
              res.getHeaders().setContentType(MediaType.APPLICATION_JSON);
              return res.writeWith(Mono.just(res.bufferFactory().wrap(VEND_RESULT.getBytes(StandardCharsets.UTF_8))));
            }));
      }
      if (endpoint == null) {
        return Mono.error(new ResponseStatusException(HttpStatus.NOT_FOUND));
      }
      String to = exchange.getRequest().getQueryParams().getFirst("to");
      switch (endpoint) {
        case OK:
          return text(res, "ok");
        case BLOCKING:
        case BLOCKING_ASYNC:
          return Mono.fromRunnable(() -> fixture.hold().enter()).subscribeOn(Schedulers.boundedElastic())
              .then(Mono.defer(() -> text(res, "done")));
        case REDIRECT:
          if ("send".equals(to) || "status".equals(to)) {
            res.setStatusCode(HttpStatus.valueOf("send".equals(to) ? 302 : 303));
            res.getHeaders().setLocation(URI.create("/spec/free"));
            return res.setComplete();
          }
          return text(res, "ok");
        case BYTES:
          return bytes(exchange, res);
        case STATUS: {
          var q = exchange.getRequest().getQueryParams();
          if (q.getFirst("charge") != null) {
            res.getHeaders().set(SpecFixture.CHARGE_HEADER, q.getFirst("charge"));
          }
          res.setStatusCode(HttpStatus.valueOf(q.getFirst("status") == null ? 200 : Integer.parseInt(q.getFirst("status"))));
          res.getHeaders().setContentType(new MediaType("text", "plain", StandardCharsets.UTF_8));
          return res.writeWith(Mono.just(res.bufferFactory().wrap("ok".getBytes(StandardCharsets.UTF_8))));
        }
        default:
          return Mono.error(new AssertionError(endpoint));
      }
    };
  }

  /**
   * {@link SpecEndpoint#BYTES}: {@code n} bytes in two buffers. Bytes to discard are made and
   * released without ever being handed to the server, which is how a reactive handler throws away
   * what it had prepared.
   */
  private static Mono<Void> bytes(ServerWebExchange exchange, ServerHttpResponse res) {
    var q = exchange.getRequest().getQueryParams();
    int n = Integer.parseInt(q.getFirst("n"));
    if (q.getFirst("discard") != null) {
      DataBuffer discarded = res.bufferFactory().allocateBuffer(Integer.parseInt(q.getFirst("discard")));
      DataBufferUtils.release(discarded);
    }
    res.setStatusCode(HttpStatus.OK);
    res.getHeaders().setContentType("true".equals(q.getFirst("writer"))
        ? new MediaType("text", "plain", StandardCharsets.UTF_8) : MediaType.APPLICATION_OCTET_STREAM);
    byte[] xs = new byte[n];
    Arrays.fill(xs, (byte) 'x');
    return res.writeWith(Flux.just(Arrays.copyOfRange(xs, 0, n / 2), Arrays.copyOfRange(xs, n / 2, n))
        .map(b -> res.bufferFactory().wrap(b)));
  }

  private static Mono<Void> text(ServerHttpResponse res, String body) {
    res.setStatusCode(HttpStatus.OK);
    res.getHeaders().setContentType(new MediaType("text", "plain", StandardCharsets.UTF_8));
    return res.writeWith(Mono.just(res.bufferFactory().wrap(body.getBytes(StandardCharsets.UTF_8))));
  }
}
