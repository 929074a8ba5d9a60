package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code grafana/headroom-gateway.json}, the dashboard for users who already run Grafana, asks only
 * for series the gateway exposes: every metric its queries name appears in {@code /metrics} of a
 * running gateway, on the memory store or on Redis (whose health meters only a Redis store has),
 * after traffic that makes each kind of series exist.
 */
class GrafanaDashboardTest {
  private static final Pattern METRIC = Pattern.compile("\\b((?:headroom|jvm)_[a-z0-9_]+)");

  @TempDir Path dir;

  @Test
  void everySeriesTheDashboardQueriesExists() throws Exception {
    JsonNode dashboard = new ObjectMapper().readTree(Path.of("grafana", "headroom-gateway.json").toFile());
    assertThat(dashboard.path("uid").asText()).isEqualTo("headroom-gateway");
    Set<String> queried = new TreeSet<>();
    for (JsonNode panel : dashboard.path("panels")) {
      assertThat(panel.path("targets")).as(panel.path("title").asText()).isNotEmpty();
      for (JsonNode target : panel.path("targets")) {
        Matcher m = METRIC.matcher(target.path("expr").asText());
        while (m.find()) {
          queried.add(m.group(1));
        }
      }
    }
    assertThat(queried).contains("headroom_decisions_total", "headroom_store_latency_seconds_bucket",
        "headroom_store_outstanding", "headroom_queue_waiting", "headroom_queue_admitted_total",
        "headroom_queue_timeouts_total", "headroom_store_replica_unacknowledged_total");

    String scraped = scrape("{type: memory, maxKeys: 1000}") + scrape("{type: redis, uri: \"redis://127.0.0.1:6379\", "
        + "keyPrefix: \"hr-grafana-" + UUID.randomUUID() + ":\", failurePolicy: fallback}");
    Set<String> exposed = new TreeSet<>();
    scraped.lines().filter(l -> !l.startsWith("#")).forEach(l -> {
      Matcher m = METRIC.matcher(l);
      if (m.lookingAt()) {
        exposed.add(m.group(1));
      }
    });
    assertThat(exposed).as("series on /metrics").containsAll(queried);
  }

  /** Runs a gateway on {@code store}, sends traffic that is admitted, refused and answered locally. */
  private String scrape(String store) throws Exception {
    try (TestUpstream upstream = new TestUpstream()) {
      Path config = dir.resolve("g-" + UUID.randomUUID() + ".yaml");
      Files.writeString(config, """
          service: {name: Grafana test, description: Makes every series exist.}
          listen: {host: 127.0.0.1, port: 0}
          admin: {host: 127.0.0.1, port: 0}
          store: %s
          upstreams:
            up: {url: "http://127.0.0.1:%d"}
          policies:
            tight: {quota: 1, window: 1h, partition: client-ip, why: One an hour.}
            paced: {quota: 1, window: 1s, algorithm: token-bucket, partition: global, why: One a second.,
                    queue: {maxWait: 1s, maxQueued: 10}}
          routes:
            - {name: r, method: GET, path: "/items/{id}", upstream: up, policies: [tight]}
            - {name: p, method: GET, path: "/paced/{id}", upstream: up, policies: [paced]}
          """.formatted(store, upstream.port()));
      try (Gateway gateway = Gateway.builder(GatewayConfig.load(config)).threads(1).start()) {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        int port = gateway.address().getPort();
        for (String path : new String[] {"/items/1", "/items/1", "/nowhere"}) {
          client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
              HttpResponse.BodyHandlers.discarding());
        }
        // the queue's series: one request admitted now, one after waiting, one whose turn (2 s) is past its wait (1 s)
        URI paced = URI.create("http://127.0.0.1:" + port + "/paced/1");
        client.send(HttpRequest.newBuilder(paced).build(), HttpResponse.BodyHandlers.discarding());
        List<CompletableFuture<HttpResponse<Void>>> waiting = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
          waiting.add(client.sendAsync(HttpRequest.newBuilder(paced).timeout(Duration.ofSeconds(20)).build(),
              HttpResponse.BodyHandlers.discarding()));
        }
        for (CompletableFuture<HttpResponse<Void>> f : waiting) {
          f.get(30, TimeUnit.SECONDS);
        }
        URI metrics = URI.create("http://127.0.0.1:" + gateway.adminAddress().orElseThrow().getPort() + "/metrics");
        return client.send(HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString()).body();
      }
    }
  }
}
