package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.headroom.ManualTicker;
import dev.headroom.redis.Leasing;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code store.leasing} (issue 17, item 3, through the gateway): the gateway on the Redis at
 * 127.0.0.1:6379 takes slices of a fixed window's quota and decides from them locally, admits
 * exactly the quota (a fixed window is never over-admitted: its units are counted in Redis when
 * the slice is taken), and never reports an {@code r} above what is globally left
 * (draft-ietf-httpapi-ratelimit-headers-09 section 3.1: r is the remaining quota units).
 */
class RedisLeasingGatewayTest {
  private static final Pattern R = Pattern.compile(";r=(\\d+)");
  TestUpstream upstream;
  Gateway gateway;
  String prefix;
  final HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void upstream() throws Exception {
    upstream = new TestUpstream();
    prefix = "hr-gw-lease-" + UUID.randomUUID() + ":";
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    upstream.close();
    RedisKeys.deleteKeys(prefix);
  }

  private static String yaml(String leasing, int upstreamPort) {
    return """
        service: {name: Leasing test}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        store: {type: redis, uri: "redis://127.0.0.1:6379", keyPrefix: "%s", leasing: %s}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          twenty: {quota: 20, window: 1m, algorithm: fixed-window, partition: global, why: Limits keep the service available for everyone.}
          smooth: {quota: 1000, window: 1m, algorithm: sliding-window, partition: global, why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /echo/x, upstream: up, policies: [twenty]}
        """.formatted("%s", leasing, upstreamPort);
  }

  @Test
  void aLeasedFixedWindowAdmitsExactlyItsQuotaMostlyWithoutRedis() throws Exception {
    String config = yaml("{policies: [twenty], maxFraction: 0.5}", upstream.port()).formatted(prefix);
    gateway = Gateway.builder(GatewayConfig.parse(config, "leasing.yaml")).ticker(ManualTicker.atFixedInstant()).start();
    int admitted = 0;
    int refused = 0;
    for (int i = 0; i < 30; i++) {
      HttpResponse<String> r = get("/echo/x");
      if (r.statusCode() == 200) {
        admitted++;
        Matcher m = R.matcher(r.headers().firstValue("RateLimit").orElseThrow());
        assertThat(m.find()).isTrue();
        // one gateway: what is globally left is the quota less what it admitted
        assertThat(Long.parseLong(m.group(1))).as("r after %d admitted", admitted).isLessThanOrEqualTo(20 - admitted);
      } else {
        assertThat(r.statusCode()).isEqualTo(429);
        refused++;
      }
    }
    assertThat(admitted).isEqualTo(20);
    assertThat(refused).isEqualTo(10);
    assertThat(upstream.requests).hasSize(20);
    String metrics = get(gateway.adminAddress().orElseThrow().getPort(), "/metrics").body();
    long slices = value(metrics, "headroom_store_leasing_slices_total");
    long local = value(metrics, "headroom_store_leasing_local_total");
    assertThat(slices).as("slices taken from Redis").isPositive();
    assertThat(local).as("decisions made from a slice, without Redis").isPositive();
    assertThat(metrics).contains("headroom_store_outstanding"); // the Redis store's meters are still there
  }

  @Test
  void leasingNamesPoliciesOfTheFileThatCanBeLeased() {
    String config = yaml("{policies: [twenty, smooth, nothing], maxFraction: 2}", 1).formatted("p:");
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(config, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("store.leasing.policies[1]: \"smooth\"")
        .contains("a fixed-window or token-bucket policy"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("store.leasing.policies[2]: \"nothing\"")
        .contains("the name of a policy under policies, one of [smooth, twenty]"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("store.leasing.maxFraction: 2")
        .contains("a number above 0 and at most 1"));
    assertThat(e.problems()).noneSatisfy(p -> assertThat(p).startsWith("store.leasing.policies[0]"));
  }

  @Test
  void leasingIsForTheRedisStoreOnlyAndOffUnlessAskedFor() throws Exception {
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse("""
        service: {name: x}
        store: {type: memory, leasing: true}
        """, "memory.yaml"), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("store.leasing: true")
        .contains("no leasing when store.type is memory"));
    assertThat(GatewayConfig.parse(yaml("false", 1).formatted("p:"), "off.yaml").store().leasing()).isEmpty();
    GatewayConfig on = GatewayConfig.parse(yaml("true", 1).formatted("p:"), "on.yaml");
    assertThat(on.store().leasing()).hasValueSatisfying(l -> {
      assertThat(l.policies()).isEmpty(); // every fixed-window and token-bucket policy
      assertThat(l.maxFraction()).isEqualTo(Leasing.DEFAULT_MAX_FRACTION);
    });
  }

  private HttpResponse<String> get(String path) throws Exception {
    return get(gateway.address().getPort(), path);
  }

  private HttpResponse<String> get(int port, String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static long value(String metrics, String series) {
    return metrics.lines().filter(l -> l.startsWith(series + " ")).findFirst()
        .map(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).orElse(-1L);
  }
}
