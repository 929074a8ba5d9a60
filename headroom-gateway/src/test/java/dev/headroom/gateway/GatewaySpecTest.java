package dev.headroom.gateway;

import dev.headroom.QuotaPolicy;
import dev.headroom.conformance.HttpAdapterSpec;
import dev.headroom.conformance.SpecFixture;
import dev.headroom.conformance.SpecRoute;
import dev.headroom.conformance.SpecUpstream;
import dev.headroom.http.headers.HeaderDialect;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The behaviour specification the servlet filter and the Spring Boot starter pass
 * ({@link HttpAdapterSpec}), run against the gateway: the {@link SpecFixture}'s routes and policies
 * become a gateway configuration (one route per fixture route, named {@code METHOD template} so
 * that the discovery document's keys are the specification's; every policy with the fixture's
 * {@code why}), the gateway decides on the fixture's recording store and clock, and the
 * {@code SpecEndpoint}s are served by {@link SpecUpstream} as the upstream.
 *
 * <p>Where the gateway legitimately differs from a filter inside the application:
 * <ul>
 *   <li><b>Users.</b> A filter asks its host who the authenticated user is; the gateway runs
 *   outside the application and knows no user. The fixture's {@code user} partitioning becomes
 *   {@code header:X-Spec-User} (the request header the specification's host reads), so refusals
 *   report the Graceful Boundaries scope {@code key}, not {@code user} ({@link #userScope()}).
 *   Partitions are separate per user exactly as in the filter.</li>
 *   <li><b>Content bytes.</b> The gateway charges the request and the response body bytes it
 *   transferred; the filter only the response's. The specification's byte requests are GETs without
 *   content, so both charge the same; nothing is overridden.</li>
 *   <li><b>Discarded bytes and asynchronous endpoints</b> are the upstream's, as {@link SpecUpstream}
 *   says; the lease is the gateway's and ends when the proxied response completes either way.</li>
 * </ul>
 *
 * <p>Running it found three gateway defects, now fixed: HEAD on a GET route was 405 (RFC 9110
 * section 9.3.2; it is now the GET route's request, charged no content); a route without policies
 * was listed in the discovery document with no limits; and there was no way to leave RateLimit
 * fields off the upstream's redirects (draft-09 section 6), now {@code routes[].omitOnRedirect}.
 */
class GatewaySpecTest extends HttpAdapterSpec {

  SpecUpstream upstream;
  Gateway gateway;

  @Override
  protected URI start(SpecFixture fixture) throws Exception {
    upstream = SpecUpstream.start(fixture);
    gateway = Gateway.builder(GatewayConfig.parse(yaml(fixture, upstream.port()), "spec.yaml"))
        .ticker(fixture.ticker()).store(fixture.store()).threads(2).start();
    return URI.create("http://127.0.0.1:" + gateway.address().getPort());
  }

  /** A header-named user is a {@code key} scope (see the class comment). */
  @Override
  protected String userScope() {
    return "key";
  }

  /** Through the admin port, as an operator would: {@code POST /capacity?policy=NAME&factor=F}. */
  @Override
  protected void reduceCapacity(String policy, double factor) throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + gateway.adminAddress().orElseThrow().getPort() + "/capacity?policy=" + policy + "&factor=" + factor))
        .POST(HttpRequest.BodyPublishers.noBody()).timeout(TIMEOUT).build(),
        HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new AssertionError("POST /capacity answered " + r.statusCode() + ": " + r.body());
    }
  }

  @Override
  protected void stop() {
    if (gateway != null) {
      gateway.close();
    }
    if (upstream != null) {
      upstream.close();
    }
  }

  /** The fixture as a gateway configuration. */
  static String yaml(SpecFixture fixture, int upstreamPort) {
    Map<String, QuotaPolicy> policies = new LinkedHashMap<>();
    fixture.routes().forEach(r -> r.policies().forEach(p -> policies.put(p.name(), p)));
    StringBuilder y = new StringBuilder()
        .append("service: {name: '").append(SpecFixture.SERVICE).append("', description: '")
        .append(SpecFixture.DESCRIPTION).append("'}\n")
        .append("listen: {host: 127.0.0.1, port: 0}\n")
        .append("admin: {host: 127.0.0.1, port: 0}\n")
        .append("upstreams:\n  app: {url: 'http://127.0.0.1:").append(upstreamPort).append("'}\n")
        .append("policies:\n");
    for (QuotaPolicy p : policies.values()) {
      y.append("  ").append(p.name()).append(":\n")
          .append("    quota: ").append(p.quota()).append('\n')
          .append("    window: ").append(p.windowSeconds()).append("s\n")
          .append("    unit: ").append(p.unit().token()).append('\n')
          .append("    algorithm: ").append(p.algorithm().token()).append('\n')
          .append("    partition: '").append(partition(p.partitioning().map(Object::toString).orElse("global"))).append("'\n")
          .append("    leaseTimeout: ").append(p.leaseTimeout().toSeconds()).append("s\n")
          .append("    why: '").append(SpecFixture.WHY).append("'\n");
      for (SpecRoute r : fixture.routes()) {
        if (r.policies().contains(p)) {
          r.escalation(p.name()).ifPresent(e -> y.append("    escalation: {threshold: ").append(e.threshold())
              .append(", block: ").append(e.block().getSeconds()).append("s}\n"));
          // the gateway states these rules on the policy, not the route
          Optional.ofNullable(r.when().get(p.name())).ifPresent(m -> y.append("    when: {methods: [")
              .append(String.join(", ", m)).append("]}\n"));
          Optional.ofNullable(r.counting().get(p.name())).ifPresent(c -> y.append("    count: ")
              .append(c.name().toLowerCase(Locale.ROOT)).append('\n'));
        }
      }
    }
    y.append("  ").append(SpecFixture.VEND_POLICY).append(": {quota: 1, window: 60s, algorithm: fixed-window, why: '")
        .append(SpecFixture.WHY).append("'}\n");
    y.append("routes:\n");
    y.append("  - {name: vend, type: vend, path: '").append(SpecFixture.VEND_PATH).append("', upstream: app, vend: {limits: {function: ")
        .append(SpecFixture.VEND_POLICY).append("}}}\n");
    for (SpecRoute r : fixture.routes()) {
      y.append("  - name: '").append(String.join(",", r.methods())).append(' ').append(r.template()).append("'\n")
          .append("    methods: [").append(String.join(", ", r.methods())).append("]\n")
          .append("    path: '").append(r.template()).append("'\n")
          .append("    upstream: app\n")
          .append("    omitOnRedirect: ").append(SpecFixture.OMIT_ON_REDIRECT).append('\n')
          // the servlet filter's application errors are the application's own; the gateway, which
          // cannot know its upstream's, promises level 1 only when it normalises them
          .append("    normaliseErrors: true\n")
          .append("    policies: [").append(r.policies().stream().map(QuotaPolicy::name).collect(Collectors.joining(", ")))
          .append("]\n")
          .append("    dialect: [").append(r.dialects().stream().sorted().map(HeaderDialect::token)
              .collect(Collectors.joining(", "))).append("]\n")
          .append("    listed: ").append(r.listed()).append('\n');
      r.chargeHeader().ifPresent(h -> y.append("    cost: {chargeHeader: ").append(h).append(", max: ")
          .append(SpecFixture.MAX_CHARGE).append("}\n"));
      r.fields().jitter().ifPresent(j -> y.append("    jitter: ").append(j.getSeconds()).append("s\n"));
      r.fields().onlyNearExhaustion().ifPresent(n -> y.append("    onlyNearExhaustion: ").append(n).append('\n'));
      r.fields().ratioCap().ifPresent(c -> y.append("    capRemainingToResetRatio: {factor: ").append(c.factor())
          .append(c.minWindow().isZero() ? "" : ", minWindow: " + c.minWindow().getSeconds() + "s").append("}\n"));
    }
    return y.toString();
  }

  /** The fixture's partitioning in the gateway's words (see the class comment on {@code user}). */
  private static String partition(String fixturePartitioning) {
    return fixturePartitioning.equals("user") ? "header:" + SpecFixture.USER_HEADER : fixturePartitioning;
  }
}
