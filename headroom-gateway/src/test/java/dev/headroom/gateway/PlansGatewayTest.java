package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.enforcement.partition.ApiKeys;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plans through the gateway with the API key file resolver, over real sockets: each caller is
 * limited by its plan's quota (draft-ietf-httpapi-ratelimit-headers-09 section 3: the
 * {@code RateLimit-Policy} item names the plan's policy), counters of different plans never mix,
 * an unknown key or plan gets the fallback plan, a refusal's {@code upgradeUrl} is the next plan's
 * page (Graceful Boundaries section 3), the discovery document lists every plan's limits (section
 * 1), and the key file is read again when it changes.
 */
class PlansGatewayTest {
  static final ObjectMapper JSON = new ObjectMapper();
  @TempDir Path dir;
  TestUpstream upstream;
  Gateway gateway;
  Path keys;
  final HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    keys = dir.resolve("keys.txt");
    Files.writeString(keys, """
        # sha256 of the key, then the plan
        %s pro
        %s contract
        %s platinum
        """.formatted(ApiKeys.sha256("pro-key"), ApiKeys.sha256("acme-key"), ApiKeys.sha256("ghost-key")));
    upstream = new TestUpstream();
    String yaml = """
        service: {name: Plans test, origin: "https://api.example.com"}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          api: {quota: 100, window: 1m, algorithm: fixed-window, partition: "api-key|client-ip", why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /echo/**, upstream: up, policies: [api]}
        plans:
          fallback: free
          resolver: {type: api-key-file, file: "%s"}
          catalog:
            free:
              url: /pricing#free
              policies: {api: {quota: 2}}
            pro:
              url: /pricing#pro
              policies: {api: {quota: 4}}
            contract:
              url: /pricing#contract
              policies: {api: {quota: 6, window: 2m}}
        """.formatted(upstream.port(), keys.toString().replace("\\", "\\\\"));
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "plans.yaml")).ticker(ManualTicker.atFixedInstant()).start();
  }

  @AfterEach
  void stop() {
    gateway.close();
    upstream.close();
  }

  HttpResponse<String> get(String path, String key) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + path));
    if (key != null) {
      b.header("X-Api-Key", key);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  int allowedBeforeRefusal(String key) throws Exception {
    for (int i = 0; i < 20; i++) {
      if (get("/echo/x", key).statusCode() == 429) {
        return i;
      }
    }
    return 20;
  }

  @Test
  void eachPlanHasItsQuotaAndTheFieldsNameIt() throws Exception {
    HttpResponse<String> pro = get("/echo/x", "pro-key");
    assertThat(pro.statusCode()).isEqualTo(200);
    assertThat(pro.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:pro\";q=4;w=60");
    HttpResponse<String> acme = get("/echo/x", "acme-key");
    assertThat(acme.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:contract\";q=6;w=120");
    assertThat(get("/echo/x", null).headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:free\";q=2;w=60");
    assertThat(allowedBeforeRefusal("pro-key")).isEqualTo(3);
    assertThat(allowedBeforeRefusal("acme-key")).isEqualTo(5);
  }

  @Test
  void countersOfPlansNeverCollide() throws Exception {
    // the same partition (no key: the client address) on free, then the pro key
    assertThat(allowedBeforeRefusal(null)).isEqualTo(2);
    assertThat(allowedBeforeRefusal("pro-key")).isEqualTo(4);
  }

  @Test
  void unknownKeyAndUnknownPlanGetTheFallbackPlanNeverUnlimited() throws Exception {
    HttpResponse<String> stranger = get("/echo/x", "no-such-key");
    assertThat(stranger.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:free\";q=2");
    // platinum is in the key file but not a declared plan
    HttpResponse<String> ghost = get("/echo/x", "ghost-key");
    assertThat(ghost.statusCode()).isEqualTo(200);
    assertThat(ghost.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:free\";q=2");
    assertThat(allowedBeforeRefusal("ghost-key")).isEqualTo(1);
  }

  @Test
  void aRefusalPointsAtTheNextPlan() throws Exception {
    allowedBeforeRefusal(null);
    HttpResponse<String> free = get("/echo/x", null);
    assertThat(free.statusCode()).isEqualTo(429);
    assertThat(JSON.readTree(free.body()).path("upgradeUrl").asText()).isEqualTo("/pricing#pro");
    allowedBeforeRefusal("pro-key");
    JsonNode pro = JSON.readTree(get("/echo/x", "pro-key").body());
    assertThat(pro.path("upgradeUrl").asText()).isEqualTo("/pricing#contract");
    assertThat(pro.path("limit").asText()).contains("4");
  }

  @Test
  void discoveryListsEachPlansLimits() throws Exception {
    JsonNode doc = JSON.readTree(get("/.well-known/limits", null).body());
    assertThat(doc.path("fallbackPlan").asText()).isEqualTo("free");
    JsonNode plans = doc.path("plans");
    assertThat(plans).hasSize(3);
    assertThat(plans.get(0).path("name").asText()).isEqualTo("free");
    assertThat(plans.get(0).path("limits").get(0).path("maxRequests").asLong()).isEqualTo(2);
    assertThat(plans.get(1).path("limits").get(0).path("maxRequests").asLong()).isEqualTo(4);
    assertThat(plans.get(2).path("limits").get(0).path("windowSeconds").asLong()).isEqualTo(120);
    assertThat(plans.get(2).path("url").asText()).isEqualTo("/pricing#contract");
    // the routes' own entries show the fallback plan's limits
    assertThat(doc.path("limits").elements().next().path("limits").get(0).path("maxRequests").asLong()).isEqualTo(2);
    assertThat(Schemas.LIMITS.validate(doc)).isEmpty();
  }

  @Test
  void theKeyFileIsReadAgainWhenItChanges() throws Exception {
    assertThat(get("/echo/x", "new-key").headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:free\";");
    Path next = dir.resolve("keys.next");
    Files.writeString(next, ApiKeys.sha256("new-key") + " contract\n");
    Files.move(next, keys, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    String policy = "";
    while (System.nanoTime() < deadline && !policy.contains("api:contract")) {
      Thread.sleep(50);
      policy = get("/echo/x", "new-key").headers().firstValue("RateLimit-Policy").orElse("");
    }
    assertThat(policy).contains("\"api:contract\"");
    // the old keys are gone with the old file
    assertThat(get("/echo/x", "pro-key").headers().firstValue("RateLimit-Policy").orElseThrow()).doesNotContain("api:pro");
  }

  @Test
  void aKeyFileThatDoesNotReadKeepsTheKeysInForce() throws Exception {
    Files.writeString(keys, "not a hash line\n");
    Thread.sleep(1500); // the watcher had its chance to (refuse to) reload
    assertThat(get("/echo/x", "pro-key").headers().firstValue("RateLimit-Policy").orElseThrow()).contains("api:pro");
  }
}
