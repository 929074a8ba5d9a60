package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.headroom.ManualTicker;
import dev.headroom.enforcement.partition.ApiKeys;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Rules, cost and shadow mode through the gateway over real sockets: allow lists that bypass a
 * policy (CIDR, API key hash), counting only failures, conditions by method, a route's fixed cost,
 * a cost from a request header bounded by a maximum (400 beyond it, Graceful Boundaries section 6),
 * a charge from a response header after the response, and a shadow policy that never refuses.
 */
class RulesGatewayTest {
  static final ObjectMapper JSON = new ObjectMapper();
  TestUpstream upstream;
  HttpServer charging;
  Gateway gateway;
  final HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    upstream = new TestUpstream();
    charging = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    charging.createContext("/", ex -> {
      ex.getResponseHeaders().set("X-Charge", "7");
      ex.sendResponseHeaders(200, -1);
      ex.close();
    });
    charging.start();
    String yaml = """
        service: {name: Rules}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
          charging: {url: "http://127.0.0.1:%d"}
        policies:
          login: {quota: 2, window: 1m, algorithm: fixed-window, count: failures, when: {methods: [POST]}, why: Limits keep the service available for everyone.}
          loopback-free: {quota: 1, window: 1m, allow: {cidrs: [127.0.0.0/8]}, why: Limits keep the service available for everyone.}
          partner-free: {quota: 1, window: 1m, partition: global, allow: {apiKeys: ["%s"]}, why: Limits keep the service available for everyone.}
          units: {quota: 10, window: 1m, algorithm: fixed-window, why: Limits keep the service available for everyone.}
          trial: {quota: 1, window: 1m, algorithm: fixed-window, shadow: true, shadowFields: true, why: Limits keep the service available for everyone.}
        routes:
          - {name: login, methods: [GET, POST], path: "/status/{code}", upstream: up, policies: [login]}
          - {name: open, method: GET, path: /echo/open, upstream: up, policies: [loopback-free]}
          - {name: partner, method: GET, path: /echo/partner, upstream: up, policies: [partner-free]}
          - {name: five, method: GET, path: /echo/five, upstream: up, policies: [units], cost: 5}
          - {name: stated, method: GET, path: /echo/stated, upstream: up, policies: [units], cost: {header: X-Cost, max: 4}}
          - {name: charged, method: GET, path: /charged, upstream: charging, policies: [units], cost: {units: 1, max: 100, chargeHeader: X-Charge}}
          - {name: trial, method: GET, path: /echo/trial, upstream: up, policies: [trial]}
        """.formatted(upstream.port(), charging.getAddress().getPort(), ApiKeys.sha256("partner-key"));
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "rules.yaml")).ticker(ManualTicker.atFixedInstant()).start();
  }

  @AfterEach
  void stop() {
    gateway.close();
    upstream.close();
    charging.stop(0);
  }

  HttpResponse<String> send(String method, String path, String header, String value) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + path))
        .method(method, HttpRequest.BodyPublishers.noBody());
    if (header != null) {
      b.header(header, value);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void onlyFailedPostsCount() throws Exception {
    for (int i = 0; i < 5; i++) {
      assertThat(send("POST", "/status/200", null, null).statusCode()).isEqualTo(200); // successes given back
      assertThat(send("GET", "/status/401", null, null).statusCode()).isEqualTo(401); // GET: out of `when`
    }
    assertThat(send("POST", "/status/401", null, null).statusCode()).isEqualTo(401);
    assertThat(send("POST", "/status/401", null, null).statusCode()).isEqualTo(401);
    assertThat(send("POST", "/status/200", null, null).statusCode()).isEqualTo(429);
  }

  @Test
  void allowListsBypassThePolicy() throws Exception {
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = send("GET", "/echo/open", null, null);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("RateLimit")).isEmpty(); // not decided at all
    }
    for (int i = 0; i < 3; i++) {
      assertThat(send("GET", "/echo/partner", "X-Api-Key", "partner-key").statusCode()).isEqualTo(200);
    }
    assertThat(send("GET", "/echo/partner", "X-Api-Key", "someone-else").statusCode()).isEqualTo(200);
    assertThat(send("GET", "/echo/partner", "X-Api-Key", "someone-else").statusCode()).isEqualTo(429);
  }

  @Test
  void aRouteCostsItsUnits() throws Exception {
    assertThat(send("GET", "/echo/five", null, null).headers().firstValue("RateLimit").orElseThrow()).contains("r=5");
    assertThat(send("GET", "/echo/five", null, null).statusCode()).isEqualTo(200);
    assertThat(send("GET", "/echo/five", null, null).statusCode()).isEqualTo(429);
  }

  @Test
  void aStatedCostIsBoundedAndABadOneIsA400() throws Exception {
    assertThat(send("GET", "/echo/stated", "X-Cost", "4").headers().firstValue("RateLimit").orElseThrow()).contains("r=6");
    assertThat(send("GET", "/echo/stated", null, null).headers().firstValue("RateLimit").orElseThrow()).contains("r=5");
    for (String bad : new String[] {"5", "-1", "1e3", "99999999999999999999"}) {
      HttpResponse<String> r = send("GET", "/echo/stated", "X-Cost", bad);
      assertThat(r.statusCode()).as(bad).isEqualTo(400);
      JsonNode body = JSON.readTree(r.body());
      assertThat(body.path("error").asText()).isEqualTo("invalid_cost");
      assertThat(body.path("field").asText()).isEqualTo("X-Cost");
      assertThat(body.path("expected").asText()).contains("0 to 4");
      assertThat(Schemas.REFUSAL.validate(body)).isEmpty();
    }
  }

  @Test
  void discoverySaysWhatARequestCosts() throws Exception {
    JsonNode doc = JSON.readTree(send("GET", "/.well-known/limits", null, null).body());
    assertThat(doc.path("limits").path("five").path("cost").path("units").asLong()).isEqualTo(5);
    JsonNode stated = doc.path("limits").path("stated").path("cost");
    assertThat(stated.path("header").asText()).isEqualTo("X-Cost");
    assertThat(stated.path("max").asLong()).isEqualTo(4);
    assertThat(doc.path("limits").path("charged").path("cost").path("chargeHeader").asText()).isEqualTo("X-Charge");
    assertThat(doc.path("limits").path("open").has("cost")).isFalse();
    assertThat(Schemas.LIMITS.validate(doc)).isEmpty();
  }

  @Test
  void aResponseHeaderIsChargedAfterTheResponse() throws Exception {
    HttpResponse<String> first = send("GET", "/charged", null, null);
    assertThat(first.headers().firstValue("RateLimit").orElseThrow()).contains("r=9");
    // 1 + 7 charged: 2 left
    assertThat(send("GET", "/charged", null, null).headers().firstValue("RateLimit").orElseThrow()).contains("r=1");
  }

  /**
   * A shadow item that would refuse is sent as {@code r=0} with {@code t} until it would allow:
   * draft-ietf-httpapi-ratelimit-headers-09 section 6 (fields independent of the status) and
   * Appendix B.1.1 (a 200 with {@code r=0;t=50}); no Retry-After, since the request is served.
   */
  @Test
  void aShadowPolicyNeverRefusesAndSendsItsFieldsAlsoWhenItWouldRefuse() throws Exception {
    HttpResponse<String> first = send("GET", "/echo/trial", null, null);
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"trial\"");
    assertThat(first.headers().firstValue("RateLimit").orElseThrow()).contains("\"trial\";r=0;t=");
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = send("GET", "/echo/trial", null, null);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("Retry-After")).isEmpty();
      assertThat(r.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"trial\";q=1");
      assertThat(r.headers().firstValue("RateLimit").orElseThrow()).matches("\"trial\";r=0;t=[1-9][0-9]*");
    }
  }
}
