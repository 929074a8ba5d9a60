package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.headroom.ManualTicker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code pk} parameter (draft-ietf-httpapi-ratelimit-headers-09 sections 3.1.4, 6.1, 7.1),
 * configured globally and per route, as a client sees it: with {@code hash} the client computes
 * its own pk from the documented recipe; with {@code hmac} it matches the keyed hash of the key
 * file; {@code off} sends none.
 */
class PkExposureTest {
  @TempDir Path dir;
  TestUpstream upstream;
  Gateway gateway;
  final HttpClient client = HttpClient.newHttpClient();
  final byte[] key = new byte[32];

  @BeforeEach
  void start() throws Exception {
    Arrays.fill(key, (byte) 7);
    key[0] = 42;
    Path keyFile = dir.resolve("pk.key");
    Files.writeString(keyFile, Base64.getEncoder().encodeToString(key) + "\n");
    upstream = new TestUpstream();
    String yaml = """
        service: {name: Pk test}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        pk: {exposure: hash, keyFile: "%s"}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          minute: {quota: 10, window: 1m, partition: client-ip, why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /echo/hash, upstream: up, policies: [minute]}
          - {method: GET, path: /echo/hmac, upstream: up, policies: [minute], pk: hmac}
          - {method: GET, path: /echo/off, upstream: up, policies: [minute], pk: "off"}
        """.formatted(keyFile.toString().replace("\\", "\\\\"), upstream.port());
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "pk.yaml")).ticker(ManualTicker.atFixedInstant()).start();
  }

  @AfterEach
  void stop() {
    gateway.close();
    upstream.close();
  }

  String rateLimit(String path) throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + gateway.address().getPort() + path)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return r.headers().firstValue("RateLimit").orElseThrow();
  }

  /** The input of section 6.1's documented recipe: policy name, a zero byte, the partition key. */
  static byte[] input(String policy, String partition) {
    byte[] p = policy.getBytes(StandardCharsets.UTF_8);
    byte[] k = partition.getBytes(StandardCharsets.UTF_8);
    byte[] in = new byte[p.length + 1 + k.length];
    System.arraycopy(p, 0, in, 0, p.length);
    System.arraycopy(k, 0, in, p.length + 1, k.length);
    return in;
  }

  static String sf(byte[] pk) {
    return "pk=:" + Base64.getEncoder().encodeToString(Arrays.copyOf(pk, 16)) + ":";
  }

  @Test
  void hashIsThePkAClientComputesForItsOwnPartition() throws Exception {
    byte[] sha = MessageDigest.getInstance("SHA-256").digest(input("minute", "ip:127.0.0.1"));
    assertThat(rateLimit("/echo/hash")).startsWith("\"minute\";r=9;t=").endsWith(";" + sf(sha));
  }

  @Test
  void hmacIsKeyedWithTheKeyFileAndDiffersFromTheHash() throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    byte[] expected = mac.doFinal(input("minute", "ip:127.0.0.1"));
    String header = rateLimit("/echo/hmac");
    assertThat(header).endsWith(";" + sf(expected));
    byte[] sha = MessageDigest.getInstance("SHA-256").digest(input("minute", "ip:127.0.0.1"));
    assertThat(header).doesNotContain(sf(sha));
  }

  @Test
  void offSendsNoPk() throws Exception {
    assertThat(rateLimit("/echo/off")).doesNotContain("pk=");
  }

  @Test
  void hmacKeysAreValidatedAtLoadWithoutRepeatingThem() {
    String base = """
        service: {name: S}
        pk: {exposure: hmac, KEY}
        upstreams:
          a: {url: "http://127.0.0.1:9"}
        routes:
          - {method: GET, path: /x, upstream: a}
        """;
    ConfigException missing = catchThrowableOfType(() -> GatewayConfig.parse(
        base.replace("KEY", "keyEnv: HEADROOM_TEST_UNSET_VARIABLE"), "t.yaml"), ConfigException.class);
    assertThat(missing.problems()).singleElement().asString()
        .startsWith("pk.keyEnv: the environment variable HEADROOM_TEST_UNSET_VARIABLE is not set");
    ConfigException none = catchThrowableOfType(() -> GatewayConfig.parse(base.replace(", KEY", ""), "t.yaml"),
        ConfigException.class);
    assertThat(none.problems()).singleElement().asString().startsWith("pk.keyEnv: missing; expected");
    ConfigException bad = catchThrowableOfType(() -> GatewayConfig.parse(
        base.replace("exposure: hmac, KEY", "exposure: sometimes"), "t.yaml"), ConfigException.class);
    assertThat(bad.problems()).singleElement().asString().startsWith("pk.exposure: \"sometimes\" is not valid");
  }

  @Test
  void aShortKeyIsRefusedAndNeverQuoted() throws Exception {
    Path shortKey = dir.resolve("short.key");
    Files.writeString(shortKey, "c2VjcmV0LXNob3J0LWtleQ==");
    String yaml = """
        service: {name: S}
        pk: {exposure: hmac, keyFile: "%s"}
        upstreams:
          a: {url: "http://127.0.0.1:9"}
        routes:
          - {method: GET, path: /x, upstream: a}
        """.formatted(shortKey.toString().replace("\\", "\\\\"));
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml, "t.yaml"), ConfigException.class);
    assertThat(e.problems()).singleElement().asString().startsWith("pk.keyFile: pk hmac key: expected 32")
        .doesNotContain("c2VjcmV0");
  }
}
