package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import dev.headroom.enforcement.partition.PartitionKeyExposures;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The admin listener's live usage dashboard (headroom-gateway/README.md, "Watching it live"): {@code /usage} and
 * {@code /usage/stream} through a running gateway on real sockets, the heavy hitters shown as
 * {@code pk} hashes and never as keys, the token that guards an admin listener bound beyond
 * loopback, and {@code /config} without passwords.
 */
class DashboardTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "a-long-enough-admin-token";

  @TempDir Path dir;
  TestUpstream upstream;
  Gateway gateway;
  final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    if (upstream != null) {
      upstream.close();
    }
  }

  private void start(String admin) throws Exception {
    upstream = new TestUpstream();
    Path config = dir.resolve("headroom.yaml");
    Files.writeString(config, """
        service: {name: Dashboard test, description: A gateway watched live.}
        # for the day we move: store: {type: redis, uri: "redis://default:hunter2-secret@redis.internal:6379"}
        listen: {host: 127.0.0.1, port: 0}
        admin: %s
        store: {type: memory}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          per-key:
            quota: 5
            window: 1h
            algorithm: fixed-window
            partition: api-key
            why: Five requests an hour per key.
          paced:
            quota: 2
            window: 1s
            algorithm: token-bucket
            partition: global
            why: Two requests a second, the rest wait their turn.
            queue: {maxWait: 10s, maxQueued: 100}
        routes:
          - {name: echo, method: GET, path: "/echo/{id}", upstream: up, policies: [per-key]}
          - {name: paced, method: GET, path: "/paced/{id}", upstream: up, policies: [paced]}
        """.formatted(admin, upstream.port()));
    gateway = Gateway.builder(GatewayConfig.load(config)).threads(1).start();
  }

  private int get(String apiKey) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/echo/1");
    return client.send(HttpRequest.newBuilder(uri).header("X-Api-Key", apiKey).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private HttpResponse<String> admin(String path, String... headers) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + gateway.adminAddress().orElseThrow().getPort() + path);
    HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String pk(String policy, String key) {
    return ":" + Base64.getEncoder().encodeToString(PartitionKeyExposures.predictableHash()
        .pk(QuotaPolicy.builder(policy).quota(5).window(Duration.ofHours(1)).build(), PartitionKey.of(key))
        .orElseThrow()) + ":";
  }

  @Test
  void usageShowsTheFloodingKeyAsItsHashAndTheDecisionsPerSecond() throws Exception {
    start("{host: 127.0.0.1, port: 0}");
    for (int i = 0; i < 40; i++) {
      get("flooding-caller-secret"); // 5 admitted, 35 refused
    }
    for (int i = 0; i < 3; i++) {
      get("quiet-caller-" + i);
    }
    JsonNode u = awaitUsage(n -> n.path("totals").path("per-key").path("refused").asLong() >= 35);

    assertThat(u.path("service").asText()).isEqualTo("Dashboard test");
    assertThat(u.path("totals").path("per-key").path("allowed").asLong()).isEqualTo(8);
    assertThat(u.path("totals").path("per-key").path("refused").asLong()).isEqualTo(35);
    assertThat(sum(u.path("refusalsByType").path("quota-exceeded"))).isEqualTo(35);
    assertThat(u.path("t").size()).isEqualTo(u.path("decisions").path("per-key").path("refused").size());

    JsonNode top = u.path("topRefused").get(0);
    assertThat(top.path("policy").asText()).isEqualTo("per-key");
    // the api-key partition: "key:" and the first 16 bytes of the key's SHA-256, in hex (headroom-gateway/README.md, "pk")
    String flooding = top.path("pk").asText();
    assertThat(flooding).isEqualTo(pk("per-key", "key:" + sha256Hex("flooding-caller-secret")));
    assertThat(top.path("count").asLong()).isEqualTo(35);
    assertThat(u.path("topRefused")).hasSize(1);
    assertThat(u.path("topUsed").get(0).path("pk").asText()).isEqualTo(flooding);
    assertThat(u.path("topUsed").get(0).path("count").asLong()).isEqualTo(40);
    assertThat(u.path("topUsed")).hasSize(4);

    assertThat(u.path("capacity").path("per-key").asDouble()).isEqualTo(1.0);
    assertThat(u.path("store").path("type").asText()).isEqualTo("memory");
    assertThat(u.path("store").path("meters").path("headroom.store.keys{store=memory}").asDouble()).isEqualTo(4);
    assertThat(u.toString()).doesNotContain("flooding-caller-secret").doesNotContain("quiet-caller");
  }

  /** A policy's queue on the board: requests waiting at each second, admitted and timed out after waiting in it. */
  @Test
  void usageShowsTheQueuedRequests() throws Exception {
    start("{host: 127.0.0.1, port: 0}");
    JsonNode before = JSON.readTree(admin("/usage").body());
    assertThat(before.path("queue").has("paced waiting")).as("a configured queue, before anything waits").isTrue();
    URI uri = URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/paced/1");
    List<CompletableFuture<HttpResponse<Void>>> burst = new ArrayList<>();
    for (int i = 0; i < 8; i++) { // 2 at once, then one each 500 ms: the last waits 3 s
      burst.add(client.sendAsync(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20)).build(),
          HttpResponse.BodyHandlers.discarding()));
    }
    for (CompletableFuture<HttpResponse<Void>> f : burst) {
      assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
    JsonNode u = awaitUsage(n -> sum(n.path("queue").path("paced admitted")) >= 6);
    JsonNode queue = u.path("queue");
    assertThat(sum(queue.path("paced admitted"))).isEqualTo(6);
    assertThat(sum(queue.path("paced timed out"))).isZero();
    assertThat(max(queue.path("paced waiting"))).as("requests waiting at some second").isPositive();
    assertThat(queue.path("paced waiting").size()).isEqualTo(u.path("t").size());
    assertThat(queue.has("per-key waiting")).as("a policy without a queue").isFalse();
  }

  @Test
  void theStreamPushesTheUsageEverySecond() throws Exception {
    start("{host: 127.0.0.1, port: 0}");
    get("k");
    URI uri = URI.create("http://127.0.0.1:" + gateway.adminAddress().orElseThrow().getPort() + "/usage/stream");
    HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofInputStream());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type").orElseThrow()).startsWith("text/event-stream");
    List<JsonNode> events = new ArrayList<>();
    try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
      String event = null;
      for (String line; events.size() < 3 && (line = in.readLine()) != null; ) {
        if (line.startsWith("event: ")) {
          event = line.substring(7);
        } else if (line.startsWith("data: ") && "usage".equals(event)) {
          events.add(JSON.readTree(line.substring(6)));
        }
      }
    }
    assertThat(events).hasSize(3);
    // one sample a second: the later events carry more seconds, or the same when the ring is full
    assertThat(events.get(2).path("t").size()).isGreaterThan(events.get(0).path("t").size());
    assertThat(events.get(2).path("time").asLong()).isGreaterThan(events.get(0).path("time").asLong());
  }

  @Test
  void thePageAndItsFilesComeFromTheJarAndNothingElseIsServed() throws Exception {
    start("{host: 127.0.0.1, port: 0}");
    HttpResponse<String> page = admin("/dashboard");
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("content-type").orElseThrow()).startsWith("text/html");
    assertThat(page.headers().firstValue("content-security-policy").orElseThrow()).contains("default-src 'self'");
    assertThat(page.body()).contains("/dashboard/uPlot.iife.min.js").contains("/dashboard/dashboard.js")
        .doesNotContain("http://").doesNotContain("https://");
    assertThat(admin("/dashboard/uPlot.iife.min.js").body()).contains("uPlot");
    assertThat(admin("/dashboard/uPlot.LICENSE").body()).contains("MIT");
    assertThat(admin("/dashboard/dashboard.js").body()).contains("/usage/stream");
    HttpResponse<String> traversal = admin("/dashboard/../sample-config.yaml");
    assertThat(traversal.statusCode()).isEqualTo(404);
    assertThat(admin("/dashboard/index.html%2F..%2F..%2Fheadroom-config.schema.json").statusCode()).isEqualTo(404);
  }

  @Test
  void configServedOnTheAdminPortHidesPasswords() throws Exception {
    start("{host: 127.0.0.1, port: 0}");
    String config = admin("/config").body();
    assertThat(config).contains("redis://default:***@redis.internal:6379").doesNotContain("hunter2");
  }

  @Test
  void anAdminListenerBeyondLoopbackNeedsAToken() throws Exception {
    Path config = dir.resolve("open.yaml");
    Files.writeString(config, """
        service: {name: Open admin, description: An admin port on every address.}
        admin: {host: 0.0.0.0, port: 0}
        upstreams:
          up: {url: "http://127.0.0.1:9"}
        policies:
          p: {quota: 1, window: 1m, partition: client-ip, why: One a minute.}
        routes:
          - {name: r, method: GET, path: "/**", upstream: up, policies: [p]}
        """);
    assertThatThrownBy(() -> GatewayConfig.load(config)).isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).problems()).singleElement().asString()
            .startsWith("admin.host: \"0.0.0.0\" is not valid; expected a loopback address")
            .contains("tokenEnv or tokenFile"));

    Files.writeString(config, Files.readString(config).replace("admin: {host: 0.0.0.0, port: 0}",
        "admin: {host: 0.0.0.0, port: 0, tokenEnv: HEADROOM_TEST_UNSET_ADMIN_TOKEN}"));
    assertThatThrownBy(() -> GatewayConfig.load(config)).isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).problems()).singleElement().asString()
            .isEqualTo("admin.tokenEnv: the environment variable HEADROOM_TEST_UNSET_ADMIN_TOKEN is not set; "
                + "expected the admin token (at least 16 characters) in it"));
    Files.writeString(config, Files.readString(config).replace(", tokenEnv: HEADROOM_TEST_UNSET_ADMIN_TOKEN", ""));

    Files.writeString(dir.resolve("short.token"), "short\n");
    Files.writeString(config, Files.readString(config).replace("admin: {host: 0.0.0.0, port: 0}",
        "admin: {host: 0.0.0.0, port: 0, tokenFile: \"" + dir.resolve("short.token").toString().replace("\\", "\\\\")
            + "\"}"));
    assertThatThrownBy(() -> GatewayConfig.load(config)).isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).problems()).singleElement().asString()
            .isEqualTo("admin.tokenFile: the token has 5 characters; expected at least 16"));
  }

  @Test
  void withATokenEveryAdminRequestButHealthMustCarryIt() throws Exception {
    Path tokenFile = dir.resolve("admin.token");
    Files.writeString(tokenFile, TOKEN + "\n");
    start("{host: 127.0.0.1, port: 0, tokenFile: \"" + tokenFile.toString().replace("\\", "\\\\") + "\"}");

    assertThat(admin("/health").statusCode()).isEqualTo(200);
    for (String path : List.of("/usage", "/dashboard", "/metrics", "/config", "/capacity", "/usage/stream")) {
      HttpResponse<String> refused = admin(path);
      assertThat(refused.statusCode()).as(path).isEqualTo(401);
      assertThat(refused.headers().allValues("www-authenticate")).as(path).anyMatch(v -> v.startsWith("Basic"));
      JsonNode body = JSON.readTree(refused.body());
      assertThat(body.path("error").asText()).isEqualTo("unauthorized");
      assertThat(body.path("why").asText()).isNotBlank();
      assertThat(refused.body()).doesNotContain(TOKEN);
    }
    assertThat(admin("/usage", "Authorization", "Bearer wrong-token-of-some-length").statusCode()).isEqualTo(401);
    assertThat(admin("/usage", "Authorization", "Bearer " + TOKEN).statusCode()).isEqualTo(200);
    String basic = Base64.getEncoder().encodeToString(("admin:" + TOKEN).getBytes(StandardCharsets.UTF_8));
    assertThat(admin("/dashboard", "Authorization", "Basic " + basic).statusCode()).isEqualTo(200);
    assertThat(admin("/usage", "Authorization", "Basic !!not-base64").statusCode()).isEqualTo(401);
  }

  private JsonNode awaitUsage(Predicate<JsonNode> done) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    JsonNode u;
    do {
      u = JSON.readTree(admin("/usage").body());
      if (done.test(u)) {
        return u;
      }
      Thread.sleep(200); // the board samples once a second
    } while (System.nanoTime() < deadline);
    return u;
  }

  private static String sha256Hex(String s) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
        .digest(s.getBytes(StandardCharsets.UTF_8)), 0, 16);
  }

  private static long max(JsonNode series) {
    long m = 0;
    for (JsonNode v : series) {
      m = Math.max(m, v.asLong());
    }
    return m;
  }

  private static long sum(JsonNode series) {
    long s = 0;
    for (JsonNode v : series) {
      s += v.asLong();
    }
    return s;
  }
}
