package dev.headroom.gateway.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.checker.Checker;
import dev.headroom.checker.Finding;
import dev.headroom.checker.Level;
import dev.headroom.checker.Report;
import dev.headroom.client.HeadroomClient;
import dev.headroom.client.Pacing;
import dev.headroom.client.RetryPolicy;
import dev.headroom.client.Scheduler;
import dev.headroom.gateway.Gateway;
import dev.headroom.gateway.GatewayConfig;
import dev.headroom.http.headers.HeaderDialect;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Headroom's own pieces together: the gateway (demo upstream, one route per dialect) checked by
 * {@code headroom check} and driven by the self-pacing client. Time is a shared {@link ManualTicker}.
 */
class GatewayInteropTest {

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private ManualTicker ticker;
  private Gateway gateway;

  @BeforeEach
  void start() throws Exception {
    ticker = ManualTicker.atFixedInstant();
    StringBuilder routes = new StringBuilder();
    for (HeaderDialect d : HeaderDialect.values()) {
      routes.append("  - {name: r-").append(d.token()).append(", method: GET, path: /").append(d.token())
          .append(", upstream: demo, policies: [minute], normaliseErrors: true, dialect: ").append(d.token()).append("}\n");
    }
    // the upgradeUrl leads somewhere: the demo upstream's plans (the checker follows it)
    routes.append("  - {name: pricing, method: GET, path: /pricing, upstream: demo, normaliseErrors: true}\n");
    String yaml = """
        service:
          name: Interop
          description: The gateway behind the client and the checker.
        listen: {host: 127.0.0.1, port: 0}
        upstreams:
          demo: {demo: true}
        policies:
          minute:
            quota: 3
            window: 1m
            algorithm: fixed-window
            partition: client-ip
            why: Three requests a minute keep the service available for everyone.
            guidance: {upgradeUrl: /pricing}
        routes:
        """ + routes;
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "interop.yaml")).ticker(ticker).threads(2).start();
  }

  @AfterEach
  void stop() {
    gateway.close();
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + gateway.address().getPort() + path);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(HeaderDialect.class)
  void theClientIsNeverRefusedByTheGatewayAfterTheFirstFields(HeaderDialect dialect) throws Exception {
    AtomicInteger refused = new AtomicInteger();
    HeadroomClient client = HeadroomClient.builder(HTTP).ticker(ticker).scheduler(Scheduler.advancing(ticker))
        .pacing(Pacing.BURST).retry(RetryPolicy.none())
        .addNetworkInterceptor(chain -> chain.proceed(chain.request()).whenComplete((ex, e) -> {
          if (ex != null && ex.status() == 429) {
            refused.incrementAndGet();
          }
        })).build();
    for (int i = 0; i < 10; i++) {
      HttpResponse<Void> r = client.send(HttpRequest.newBuilder(uri("/" + dialect.token())).build(),
          HttpResponse.BodyHandlers.discarding());
      assertThat(r.statusCode()).isEqualTo(200);
    }
    assertThat(refused).hasValue(0);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(HeaderDialect.class)
  void theCheckerReadsTheGatewayInEveryDialect(HeaderDialect dialect) throws Exception {
    Report r = Checker.builder(HTTP).ticker(ticker).probe(10).probeEndpoint("/" + dialect.token()).build().check(uri("/"));
    // draft-09 and draft-10/-11 write the same fields: a reader reports both as ietf.
    assertThat(r.dialects()).as(r.toText()).contains(dialect == HeaderDialect.DRAFT_09 ? HeaderDialect.IETF : dialect);
    assertThat(r.findings(Finding.Severity.VIOLATION)).as(r.toText()).isEmpty();
    assertThat(r.level()).as(r.toText()).isEqualTo(Level.LEVEL_4);
    assertThat(r.declared()).as(r.toText()).contains("level-4");
    assertThat(r.requirements().get(3).evidence()).as(r.toText()).contains("  followed: GET /pricing -> 200");
  }
}
