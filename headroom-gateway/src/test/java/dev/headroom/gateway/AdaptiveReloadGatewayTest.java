package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.headroom.ManualTicker;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a route's adaptive concurrency learnt survives a reload of the configuration file when the
 * route's name and adaptive settings are unchanged, through the gateway over real sockets against a
 * real upstream: the upstream fails three windows, the learnt limit backs off from 16 to 2 (a half
 * a failed window), the file is reloaded with another service name, and the {@code q} of the
 * {@code adaptive} item of RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers-09 section 3.1)
 * and the discovery document's entry (Graceful Boundaries section 1) still say 2; a reload that
 * changes the adaptive settings starts again from the initial limit. The ticker is manual: the test
 * moves it 10 ms before each proxied request, so each response closes a window of 1 ms; and it
 * waits for the document to show each step, since the gateway may record a response's completion
 * just after the client has read it.
 */
class AdaptiveReloadGatewayTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern ADAPTIVE_Q = Pattern.compile("\"adaptive\";q=(\\d+)");
  @TempDir Path dir;
  private final AtomicInteger status = new AtomicInteger(200);
  private final ManualTicker ticker = ManualTicker.atFixedInstant();
  private final HttpClient client = HttpClient.newHttpClient();
  private HttpServer upstream;
  private Gateway gateway;
  private Path file;

  @BeforeEach
  void start() throws Exception {
    upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    upstream.createContext("/", ex -> {
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(status.get(), -1);
      ex.close();
    });
    upstream.start();
    file = Files.writeString(dir.resolve("gateway.yaml"), yaml("Reloaded", 16));
    gateway = Gateway.builder(GatewayConfig.load(file, GatewayConfig.DEFAULT_MAX_BYTES)).configFile(file)
        .watchFile(false).ticker(ticker).start();
  }

  private String yaml(String service, int maxLimit) {
    return """
        service: {name: %s}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          api: {quota: 1000000, window: 1m, why: Limits keep the service available for everyone.}
        routes:
          - name: work
            method: GET
            path: /work
            upstream: up
            policies: [api]
            adaptive: {minLimit: 1, maxLimit: %d, initialLimit: 16, window: 1ms, windowSamples: 1, backoff: 0.5}
        """.formatted(service, upstream.getAddress().getPort(), maxLimit);
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    upstream.stop(0);
  }

  private HttpResponse<String> get(String path) throws Exception {
    if (path.equals("/work")) {
      ticker.advance(Duration.ofMillis(10));
    }
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + path))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private long advertisedQ() throws Exception {
    HttpResponse<String> r = get("/work");
    assertThat(r.statusCode()).isEqualTo(200);
    Matcher m = ADAPTIVE_Q.matcher(r.headers().firstValue("RateLimit-Policy").orElseThrow());
    assertThat(m.find()).isTrue();
    return Long.parseLong(m.group(1));
  }

  private JsonNode discovered() throws Exception {
    HttpResponse<String> r = get("/.well-known/limits");
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode doc = JSON.readTree(r.body());
    JsonNode limits = doc.at("/limits/work/limits");
    for (JsonNode l : limits) {
      if (l.path("limitId").asText().equals("adaptive")) {
        return l;
      }
    }
    throw new AssertionError("no adaptive entry in " + doc);
  }

  /** The discovery document's adaptive limit once it is {@code q}: each failure is recorded as its response completes. */
  private void awaitDiscovered(int q) throws Exception {
    int seen = -1;
    for (int i = 0; i < 500 && seen != q; i++) {
      seen = discovered().get("maxRequests").asInt();
      if (seen != q) {
        Thread.sleep(10);
      }
    }
    assertThat(seen).as("the learnt limit in the discovery document").isEqualTo(q);
  }

  @Test
  void theLearntLimitSurvivesAReloadThatLeavesTheRouteAlone() throws Exception {
    assertThat(advertisedQ()).isEqualTo(16);
    assertThat(discovered().get("maxRequests").asInt()).isEqualTo(16);
    status.set(503);
    for (int q : new int[] {8, 4, 2}) {
      assertThat(get("/work").statusCode()).isEqualTo(503);
      awaitDiscovered(q); // halved by each failed window
    }
    status.set(200);
    assertThat(advertisedQ()).isEqualTo(2);
    assertThat(discovered().at("/adaptive/learnt").asBoolean()).isTrue();

    Files.writeString(file, yaml("Renamed", 16));
    gateway.reloadFromFile();
    assertThat(gateway.config().service().name()).isEqualTo("Renamed");
    assertThat(advertisedQ()).as("unchanged across the reload").isEqualTo(2);
    assertThat(discovered().get("maxRequests").asInt()).isEqualTo(2);

    Files.writeString(file, yaml("Renamed", 17));
    gateway.reloadFromFile();
    assertThat(advertisedQ()).as("other adaptive settings: learnt again from the initial limit").isEqualTo(16);
  }
}
