package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code store.type: redis}: the gateway decides through headroom-redis against the Redis on
 * 127.0.0.1:6379 (keys under a prefix of their own), and answers 503 temporary-reduced-capacity
 * (draft-ietf-httpapi-ratelimit-headers-09 section 5.2) when a store failing closed cannot decide.
 */
class RedisStoreGatewayTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  TestUpstream upstream;
  Gateway gateway;
  final HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void upstream() throws Exception {
    upstream = new TestUpstream();
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    upstream.close();
  }

  Gateway start(String store) throws Exception {
    String yaml = """
        service: {name: Redis test}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        store: %s
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          two: {quota: 2, window: 1m, algorithm: fixed-window, partition: client-ip, why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /echo/x, upstream: up, policies: [two]}
        """.formatted(store, upstream.port());
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "redis.yaml")).ticker(ManualTicker.atFixedInstant()).start();
    return gateway;
  }

  HttpResponse<String> get() throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/echo/x"))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void decidesThroughRedis() throws Exception {
    start("{type: redis, uri: \"redis://127.0.0.1:6379\", keyPrefix: \"hr-gw-test-" + UUID.randomUUID() + ":\"}");
    assertThat(get().headers().firstValue("RateLimit")).hasValue("\"two\";r=1;t=60");
    assertThat(get().statusCode()).isEqualTo(200);
    HttpResponse<String> refused = get();
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.headers().firstValue("Retry-After")).hasValue("60");
  }

  @Test
  void failClosedIs503TemporaryReducedCapacity_draft09_5_2() throws Exception {
    int dead;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      dead = s.getLocalPort();
    }
    start("{type: redis, uri: \"redis://127.0.0.1:" + dead + "\", failurePolicy: fail-closed, decisionDeadline: 50ms}");
    HttpResponse<String> r = get();
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).hasValue("2");
    JsonNode b = JSON.readTree(r.body());
    assertThat(b.get("type").asText()).endsWith("#temporary-reduced-capacity");
    assertThat(b.get("retryAfterSeconds").asLong()).isEqualTo(2);
    assertThat(Schemas.validate(Schemas.REFUSAL, b)).isEmpty();
    assertThat(upstream.requests).isEmpty();
  }

  @Test
  void failOpenAdmits() throws Exception {
    int dead;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      dead = s.getLocalPort();
    }
    start("{type: redis, uri: \"redis://127.0.0.1:" + dead + "\", failurePolicy: fail-open, decisionDeadline: 50ms}");
    assertThat(get().statusCode()).isEqualTo(200);
  }
}
