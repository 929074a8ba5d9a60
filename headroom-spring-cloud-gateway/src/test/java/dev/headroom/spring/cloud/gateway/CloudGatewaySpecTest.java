package dev.headroom.spring.cloud.gateway;

import dev.headroom.ManualTicker;
import dev.headroom.QuotaPolicy;
import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.conformance.HttpAdapterSpec;
import dev.headroom.conformance.SpecFixture;
import dev.headroom.conformance.SpecRoute;
import dev.headroom.conformance.SpecUpstream;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.webflux.ReactiveUserResolver;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.context.support.GenericApplicationContext;
import reactor.core.publisher.Mono;

/**
 * The behaviour specification every Headroom front end passes ({@link HttpAdapterSpec}: the servlet
 * filter on three containers, the starter, the gateway, WebFlux), run against Spring Cloud Gateway
 * with the {@code Headroom} filter: a Spring Cloud Gateway application on Netty on a loopback port,
 * in front of {@link SpecUpstream}, configured only through properties the way an application is:
 * each fixture route is a route of {@code spring.cloud.gateway.server.webflux.routes} (its path and method as
 * predicates, {@code HEAD} beside {@code GET}) with a {@code Headroom} filter naming its policies,
 * dialects and field rules, or, for a route with rules only the settings model's route states (a
 * policy's method condition, counting per policy, a response charge header), a bare {@code Headroom}
 * filter and {@code headroom.cloud-gateway.routes.ID}; the policies are
 * {@code headroom.cloud-gateway.policies}. The fixture's
 * store and clock are the application's {@code Store} and {@code Ticker} beans; its user is the
 * {@link SpecFixture#USER_HEADER} header ({@link ReactiveUserResolver}). {@link SpecFixture#VEND_PATH}
 * is a route whose {@code Headroom} filter has the vend scope {@code function}.
 *
 * <p>The upstream's discarded bytes and asynchronous endpoints are {@link SpecUpstream}'s.
 */
class CloudGatewaySpecTest extends HttpAdapterSpec {

  private SpecUpstream upstream;
  private GatewayApp.Running app;

  @Override
  protected URI start(SpecFixture fixture) throws Exception {
    upstream = SpecUpstream.start(fixture);
    app = GatewayApp.start(properties(fixture, upstream.port()), ctx -> {
      GenericApplicationContext g = (GenericApplicationContext) ctx;
      g.registerBean("specStore", Store.class, fixture::store);
      g.registerBean("specTicker", Ticker.class, fixture::ticker);
      g.registerBean("specUsers", ReactiveUserResolver.class,
          () -> exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst(SpecFixture.USER_HEADER)));
    });
    return app.base();
  }

  @Override
  protected void stop() {
    if (app != null) {
      app.close();
    }
    if (upstream != null) {
      upstream.close();
    }
  }

  @Override
  protected void reduceCapacity(String policy, double factor) {
    app.bean(HeadroomRoutes.class).reduceCapacity(policy, factor);
  }

  /** The fixture as an application's properties. */
  static Map<String, Object> properties(SpecFixture fixture, int upstreamPort) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("headroom.cloud-gateway.service.name", SpecFixture.SERVICE);
    p.put("headroom.cloud-gateway.service.description", SpecFixture.DESCRIPTION);
    p.put("headroom.cloud-gateway.why", SpecFixture.WHY);
    p.put("headroom.cloud-gateway.store.on-failure", "refuse");
    p.put("headroom.cloud-gateway.headers.omit-on-redirect", Boolean.toString(SpecFixture.OMIT_ON_REDIRECT));
    for (SpecRoute r : fixture.routes()) {
      for (QuotaPolicy q : r.policies()) {
        String at = "headroom.cloud-gateway.policies." + q.name() + ".";
        p.put(at + "quota", Long.toString(q.quota()));
        p.put(at + "window", q.windowSeconds() + "s");
        p.put(at + "unit", q.unit().token());
        p.put(at + "algorithm", q.algorithm().token());
        p.put(at + "partitioning", q.partitioning().map(Object::toString).orElse("global"));
        p.put(at + "lease-timeout", q.leaseTimeout().toSeconds() + "s");
        r.escalation(q.name()).ifPresent(e -> {
          p.put(at + "escalation-threshold", Integer.toString(e.threshold()));
          p.put(at + "escalation-block", e.block().toSeconds() + "s");
        });
      }
    }
    String vendAt = "headroom.cloud-gateway.policies." + SpecFixture.VEND_POLICY + ".";
    p.put(vendAt + "quota", "1");
    p.put(vendAt + "window", SpecFixture.WINDOW.toSeconds() + "s");
    p.put(vendAt + "partitioning", "global");
    p.put("spring.cloud.gateway.server.webflux.routes[0].id", "vend");
    p.put("spring.cloud.gateway.server.webflux.routes[0].uri", "http://127.0.0.1:" + upstreamPort);
    p.put("spring.cloud.gateway.server.webflux.routes[0].predicates[0]", "Path=" + SpecFixture.VEND_PATH);
    p.put("spring.cloud.gateway.server.webflux.routes[0].filters[0].name", "Headroom");
    p.put("spring.cloud.gateway.server.webflux.routes[0].filters[0].args.path", SpecFixture.VEND_PATH);
    p.put("spring.cloud.gateway.server.webflux.routes[0].filters[0].args.vend.function", SpecFixture.VEND_POLICY);
    int i = 1;
    for (SpecRoute r : fixture.routes()) {
      String at = "spring.cloud.gateway.server.webflux.routes[" + i++ + "].";
      boolean byProperties = !r.when().isEmpty() || !r.counting().isEmpty() || r.chargeHeader().isPresent();
      String id = byProperties ? r.template().substring(1).replace('/', '-') : r.method() + " " + r.template();
      p.put(at + "id", id);
      p.put(at + "uri", "http://127.0.0.1:" + upstreamPort);
      p.put(at + "predicates[0]", "Path=" + r.template());
      p.put(at + "predicates[1]", "Method=" + String.join(",", r.methods()) + (r.methods().contains("GET") ? ",HEAD" : ""));
      if (r.policies().isEmpty()) {
        continue;
      }
      String f = at + "filters[0].";
      if (byProperties) {
        // the rules only the settings model's route states: headroom.cloud-gateway.routes.ID
        p.put(f + "name", "Headroom");
        routeProperties(p, "headroom.cloud-gateway.routes." + id + ".", r);
        continue;
      }
      p.put(f + "name", "Headroom");
      p.put(f + "args.policies", r.policies().stream().map(QuotaPolicy::name).collect(Collectors.joining(",")));
      p.put(f + "args.path", r.template());
      p.put(f + "args.methods", r.method());
      p.put(f + "args.dialects", r.dialects().stream().sorted().map(HeaderDialect::token).collect(Collectors.joining(",")));
      p.put(f + "args.listed", Boolean.toString(r.listed()));
      r.fields().jitter().ifPresent(j -> p.put(f + "args.jitter", j.toSeconds() + "s"));
      r.fields().onlyNearExhaustion().ifPresent(n -> p.put(f + "args.only-near-exhaustion", Double.toString(n)));
      r.fields().ratioCap().ifPresent(c -> {
        p.put(f + "args.cap-remaining-to-reset-ratio", Double.toString(c.factor()));
        p.put(f + "args.cap-min-window", c.minWindow().toSeconds() + "s");
      });
    }
    return p;
  }

  /** One fixture route as {@code headroom.cloud-gateway.routes.ID.*}. */
  private static void routeProperties(Map<String, Object> p, String at, SpecRoute r) {
    p.put(at + "path", r.template());
    for (int k = 0; k < r.methods().size(); k++) {
      p.put(at + "methods[" + k + "]", r.methods().get(k));
    }
    for (int k = 0; k < r.policies().size(); k++) {
      p.put(at + "policies[" + k + "]", r.policies().get(k).name());
    }
    p.put(at + "dialects", r.dialects().stream().sorted().map(HeaderDialect::token).collect(Collectors.joining(",")));
    p.put(at + "listed", Boolean.toString(r.listed()));
    r.when().forEach((policy, methods) -> p.put(at + "when[" + policy + "]", String.join(",", methods)));
    r.counting().forEach((policy, c) -> p.put(at + "count[" + policy + "]", c.name().toLowerCase(Locale.ROOT)));
    r.chargeHeader().ifPresent(h -> {
      p.put(at + "charge-header", h);
      p.put(at + "max-cost", Long.toString(SpecFixture.MAX_CHARGE));
    });
  }
}
