package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
import dev.headroom.enforcement.partition.ApiKeys;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Run-time changes of a base policy reach its plans' versions, through the gateway over real
 * sockets: a capacity reduction of {@code api} on the admin port ({@code POST /capacity}) reduces
 * {@code api:pro} by the same factor, its refusals 503 temporary-reduced-capacity
 * (draft-ietf-httpapi-ratelimit-headers-09 section 5.2); a reload applies each plan's override as the
 * file states it, and what a plan does not override (here the window) follows the base.
 */
class PlanLimitsGatewayTest {
  @TempDir Path dir;
  TestUpstream upstream;
  Gateway gateway;
  final HttpClient client = HttpClient.newHttpClient();

  String config(String window, int proQuota) {
    return """
        service: {name: Plan limits}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          api: {quota: 100, window: %s, algorithm: fixed-window, partition: "api-key|client-ip", why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /echo/**, upstream: up, policies: [api]}
        plans:
          fallback: free
          resolver: {type: api-key-file, file: "%s"}
          catalog:
            free: {policies: {api: {quota: 2}}}
            pro: {policies: {api: {quota: %d}}}
            contract: {policies: {api: {quota: 6, window: 2m}}}
        """.formatted(upstream.port(), window, dir.resolve("keys.txt").toString().replace("\\", "\\\\"), proQuota);
  }

  @BeforeEach
  void start() throws Exception {
    Files.writeString(dir.resolve("keys.txt"), ApiKeys.sha256("pro-key") + " pro\n" + ApiKeys.sha256("acme-key") + " contract\n");
    upstream = new TestUpstream();
    gateway = Gateway.builder(GatewayConfig.parse(config("1m", 4), "plans.yaml")).ticker(ManualTicker.atFixedInstant()).start();
  }

  @AfterEach
  void stop() {
    gateway.close();
    upstream.close();
  }

  HttpResponse<String> get(String key) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/echo/x"))
        .header("X-Api-Key", key).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
  }

  String policy(String key) throws Exception {
    HttpResponse<String> r = get(key);
    assertThat(r.statusCode()).isEqualTo(200);
    return r.headers().firstValue("RateLimit-Policy").orElseThrow();
  }

  void capacity(String policy, double factor) throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + gateway.adminAddress().orElseThrow().getPort() + "/capacity?policy=" + policy + "&factor=" + factor))
        .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }

  @Test
  void aCapacityReductionOfTheBaseReachesEveryPlan() throws Exception {
    capacity("api", 0.5);
    assertThat(policy("pro-key")).contains("\"api:pro\";q=2;w=60");
    assertThat(policy("acme-key")).contains("\"api:contract\";q=3;w=120");
    assertThat(get("pro-key").statusCode()).isEqualTo(200);
    HttpResponse<String> refused = get("pro-key");
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(refused.body()).contains("temporary-reduced-capacity");
    capacity("api", 1);
    assertThat(policy("pro-key")).contains("\"api:pro\";q=4;w=60"); // 3 of 4 spent on the same counter
    assertThat(get("pro-key").statusCode()).isEqualTo(200);
    assertThat(get("pro-key").statusCode()).isEqualTo(429);
  }

  @Test
  void aReloadAppliesEachOverrideAsStatedAndTheRestFollowsTheBase() throws Exception {
    assertThat(policy("pro-key")).contains("\"api:pro\";q=4;w=60");
    gateway.reload(GatewayConfig.parse(config("2m", 8), "plans.yaml"));
    assertThat(policy("pro-key")).contains("\"api:pro\";q=8;w=120");
    assertThat(policy("acme-key")).contains("\"api:contract\";q=6;w=120");
    assertThat(policy("free-key")).contains("\"api:free\";q=2;w=120");
  }
}
