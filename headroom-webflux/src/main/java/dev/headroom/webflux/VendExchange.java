package dev.headroom.webflux;

import dev.headroom.StoreException;
import dev.headroom.enforcement.GateResponse;
import dev.headroom.enforcement.Gate;
import dev.headroom.http.body.RefusalFormat;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.vend.CallIdentity;
import dev.headroom.vend.VendDecision;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.VendRoute;
import dev.headroom.vend.format.VendRequest;
import dev.headroom.vend.format.VendRequestException;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * One vend call through the WebFlux filter ({@link VendRoute}; seed 003), as the servlet filter
 * serves it, without blocking: the envelope read whole (bounded: a larger one is 413
 * {@code INVALID_REQUEST}, a malformed one 400), every applicable scope decided at once through the
 * store's asynchronous call ({@link VendRateLimiter#decideAsync}); refused: 429
 * {@code RATE_LIMITED} with {@code Retry-After} equal to {@code details.retry_after.value};
 * allowed: {@code vend.capabilities} answered here when the route says so, otherwise the
 * application answers the replayed envelope into a buffer and its response goes out with the
 * RateLimit fields and, for a 200, the extension data inserted (or the capabilities merged).
 * Leases are released, without waiting, once the response is written. Stateless.
 */
final class VendExchange {
  private VendExchange() {}

  static Mono<Void> serve(ServerWebExchange exchange, WebFilterChain chain, VendRoute route, Gate<?> gate,
      Function<ServerWebExchange, Mono<Optional<String>>> users, Scheduler continuations) {
    int max = route.reader().maxBytes();
    long declared = exchange.getRequest().getHeaders().getContentLength();
    if (declared > max) {
      return error(exchange.getResponse(), VendRequestException.bodyTooLarge(max, OptionalLong.of(declared)));
    }
    RateLimitHeaders headers = gate.headersFor(route.dialects());
    return DataBufferUtils.join(exchange.getRequest().getBody(), max)
        .map(VendExchange::bytes)
        .defaultIfEmpty(new byte[0])
        .flatMap(body -> users.apply(exchange).flatMap(user -> decide(exchange, chain, route, gate, headers, body,
            user, continuations)))
        .onErrorResume(DataBufferLimitException.class, e -> {
          exchange.getResponse().getHeaders().set(HttpHeaders.CONNECTION, "close"); // the rest is not read
          return error(exchange.getResponse(), VendRequestException.bodyTooLarge(max, OptionalLong.empty()));
        });
  }

  private static Mono<Void> decide(ServerWebExchange exchange, WebFilterChain chain, VendRoute route, Gate<?> gate,
      RateLimitHeaders headers, byte[] body, Optional<String> user, Scheduler continuations) {
    VendRateLimiter limiter = route.limiter();
    CompletableFuture<VendDecision> decision;
    try {
      VendRequest call = route.reader().parse(body);
      decision = limiter.decideAsync(call, identity(exchange, user)).toCompletableFuture();
    } catch (VendRequestException e) {
      return error(exchange.getResponse(), e);
    }
    Mono<VendDecision> decided = Mono.fromFuture(decision);
    if (!decision.isDone()) {
      decided = decided.publishOn(continuations);
    }
    return decided.flatMap(d -> answer(exchange, chain, route, headers, body, d)
            .doFinally(s -> d.decision().ifPresent(limiter.limiter()::releaseAsync)))
        .onErrorResume(e -> {
          Throwable why = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
          if (why instanceof VendRequestException) {
            return error(exchange.getResponse(), (VendRequestException) why);
          }
          if (why instanceof StoreException) {
            if (gate.storeFailureMode() == Gate.StoreFailureMode.ALLOW) {
              return chain.filter(replayed(exchange, body, exchange.getResponse()));
            }
            return HeadroomWebFilter.answer(exchange,
                gate.unavailable(new ExchangeRequest(exchange.getRequest(), Optional.empty())));
          }
          return Mono.error(why);
        });
  }

  private static Mono<Void> answer(ServerWebExchange exchange, WebFilterChain chain, VendRoute route,
      RateLimitHeaders headers, byte[] body, VendDecision d) {
    VendRateLimiter limiter = route.limiter();
    ServerHttpResponse response = exchange.getResponse();
    if (!d.allowed()) {
      response.setStatusCode(HttpStatusCode.valueOf(d.httpStatus()));
      return json(response, d.refuse(headers, response.getHeaders()::add));
    }
    if (d.request().isCapabilities() && route.answersCapabilities()) {
      response.setStatusCode(HttpStatusCode.valueOf(200));
      d.writeHeaders(headers, 200, response.getHeaders()::add);
      return write(response, MediaType.APPLICATION_JSON_VALUE, d.successResponse(limiter.capabilities()));
    }
    Buffered buffered = new Buffered(response);
    return chain.filter(replayed(exchange, body, buffered)).then(Mono.defer(() -> {
      byte[] out = buffered.content;
      HttpStatusCode s = response.getStatusCode();
      int status = s == null ? 200 : s.value();
      if (status == 200) {
        out = d.request().isCapabilities() ? limiter.mergeCapabilities(out) : d.decorate(out);
      }
      d.writeHeaders(headers, status, response.getHeaders()::add);
      response.getHeaders().setContentLength(out.length);
      return response.writeWith(Mono.just(response.bufferFactory().wrap(out)));
    }));
  }

  private static CallIdentity identity(ServerWebExchange exchange, Optional<String> user) {
    String caller = exchange.getRequest().getHeaders().getFirst(VendRateLimiter.CALLER_HEADER);
    try {
      return CallIdentity.of(caller, user.orElse(null));
    } catch (IllegalArgumentException e) {
      // a user that is no identifier counts as no user: the shared anonymous partition, as in the gateway
      return CallIdentity.of(caller, null);
    }
  }

  private static Mono<Void> error(ServerHttpResponse response, VendRequestException e) {
    response.setStatusCode(HttpStatusCode.valueOf(e.httpStatus()));
    return json(response, e.responseBody());
  }

  private static Mono<Void> json(ServerHttpResponse response, byte[] body) {
    return write(response, MediaType.APPLICATION_JSON_VALUE, body);
  }

  private static Mono<Void> write(ServerHttpResponse response, String type, byte[] body) {
    response.getHeaders().set(HttpHeaders.CONTENT_TYPE, type);
    RefusalFormat.refusalFields(response.getHeaders()::set);
    response.getHeaders().setContentLength(body.length);
    return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
  }

  private static byte[] bytes(DataBuffer b) {
    byte[] out = new byte[b.readableByteCount()];
    b.read(out);
    DataBufferUtils.release(b);
    return out;
  }

  /** The exchange with the envelope replayed as the request's body, answering into {@code response}. */
  private static ServerWebExchange replayed(ServerWebExchange exchange, byte[] body, ServerHttpResponse response) {
    ServerHttpRequestDecorator request = new ServerHttpRequestDecorator(exchange.getRequest()) {
      @Override
      public Flux<DataBuffer> getBody() {
        return Flux.defer(() -> Flux.just(exchange.getResponse().bufferFactory().wrap(body)));
      }
    };
    return exchange.mutate().request(request).response(response).build();
  }

  /** The application's response, kept whole instead of written (the extension data goes into it). */
  private static final class Buffered extends ServerHttpResponseDecorator {
    private volatile byte[] content = new byte[0];

    Buffered(ServerHttpResponse delegate) {
      super(delegate);
    }

    @Override
    public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
      return DataBufferUtils.join(Flux.from(body)).map(VendExchange::bytes).doOnNext(b -> content = b).then();
    }

    @Override
    public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
      return writeWith(Flux.from(body).concatMap(p -> p));
    }

    @Override
    public Mono<Void> setComplete() {
      return Mono.empty();
    }
  }
}
