package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.ManualTicker;
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
 * A flood of distinct API keys against a gateway with {@code store.maxKeys: 20}: the refused key
 * stays refused (headroom-gateway/README.md, "A key flood buys no quota"), and {@code /metrics} shows what the bounded store did:
 * keys tracked, evictions at rest and live, keys restored from what the store remembered, and
 * decisions made from the sketch for keys kept out.
 */
class StoreFloodMetricsTest {

  @TempDir Path dir;
  TestUpstream upstream;
  Gateway gateway;
  HttpClient client;

  @BeforeEach
  void start() throws Exception {
    upstream = new TestUpstream();
    Path config = dir.resolve("headroom.yaml");
    Files.writeString(config, """
        service: {name: Flood test, description: A gateway under a flood of API keys.}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        store: {type: memory, maxKeys: 20}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          hourly:
            quota: 3
            window: 1h
            algorithm: fixed-window
            partition: api-key
            why: Three requests an hour per key.
        routes:
          - {name: echo, method: GET, path: "/echo/{id}", upstream: up, policies: [hourly]}
        """.formatted(upstream.port()));
    gateway = Gateway.builder(GatewayConfig.load(config)).ticker(ManualTicker.atFixedInstant()).threads(1).start();
    client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  }

  @AfterEach
  void stop() {
    gateway.close();
    upstream.close();
  }

  private int get(String apiKey) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/echo/1");
    return client.send(HttpRequest.newBuilder(uri).header("X-Api-Key", apiKey).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private String metrics() throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + gateway.adminAddress().orElseThrow().getPort() + "/metrics");
    return client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  @Test
  void aRefusedKeyStaysRefusedThroughAFloodAndTheMetricsSayWhy() throws Exception {
    for (int i = 0; i < 3; i++) {
      assertThat(get("victim")).isEqualTo(200);
    }
    assertThat(get("victim")).isEqualTo(429);
    for (int round = 0; round < 5; round++) {
      for (int i = 0; i < 40; i++) {
        // as exhausted as the victim, so that the victim is as likely to be evicted as any of them
        String key = "flood-" + round + "-" + i;
        for (int j = 0; j < 3; j++) {
          assertThat(get(key)).isEqualTo(200);
        }
      }
      assertThat(get("victim")).as("after %d flood keys", 40 * (round + 1)).isEqualTo(429);
    }
    String metrics = metrics();
    assertThat(metrics).contains("headroom_store_keys{store=\"memory\"} 20.0")
        .contains("headroom_store_max_keys{store=\"memory\"} 20.0")
        .contains("headroom_store_evictions_total{state=\"resting\",store=\"memory\"} 0.0")
        .containsPattern("headroom_store_restored_total\\{store=\"memory\"} [1-9]");
    // 201 keys into 20 places: each flood key beyond the bound was kept out at its first request
    // (decided from the sketch) and entered at its second, with the unit it had spent, in place of
    // a live key; the victim, when evicted, entered again the same way, with its 3 units
    long restored = value(metrics, "headroom_store_restored_total{store=\"memory\"}");
    assertThat(restored).isGreaterThanOrEqualTo(201 - 20);
    assertThat(value(metrics, "headroom_store_evictions_total{state=\"live\",store=\"memory\"}"))
        .isEqualTo(restored);
    assertThat(value(metrics, "headroom_store_sketch_decisions_total{store=\"memory\"}"))
        .isGreaterThanOrEqualTo(201 - 20);
  }

  private static long value(String metrics, String series) {
    return metrics.lines().filter(l -> l.startsWith(series + " ")).findFirst()
        .map(l -> (long) Double.parseDouble(l.substring(series.length() + 1))).orElseThrow();
  }
}
