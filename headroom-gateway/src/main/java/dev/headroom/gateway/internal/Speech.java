package dev.headroom.gateway.internal;

import dev.headroom.Decision;
import dev.headroom.PartitionKey;
import dev.headroom.Ticker;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.gateway.GatewayConfig.Policy;
import dev.headroom.gateway.GatewayConfig.Route;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.RateLimitHeaders;
import dev.headroom.http.partition.ClientAddressResolver;
import dev.headroom.http.partition.PartitionKeyDerivation;
import dev.headroom.http.partition.RequestView;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The gateway's {@link HttpSpeech} on top of headroom-http: header dialects
 * ({@link RateLimitHeaders}, one prebuilt per route), partition keys
 * ({@link PartitionKeyDerivation} behind a {@link ClientAddressResolver} that trusts the
 * configured proxies). Bodies and the discovery document go through {@link Bodies}.
 * Immutable and thread-safe.
 */
final class Speech implements HttpSpeech {
  private final Map<Route, RateLimitHeaders> headers = new HashMap<>();
  private final Map<String, PartitionKeyDerivation> derivations = new HashMap<>();
  private final Bodies bodies;

  private Speech(GatewayConfig config, Ticker ticker) {
    ClientAddressResolver resolver = ClientAddressResolver.builder()
        .trustedProxies(config.trustedProxies()).build();
    for (Policy p : config.policies().values()) {
      derivations.put(p.name(), PartitionKeyDerivation.parse(p.partition(), resolver));
    }
    for (Route r : config.routes()) {
      headers.put(r, RateLimitHeaders.builder()
          .dialects(r.dialects().stream().map(HeaderDialect::fromToken).toList())
          .ticker(ticker)
          .policies(r.policies().stream().map(n -> config.policies().get(n).quota()).toList())
          .build());
    }
    this.bodies = new Bodies(config, derivations);
  }

  static Speech of(GatewayConfig config, Ticker ticker) {
    return new Speech(config, ticker);
  }

  @Override
  public void rateLimitHeaders(Route route, Decision decision, int status, HttpHeaders out) {
    headers.get(route).write(decision, status, out::add);
  }

  @Override
  public LocalResponse refusal(Refusal refusal, boolean html) {
    LocalResponse r = bodies.refusal(refusal, html);
    if (refusal.decision() != null) {
      // Retry-After and the fields come from the dialect writer so that t and Retry-After agree
      // (draft-ietf-httpapi-ratelimit-headers-09 section 6).
      headers.get(refusal.route()).write(refusal.decision(), r.status().code(), r.headers()::add);
      if (refusal.retryAfterSeconds() > refusal.decision().retryAfterSeconds()) {
        r.headers().set("Retry-After", Long.toString(refusal.retryAfterSeconds()));
      }
    } else {
      r.headers().set("Retry-After", Long.toString(refusal.retryAfterSeconds()));
    }
    return r;
  }

  @Override
  public LocalResponse error(GatewayError error, boolean html) {
    return bodies.error(error, html);
  }

  @Override
  public PartitionKey partition(Policy policy, RequestFacts facts) {
    return derivations.get(policy.name()).derive(new NettyRequestView(facts));
  }

  @Override
  public boolean prefersHtml(String accept) {
    return Bodies.prefersHtml(accept);
  }

  @Override
  public Discovery discovery(GatewayConfig config, Map<String, Long> effectiveQuotas, Set<String> reduced) {
    return bodies.discovery(effectiveQuotas, reduced);
  }

  /** A Netty request seen through headroom-http's {@link RequestView}. */
  private record NettyRequestView(RequestFacts facts) implements RequestView {
    @Override
    public Optional<String> remoteAddress() {
      return facts.peer() == null ? Optional.empty() : Optional.of(facts.peer().getHostAddress());
    }

    @Override
    public String method() {
      return facts.method();
    }

    @Override
    public String path() {
      return facts.path();
    }

    @Override
    public Optional<String> route() {
      return Optional.ofNullable(facts.routeTemplate());
    }

    @Override
    public List<String> headers(String name) {
      return facts.headers().getAll(name);
    }

    @Override
    public Optional<String> user() {
      return Optional.empty();
    }
  }
}
