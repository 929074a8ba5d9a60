package dev.headroom.webflux;

import dev.headroom.enforcement.Admission;
import dev.headroom.enforcement.GateResponse;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.Verdict;
import dev.headroom.vend.VendRoute;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Headroom in a Spring WebFlux application: a {@link WebFilter} that writes what
 * headroom-enforcement's {@link Gate} decides (the same enforcement as the servlet filter and the Spring Cloud Gateway
 * filter: routes, policies, plans, cost, escalation, reduced capacity, dialects, JSON and HTML
 * refusals, the discovery document), never blocking a thread.
 *
 * <pre>{@code
 * Gate<ServerWebExchange> gate = Gate.<ServerWebExchange>builder()
 *     .limiter(QuotaLimiter.of(RedisStore.builder().uri("redis://127.0.0.1:6379").build()))
 *     .refusals(refusals)
 *     .route(RouteRules.builder("/api/items/{id}").methods("GET").policy(perClient).build())
 *     .discovery("Items API", "Catalogue of items.")
 *     .build();
 * WebFilter headroom = HeadroomWebFilter.builder(gate).build();
 * }</pre>
 *
 * <h2>One request, non-blocking end to end</h2>
 * <ol>
 * <li>The user (for {@code user} partitions) is resolved as a {@link Mono}
 *   ({@link ReactiveUserResolver}; the exchange's principal by default).
 * <li>The gate decides through the store's asynchronous calls ({@link Gate#decideAsync}: Lettuce's
 *   asynchronous API for Redis). A decision that completes later, on the store's I/O thread, is
 *   handed to a Reactor scheduler ({@link Schedulers#parallel()} by default) before anything else
 *   runs: the store's event loop never runs the application.
 * <li>Answered by the gate (a refusal, the discovery document): status, fields and body written;
 *   the application is not called.
 * <li>Admitted: the application runs; the RateLimit fields are added just before the response is
 *   committed ({@link ServerHttpResponse#beforeCommit}), for the status it set, so status rules such
 *   as omit-on-redirect apply (draft-09 section 6). When the application's response completes (or
 *   fails, or the client goes away), content bytes handed to the server are charged (none for HEAD)
 *   and concurrency leases released, through the store's asynchronous calls
 *   ({@link Admission#completeAsync}), nobody waiting for them.
 * </ol>
 *
 * <p>Vend routes (seed 003) are served as the servlet filter serves them ({@link Builder#vendRoute}),
 * decided through the store's asynchronous call. Error bodies for the framework's errors are
 * opt-in ({@link Builder#errorBodies}): Spring Boot's error handling answers those otherwise.
 *
 * <p>Immutable and thread-safe.
 */
public final class HeadroomWebFilter implements WebFilter, Ordered {

  /** The default order: after Spring Security's filter chain (-100), which sets the principal. */
  public static final int DEFAULT_ORDER = 0;

  private final Gate<ServerWebExchange> gate;
  private final ReactiveUserResolver users;
  private final Scheduler continuations;
  private final int order;
  private final boolean errorBodies;
  private final List<VendRoute> vendRoutes;

  private HeadroomWebFilter(Builder b) {
    this.vendRoutes = List.copyOf(b.vendRoutes);
    this.errorBodies = b.errorBodies;
    this.gate = b.gate;
    this.users = b.users;
    this.continuations = b.continuations;
    this.order = b.order;
  }

  /** Starts a filter that writes what {@code gate} decides; build the gate with {@link Gate#builder()}. */
  public static Builder builder(Gate<ServerWebExchange> gate) {
    return new Builder(gate);
  }

  /** The enforcement this filter writes (its limits, capacity and discovery document). */
  public Gate<ServerWebExchange> gate() {
    return gate;
  }

  @Override
  public int getOrder() {
    return order;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    if (!vendRoutes.isEmpty() && exchange.getRequest().getMethod().name().equals("POST")) {
      String path = ExchangeRequest.decodedPath(exchange.getRequest().getPath());
      for (VendRoute v : vendRoutes) {
        if (v.matches("POST", path)) { // a POST: never a discovery request
          return VendExchange.serve(exchange, chain, v, gate, this::user, continuations);
        }
      }
    }
    Mono<Void> handled = user(exchange)
        .flatMap(user -> verdict(exchange, user))
        .flatMap(verdict -> switch (verdict.kind()) {
          case ANSWER -> answer(exchange, verdict.answer());
          case PASS, UNDECIDED -> chain.filter(exchange);
          case ADMIT -> admitted(exchange, chain, verdict.admission());
        });
    if (!errorBodies) {
      return handled;
    }
    return handled.onErrorResume(ResponseStatusException.class, e -> {
      ServerHttpResponse response = exchange.getResponse();
      if (response.isCommitted() || e.getStatusCode().value() < 400) {
        return Mono.error(e);
      }
      List<String> allowed = new ArrayList<>();
      e.getHeaders().getAllow().forEach(m -> allowed.add(m.name()));
      response.getHeaders().clear();
      return answer(exchange, gate.serviceError(new ExchangeRequest(exchange.getRequest(), Optional.empty()),
          e.getStatusCode().value(), allowed));
    });
  }

  private Mono<Optional<String>> user(ServerWebExchange exchange) {
    return users.user(exchange).map(Optional::of).defaultIfEmpty(Optional.empty());
  }

  /**
   * The gate's verdict; one that completes later (on a store's thread) is handed to the scheduler.
   * When the exchange is cancelled (the client went away) before a later verdict arrives, an
   * admission it brings is completed at once, so that its leases are not held until they time out.
   */
  private Mono<Verdict> verdict(ServerWebExchange exchange, Optional<String> user) {
    CompletableFuture<Verdict> v = gate.decideAsync(new ExchangeRequest(exchange.getRequest(), user), exchange)
        .toCompletableFuture();
    if (v.isDone()) {
      return Mono.fromFuture(v);
    }
    return Mono.fromFuture(v, true).publishOn(continuations).doOnCancel(() -> v.thenAccept(verdict -> {
      if (verdict.kind() == Verdict.Kind.ADMIT) {
        verdict.admission().completeAsync(CLIENT_CLOSED, 0);
      }
    }));
  }

  /** The status an admission completes with when the client went away before any response (nginx's 499). */
  static final int CLIENT_CLOSED = 499;

  /** Writes a response the gate answered itself: status, fields, body (none for HEAD). */
  static Mono<Void> answer(ServerWebExchange exchange, GateResponse answer) {
    ServerHttpResponse response = exchange.getResponse();
    response.setStatusCode(HttpStatusCode.valueOf(answer.status()));
    HttpHeaders headers = response.getHeaders();
    for (Map.Entry<String, String> f : answer.fields()) {
      headers.add(f.getKey(), f.getValue());
    }
    if (answer.contentType().isEmpty()) {
      return response.setComplete(); // 304
    }
    headers.set(HttpHeaders.CONTENT_TYPE, answer.contentType().get());
    headers.setContentLength(answer.contentLength());
    if (exchange.getRequest().getMethod().name().equals("HEAD")) {
      return response.setComplete();
    }
    DataBuffer body = response.bufferFactory().wrap(answer.body());
    return response.writeWith(Mono.just(body));
  }

  /** An admitted request: the application runs; fields before commit; completion at the end. */
  private static Mono<Void> admitted(ServerWebExchange exchange, WebFilterChain chain, Admission admission) {
    ServerHttpResponse response = exchange.getResponse();
    response.beforeCommit(() -> {
      admission.writeFields(status(response), response.getHeaders()::add);
      return Mono.empty();
    });
    MeteredResponse metered = admission.chargesContent() ? new MeteredResponse(response) : null;
    ServerWebExchange limited = metered == null ? exchange : exchange.mutate().response(metered).build();
    int[] failed = {0};
    return chain.filter(limited)
        .doOnError(e -> failed[0] = e instanceof ResponseStatusException r ? r.getStatusCode().value() : 500)
        .doFinally(signal -> {
          // an error not yet answered is answered after this filter with its status: it counts as that
          int status = signal == SignalType.ON_ERROR && !response.isCommitted() ? failed[0] : status(response);
          List<String> charge = admission.route().chargeHeader()
              .map(h -> HeaderValues.of(response.getHeaders(), h)).orElse(List.of());
          admission.completeAsync(status, metered == null ? 0 : metered.bytesWritten(), charge);
        });
  }

  private static int status(ServerHttpResponse response) {
    HttpStatusCode s = response.getStatusCode();
    return s == null ? 200 : s.value();
  }

  /** Configures a {@link HeadroomWebFilter}. Not thread-safe. */
  public static final class Builder {
    private final Gate<ServerWebExchange> gate;
    private ReactiveUserResolver users = ReactiveUserResolver.principal();
    private Scheduler continuations = Schedulers.parallel();
    private int order = DEFAULT_ORDER;
    private boolean errorBodies;
    private final List<VendRoute> vendRoutes = new ArrayList<>();

    private Builder(Gate<ServerWebExchange> gate) {
      this.gate = Objects.requireNonNull(gate, "gate");
    }

    /** Who the user of {@code user} partitions is; the exchange's principal by default. */
    public Builder users(ReactiveUserResolver users) {
      this.users = Objects.requireNonNull(users, "users");
      return this;
    }

    /**
     * Where a decision that completed on a store's I/O thread continues: a scheduler of
     * non-blocking threads; {@link Schedulers#parallel()} by default.
     */
    public Builder continuations(Scheduler scheduler) {
      this.continuations = Objects.requireNonNull(scheduler, "continuations");
      return this;
    }

    /** The filter's order among the application's web filters; {@link #DEFAULT_ORDER} by default. */
    public Builder order(int order) {
      this.order = order;
      return this;
    }

    /**
     * Answers the framework's errors that reach this filter ({@code ResponseStatusException}: 404
     * for a path nothing serves, 405, ...) with the Graceful Boundaries body every front end sends
     * for that status ({@link Gate#serviceError}; Graceful Boundaries section 6). Off
     * by default: a Spring Boot application answers through its own error handling.
     */
    public Builder errorBodies(boolean on) {
      this.errorBodies = on;
      return this;
    }

    /**
     * A vend route (seed 003, the vend rate-limit extension): its POSTs are vend calls, decided per
     * vend scope through the store's asynchronous call before the gate's routes are matched
     * ({@link VendRoute}); the application's answer to a call is buffered whole.
     */
    public Builder vendRoute(VendRoute route) {
      vendRoutes.add(Objects.requireNonNull(route, "vendRoute"));
      return this;
    }

    /** Builds the filter. */
    public HeadroomWebFilter build() {
      return new HeadroomWebFilter(this);
    }
  }
}
