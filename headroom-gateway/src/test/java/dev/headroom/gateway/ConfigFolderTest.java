package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.headroom.enforcement.partition.ApiKeys;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * File paths in the configuration ({@code plans.resolver.file}, {@code jwksFile}, {@code keyFile},
 * ...) resolve against the configuration file's folder, not the working directory: a gateway
 * started from another directory finds its key file, and {@link GatewayConfig#load} reads the HS256
 * key file beside the configuration whatever this JVM's working directory is.
 */
class ConfigFolderTest {
  static final byte[] HMAC = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  @TempDir Path dir;
  TestUpstream upstream;
  final HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    upstream = new TestUpstream();
  }

  @AfterEach
  void stop() {
    upstream.close();
  }

  String yaml(String resolver) {
    return """
        service: {name: Config folder}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          api: {quota: 100, window: 1m, partition: client-ip, why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /echo/**, upstream: up, policies: [api]}
        plans:
          fallback: free
          resolver: %s
          catalog:
            free: {policies: {api: {quota: 1}}}
            pro: {policies: {api: {quota: 7}}}
        """.formatted(upstream.port(), resolver);
  }

  @Test
  void aGatewayStartedFromAnotherDirectoryFindsTheKeyFileBesideItsConfiguration() throws Exception {
    Path conf = Files.createDirectories(dir.resolve("conf"));
    Files.createDirectories(conf.resolve("keys"));
    Files.writeString(conf.resolve("keys/api-keys.txt"), ApiKeys.sha256("pro-key") + " pro\n");
    Files.writeString(conf.resolve("gateway.yaml"), yaml("{type: api-key-file, file: keys/api-keys.txt}"));
    Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        ConfigFolderMain.class.getName(), "../conf/gateway.yaml").directory(elsewhere.toFile())
        .redirectErrorStream(true).start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      StringBuilder seen = new StringBuilder();
      int port = CompletableFuture.supplyAsync(() -> {
        try {
          for (String line = out.readLine(); line != null; line = out.readLine()) {
            if (line.startsWith("port ")) {
              return Integer.parseInt(line.substring(5).strip());
            }
            seen.append(line).append('\n');
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("the gateway process ended without a port:\n" + seen);
      }).get(60, TimeUnit.SECONDS);
      HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/echo/x"))
          .header("X-Api-Key", "pro-key").timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:pro\";q=7");
    } finally {
      p.getOutputStream().close(); // the gateway stops when its standard input closes
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  @Test
  void theHs256KeyFileIsReadBesideTheConfiguration() throws Exception {
    Path conf = Files.createDirectories(dir.resolve("jwt-conf"));
    Files.createDirectories(conf.resolve("secrets"));
    Files.writeString(conf.resolve("secrets/hs256.key"), Base64.getEncoder().encodeToString(HMAC));
    Path file = conf.resolve("gateway.yaml");
    Files.writeString(file, yaml("{type: jwt, keyFile: secrets/hs256.key}"));
    try (Gateway g = Gateway.builder(GatewayConfig.load(file)).configFile(file).start()) {
      SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), new JWTClaimsSet.Builder().claim("plan", "pro")
          .expirationTime(Date.from(Instant.now().plusSeconds(3600))).build());
      jwt.sign(new MACSigner(HMAC));
      HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.address().getPort() + "/echo/x"))
          .header("Authorization", "Bearer " + jwt.serialize()).timeout(Duration.ofSeconds(30)).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:pro\";q=7");
    }
  }

  @Test
  void aMissingFileIsNamedWhereItWasLookedFor() throws Exception {
    Path conf = Files.createDirectories(dir.resolve("missing"));
    Path file = conf.resolve("gateway.yaml");
    Files.writeString(file, yaml("{type: jwt, jwksFile: keys/jwks.json}"));
    ConfigException e = catchThrowableOfType(ConfigException.class, () -> GatewayConfig.load(file));
    assertThat(e).hasMessageContaining("plans.resolver.jwksFile")
        .hasMessageContaining(conf.resolve("keys").resolve("jwks.json").toString());
  }
}
