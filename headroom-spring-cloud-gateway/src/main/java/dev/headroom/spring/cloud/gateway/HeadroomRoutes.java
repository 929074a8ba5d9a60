package dev.headroom.spring.cloud.gateway;

import dev.headroom.http.embed.Admission;
import dev.headroom.http.embed.Answer;
import dev.headroom.http.embed.Gate;
import dev.headroom.http.embed.GateBuilder;
import dev.headroom.http.embed.RouteRules;
import dev.headroom.http.embed.Verdict;
import dev.headroom.http.enforcement.Escalation;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The Headroom routes of a Spring Cloud Gateway application and the one {@link Gate} (headroom-http,
 * the enforcement the servlet and WebFlux filters share) that enforces them. Each route's
 * {@code Headroom} filter registers its rules here, conditioned on that route's id; the gate is
 * rebuilt when the set changes (routes load or refresh), keeping run-time capacity reductions.
 *
 * <h2>One request, non-blocking end to end</h2>
 * <ol>
 * <li>The user (for {@code user} partitions) is resolved as a {@link Mono} ({@link GatewayUsers}).
 * <li>The gate decides through the store's asynchronous calls ({@link Gate#decideAsync}). A
 *   decision that completes later, on the store's I/O thread, continues on
 *   {@link Schedulers#parallel()}: the store's event loop never runs the rest of the exchange.
 * <li>Answered by the gate (a refusal, the discovery document): status, fields and body written;
 *   the upstream is not called.
 * <li>Admitted: the exchange goes on to the upstream; the RateLimit fields are added just before
 *   the response is committed, for the upstream's status (so omit-on-redirect applies, draft-09
 *   section 6); when the response completes (or fails, or the client goes away) the content bytes
 *   handed to the server are charged and concurrency leases released, through the store's
 *   asynchronous calls ({@link Admission#completeAsync}), nobody waiting for them.
 * </ol>
 *
 * <p>Thread-safe.
 */
public final class HeadroomRoutes {

  private final Consumer<GateBuilder<ServerWebExchange>> settings;
  private final Map<String, Escalation> escalations;
  private final GatewayUsers users;
  private final Scheduler continuations = Schedulers.parallel();
  private final Map<String, RouteRules> rules = new LinkedHashMap<>();
  private final Map<String, Double> reductions = new LinkedHashMap<>();
  private volatile Gate<ServerWebExchange> gate;

  /**
   * @param settings everything but the routes: limiter, refusals, ticker, discovery, field rules
   * @param escalations by policy name, applied to the routes that have the policy
   * @param users who the user of {@code user} partitions is
   */
  HeadroomRoutes(Consumer<GateBuilder<ServerWebExchange>> settings, Map<String, Escalation> escalations,
      GatewayUsers users) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.escalations = Map.copyOf(escalations);
    this.users = Objects.requireNonNull(users, "users");
    this.gate = build();
  }

  /** Registers (or replaces) a route's rules; the gate is rebuilt with them. */
  synchronized void register(String routeId, RouteRules route) {
    rules.put(routeId, route);
    gate = build();
  }

  /** The gate in force now: its limits, reduced capacity and discovery document. */
  public Gate<ServerWebExchange> gate() {
    return gate;
  }

  /**
   * Lowers (or, with 1, restores) a policy's capacity at run time: the policy runs at
   * {@code max(1, floor(q * factor))} on the same counters and refuses 503
   * {@code temporary-reduced-capacity} (draft-09 section 5.2).
   *
   * @throws IllegalArgumentException naming the policy or factor when either cannot be used
   */
  public synchronized void reduceCapacity(String policy, double factor) {
    gate.reduceCapacity(policy, factor);
    if (factor >= 1) {
      reductions.remove(policy);
    } else {
      reductions.put(policy, factor);
    }
  }

  private Gate<ServerWebExchange> build() {
    GateBuilder<ServerWebExchange> b = Gate.builder();
    settings.accept(b);
    rules.forEach((id, r) -> b.route(r, exchange -> id.equals(routeId(exchange))));
    escalations.forEach((policy, e) -> {
      if (rules.values().stream().anyMatch(r -> r.policies().stream().anyMatch(q -> q.name().equals(policy)))) {
        b.escalation(policy, e);
      }
    });
    Gate<ServerWebExchange> built = b.build();
    reductions.forEach(built::reduceCapacity);
    return built;
  }

  private static String routeId(ServerWebExchange exchange) {
    Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
    return route == null ? null : route.getId();
  }

  /** Enforces the current gate on one exchange; {@code chain} is the rest of the exchange. */
  Mono<Void> filter(ServerWebExchange exchange, Function<ServerWebExchange, Mono<Void>> chain) {
    Gate<ServerWebExchange> g = gate;
    return users.user(exchange).map(Optional::of).defaultIfEmpty(Optional.empty())
        .flatMap(user -> verdict(g, exchange, user))
        .flatMap(verdict -> switch (verdict.kind()) {
          case ANSWER -> answer(exchange, verdict.answer());
          case PASS, UNDECIDED -> chain.apply(exchange);
          case ADMIT -> admitted(exchange, chain, verdict.admission());
        });
  }

  private Mono<Verdict> verdict(Gate<ServerWebExchange> g, ServerWebExchange exchange, Optional<String> user) {
    CompletableFuture<Verdict> v = g.decideAsync(new ExchangeRequest(exchange.getRequest(), user), exchange)
        .toCompletableFuture();
    return v.isDone() ? Mono.fromFuture(v) : Mono.fromFuture(v).publishOn(continuations);
  }

  private static Mono<Void> answer(ServerWebExchange exchange, Answer answer) {
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
    return response.writeWith(Mono.just(response.bufferFactory().wrap(answer.body())));
  }

  private static Mono<Void> admitted(ServerWebExchange exchange, Function<ServerWebExchange, Mono<Void>> chain,
      Admission admission) {
    ServerHttpResponse response = exchange.getResponse();
    response.beforeCommit(() -> {
      admission.writeFields(status(response), response.getHeaders()::add);
      return Mono.empty();
    });
    MeteredResponse metered = admission.chargesContent() ? new MeteredResponse(response) : null;
    ServerWebExchange limited = metered == null ? exchange : exchange.mutate().response(metered).build();
    return chain.apply(limited).doFinally(signal -> {
      // an error not yet answered becomes a 500 after this filter: it counts as one
      int status = signal == SignalType.ON_ERROR && !response.isCommitted() ? 500 : status(response);
      admission.completeAsync(status, metered == null ? 0 : metered.bytesWritten());
    });
  }

  private static int status(ServerHttpResponse response) {
    HttpStatusCode s = response.getStatusCode();
    return s == null ? 200 : s.value();
  }
}
