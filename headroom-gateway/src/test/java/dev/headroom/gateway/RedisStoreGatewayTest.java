package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.Store;
import dev.headroom.Ticker;
import dev.headroom.http.body.ServiceErrors;
import dev.headroom.redis.FailurePolicy;
import dev.headroom.redis.RedisStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.CommandType;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.Assertions;
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
    return start(store, null);
  }

  Gateway start(String store, Store given) throws Exception {
    return start(store, given, ManualTicker.atFixedInstant());
  }

  Gateway start(String store, Store given, Ticker ticker) throws Exception {
    String yaml = """
        service: {name: Redis test}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: true, host: 127.0.0.1, port: 0}
        store: %s
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          two: {quota: 2, window: 1m, algorithm: fixed-window, partition: client-ip, why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /echo/x, upstream: up, policies: [two]}
        """.formatted(store, upstream.port());
    Gateway.Builder b = Gateway.builder(GatewayConfig.parse(yaml, "redis.yaml"));
    if (ticker != null) {
      b.ticker(ticker);
    }
    if (given != null) {
      b.store(given);
    }
    gateway = b.start();
    return gateway;
  }

  /** The admin port's {@code /metrics}. */
  String metrics() throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + gateway.adminAddress().orElseThrow().getPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
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

  /**
   * The store's Redis connection is one more channel of the gateway's serving loops, not a thread
   * of Lettuce's own (EventLoops); what an exchange settles when it ends (a concurrency lease
   * given back, content bytes charged) is sent without waiting on a loop that reads the replies.
   */
  @Test
  void theRedisConnectionRunsOnTheServingLoopsAndSettlingDoesNotBlockThem() throws Exception {
    Set<Thread> before = Thread.getAllStackTraces().keySet();
    String yaml = """
        service: {name: Redis test}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        store: {type: redis, uri: "redis://127.0.0.1:6379", keyPrefix: "hr-gw-test-%s:"}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          one-at-a-time: {quota: 1, window: 1m, unit: concurrent-requests, partition: global, why: One download at a time.}
          bytes: {quota: 1000, window: 1m, unit: content-bytes, algorithm: fixed-window, partition: global, why: Transfer volume is bounded.}
        routes:
          - {method: GET, path: /bytes/**, upstream: up, policies: [one-at-a-time, bytes]}
        """.formatted(UUID.randomUUID(), upstream.port());
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "redis.yaml")).ticker(ManualTicker.atFixedInstant())
        .threads(2).start();
    // each response gives its lease back: the next request on the connection is admitted
    assertThat(getPath("/bytes/600").statusCode()).isEqualTo(200);
    assertThat(getPath("/bytes/300").statusCode()).isEqualTo(200);
    assertThat(getPath("/bytes/200").statusCode()).isEqualTo(200); // 900 charged: not in debt yet
    HttpResponse<String> inDebt = getPath("/bytes/1");
    assertThat(inDebt.statusCode()).isEqualTo(429); // 1100 of 1000 charged
    assertThat(inDebt.body()).contains("bytes");
    List<String> lettuceLoops = Thread.getAllStackTraces().keySet().stream()
        .filter(t -> !before.contains(t)).map(Thread::getName)
        .filter(n -> n.matches("lettuce-.*(epoll|nio|kqueue|iouring)EventLoop.*")).toList();
    assertThat(lettuceLoops).isEmpty();
  }

  HttpResponse<String> getPath(String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + path))
        .build(), HttpResponse.BodyHandlers.ofString());
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

  /**
   * The gateway's own overload (more decisions awaiting Redis than the store allows) is not a
   * Redis failure: 503 temporary-reduced-capacity with Retry-After 1, even when the store fails
   * open, and nothing is forwarded. The store's connection is held busy (its I/O thread decodes a
   * reply that waits on a latch), so the first request stays outstanding.
   */
  @Test
  void overloadIs503RetryAfter1WhateverTheFailurePolicy_draft09_5_2() throws Exception {
    RedisClient redis = RedisClient.create("redis://127.0.0.1:6379");
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    String prefix = "hr-gw-overload-" + UUID.randomUUID() + ":";
    try (var connection = redis.connect(ByteArrayCodec.INSTANCE);
        RedisStore store = RedisStore.builder().connection(connection)
            .keyPrefix(prefix).failurePolicy(FailurePolicy.FAIL_OPEN).maxOutstanding(1).build()) {
      start("{type: memory}", store);
      assertThat(get().statusCode()).isEqualTo(200); // the code is loaded; Redis is healthy
      connection.async().dispatch(CommandType.PING,
          new CommandOutput<byte[], byte[], String>(ByteArrayCodec.INSTANCE, null) {
            @Override
            public void set(ByteBuffer bytes) {
              held.countDown();
              try {
                release.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          });
      assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<HttpResponse<String>> first = client.sendAsync(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/echo/x")).build(),
          HttpResponse.BodyHandlers.ofString());
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (store.outstanding() < 1 && System.nanoTime() < until) {
        Thread.onSpinWait();
      }
      assertThat(store.outstanding()).isEqualTo(1);
      int forwarded = upstream.requests.size();
      HttpResponse<String> r = get();
      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
      JsonNode b = JSON.readTree(r.body());
      assertThat(b.get("type").asText()).endsWith("#temporary-reduced-capacity");
      assertThat(b.get("retryAfterSeconds").asLong()).isEqualTo(1);
      assertThat(b.get("detail").asText()).isEqualTo(ServiceErrors.storeUnavailableDetail(true)); // the text every front end sends
      assertThat(Schemas.validate(Schemas.REFUSAL, b)).isEmpty();
      assertThat(upstream.requests).hasSize(forwarded);
      assertThat(store.shed()).isEqualTo(1);
      release.countDown();
      assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
      gateway.close();
      gateway = null;
    } finally {
      release.countDown();
      redis.shutdown();
      RedisKeys.deleteKeys(prefix);
    }
  }

  /**
   * {@code store.refusalMemory} (headroom-redis README, "Refusals remembered"), on Redis time: a
   * refusal is remembered, so a request equal to a refused one is refused without asking Redis
   * even after the key was deleted behind the gateway's back; with {@code off}, Redis is asked
   * every time and the next request is admitted at once.
   */
  @Test
  void refusalMemoryIsTheStoresKeyAndOffAsksRedisEveryTime() throws Exception {
    for (String setting : new String[] {"1h", "off"}) {
      String prefix = "hr-gw-memory-" + UUID.randomUUID() + ":";
      try {
        start("{type: redis, uri: \"redis://127.0.0.1:6379\", keyPrefix: \"" + prefix + "\", refusalMemory: " + setting
            + "}", null, null);
        assertThat(get().statusCode()).isEqualTo(200);
        assertThat(get().statusCode()).isEqualTo(200);
        assertThat(get().statusCode()).isEqualTo(429);
        RedisKeys.deleteKeys(prefix); // as if the window had been reset elsewhere
        assertThat(get().statusCode()).as("refusalMemory: %s", setting).isEqualTo(setting.equals("off") ? 200 : 429);
        // the refusal answered without asking Redis is counted on the admin port
        assertThat(metrics()).contains("headroom_store_refusals_remembered_total " + (setting.equals("off") ? "0.0" : "1.0"));
      } finally {
        if (gateway != null) {
          gateway.close();
          gateway = null;
        }
        RedisKeys.deleteKeys(prefix);
      }
    }
  }

  private static GatewayConfig withStore(String store) throws Exception {
    return GatewayConfig.parse("""
        service: {name: Redis test}
        listen: {host: 127.0.0.1, port: 0}
        store: %s
        upstreams:
          up: {url: "http://127.0.0.1:1"}
        policies:
          two: {quota: 2, window: 1m, why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /x, upstream: up, policies: [two]}
        """.formatted(store), "store.yaml");
  }

  @Test
  void aRefusalMemoryOutOfRangeOrOnAMemoryStoreIsRefusedNamingTheKey() throws Exception {
    for (String store : new String[] {
        "{type: redis, uri: \"redis://127.0.0.1:6379\", refusalMemory: 2h}",
        "{type: redis, uri: \"redis://127.0.0.1:6379\", refusalMemory: soon}",
        "{type: memory, refusalMemory: 1s}"}) {
      assertThat(Assertions.catchThrowable(() -> withStore(store)))
          .as(store).isInstanceOf(ConfigException.class).hasMessageContaining("store.refusalMemory");
    }
    assertThat(withStore("{type: redis, uri: \"redis://127.0.0.1:6379\", refusalMemory: 250ms}").store().refusalMemory())
        .isEqualTo(Duration.ofMillis(250));
    assertThat(withStore("{type: redis, uri: \"redis://127.0.0.1:6379\", refusalMemory: off}").store().refusalMemory())
        .isZero();
  }

  /**
   * {@code store.replicaAcknowledgements} (headroom-redis README, "Sentinel and Cluster failover"):
   * the shared Redis has fewer than 100 replicas, so WAIT answers fewer than asked after 20 ms (well
   * within a 2 s decision deadline, which a loaded machine cannot then overrun) and
   * each admission follows the failure policy: fail-closed answers 503 temporary-reduced-capacity,
   * fail-open admits; {@code /metrics} counts both in
   * {@code headroom_store_replica_unacknowledged_total}.
   */
  @Test
  void replicaAcknowledgementsReachTheStoreAndUnacknowledgedAdmissionsFollowThePolicy() throws Exception {
    for (String policy : new String[] {"fail-closed", "fail-open"}) {
      String prefix = "hr-gw-replicas-" + UUID.randomUUID() + ":";
      try {
        start("{type: redis, uri: \"redis://127.0.0.1:6379\", keyPrefix: \"" + prefix + "\", failurePolicy: " + policy
            + ", decisionDeadline: 2s, replicaAcknowledgements: {replicas: 100, timeout: 20ms}}");
        HttpResponse<String> r = get();
        if (policy.equals("fail-closed")) {
          assertThat(r.statusCode()).isEqualTo(503);
          assertThat(JSON.readTree(r.body()).get("type").asText()).endsWith("#temporary-reduced-capacity");
        } else {
          assertThat(r.statusCode()).isEqualTo(200);
          assertThat(r.headers().firstValue("RateLimit")).as("Redis's own count").hasValue("\"two\";r=1;t=60");
        }
        assertThat(metrics()).as(policy).contains("headroom_store_replica_unacknowledged_total 1.0");
      } finally {
        if (gateway != null) {
          gateway.close();
          gateway = null;
        }
        RedisKeys.deleteKeys(prefix);
      }
    }
  }

  @Test
  void replicaAcknowledgementsAreParsedAndBadValuesRefusedNamingTheKey() throws Exception {
    String redis = "{type: redis, uri: \"redis://127.0.0.1:6379\", ";
    assertThat(withStore(redis + "replicaAcknowledgements: {replicas: 2, timeout: 30ms}}").store()
        .replicaAcknowledgements()).hasValueSatisfying(a -> {
          assertThat(a.replicas()).isEqualTo(2);
          assertThat(a.timeout()).isEqualTo(Duration.ofMillis(30));
        });
    assertThat(withStore(redis + "replicaAcknowledgements: {replicas: 1}}").store().replicaAcknowledgements())
        .hasValueSatisfying(a -> assertThat(a.timeout()).isEqualTo(RedisStore.DEFAULT_REPLICA_ACKNOWLEDGEMENT_TIMEOUT));
    assertThat(withStore(redis + "keyPrefix: x}").store().replicaAcknowledgements()).as("off by default").isEmpty();
    String[][] bad = {
        {redis + "replicaAcknowledgements: {replicas: 0}}",
            "store.replicaAcknowledgements.replicas: 0 is not valid; expected an integer from 1 to 100"},
        {redis + "replicaAcknowledgements: {replicas: many}}",
            "store.replicaAcknowledgements.replicas: \"many\" is not valid; expected an integer from 1 to 100"},
        {redis + "replicaAcknowledgements: {timeout: 50ms}}",
            "store.replicaAcknowledgements.replicas: missing; expected how many replicas must acknowledge"},
        {redis + "replicaAcknowledgements: {replicas: 1, timeout: soon}}",
            "store.replicaAcknowledgements.timeout: \"soon\" is not valid; expected a duration"},
        {redis + "decisionDeadline: 50ms, replicaAcknowledgements: {replicas: 1, timeout: 50ms}}",
            "store.replicaAcknowledgements.timeout: \"50ms\" is not valid; expected a duration shorter than store.decisionDeadline (50ms)"},
        {redis + "decisionDeadline: 40ms, replicaAcknowledgements: {replicas: 1}}",
            "store.replicaAcknowledgements.timeout: \"50ms (the default)\" is not valid; expected a duration shorter than store.decisionDeadline (40ms)"},
        {redis + "replicaAcknowledgements: {replicas: 1, wait: 1s}}",
            "store.replicaAcknowledgements.wait: unknown key"},
        {redis + "replicaAcknowledgements: 1}",
            "store.replicaAcknowledgements: 1 is not valid; expected a mapping such as {replicas: 1, timeout: 50ms}"},
        {"{type: memory, replicaAcknowledgements: {replicas: 1}}",
            "store.replicaAcknowledgements: "},
    };
    for (String[] c : bad) {
      ConfigException e = Assertions.catchThrowableOfType(() -> withStore(c[0]), ConfigException.class);
      assertThat(e).as(c[0]).isNotNull();
      assertThat(e.problems()).as(c[0]).anySatisfy(p -> assertThat(p).startsWith(c[1]));
    }
  }

  /**
   * A Sentinel URI reaches the store as it is (headroom-redis asks the Sentinels for the master;
   * its failover test is SentinelFailoverTest): with no Sentinel answering, the failure policy
   * decides. One without the master's name is refused at load, naming the key.
   */
  @Test
  void aSentinelUriIsTakenAndOneWithoutMasterNameIsRefused() throws Exception {
    int dead;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      dead = s.getLocalPort();
    }
    assertThat(Assertions.catchThrowable(() -> withStore("{type: redis, uri: \"redis-sentinel://127.0.0.1:" + dead + "\"}")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("store.uri").hasMessageContaining("sentinelMasterId");
    start("{type: redis, uri: \"redis-sentinel://127.0.0.1:" + dead + "/?sentinelMasterId=hr\", "
        + "failurePolicy: fail-closed, decisionDeadline: 50ms}");
    HttpResponse<String> r = get();
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(JSON.readTree(r.body()).get("type").asText()).endsWith("#temporary-reduced-capacity");
    assertThat(upstream.requests).isEmpty();
  }
}
