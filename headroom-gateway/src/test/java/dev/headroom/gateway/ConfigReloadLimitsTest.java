package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reload (SIGHUP and file changes call {@link Gateway#reloadFromFile()}, the admin port's
 * {@code POST /reload} the same) reads the file within the same bounds as the start: an oversized
 * or malformed file is refused with its problem and the configuration in force keeps serving.
 */
class ConfigReloadLimitsTest {
  private static final long MIB = 1 << 20;
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient client = HttpClient.newHttpClient();

  @TempDir Path dir;
  private Path file;
  private Gateway gateway;

  private void start(long maxConfigBytes) throws Exception {
    file = Files.writeString(dir.resolve("config.yaml"), GatewayConfig.sampleText());
    gateway = Gateway.builder(GatewayConfig.load(file, maxConfigBytes).withListenPort(0))
        .configFile(file).watchFile(false).maxConfigBytes(maxConfigBytes)
        .ticker(ManualTicker.atFixedInstant()).threads(2).start();
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
  }

  @Test
  void anOversizedFileIsRefusedOnTheAdminPortAndTheConfigurationInForceStays() throws Exception {
    start(GatewayConfig.DEFAULT_MAX_BYTES);
    ConfigFiles.write(file, GatewayConfig.sampleText().replace("Headroom demo", "Renamed"), 2 * MIB);
    HttpResponse<String> r = send("POST", admin("/reload"));
    assertThat(r.statusCode()).isEqualTo(422);
    JsonNode body = JSON.readTree(r.body());
    assertThat(body.get("error").asText()).isEqualTo("invalid_configuration");
    assertThat(body.get("problems")).hasSize(1);
    assertThat(body.get("problems").get(0).asText()).isEqualTo("the file is 2097152 bytes; expected at most "
        + "1048576 bytes (headroom serve --max-config-bytes sets the bound)");
    assertThat(send("GET", admin("/config")).body()).isEqualTo(GatewayConfig.sampleText());
    assertThat(send("GET", proxy("/hello")).statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(send("GET", proxy("/.well-known/limits")).body()).get("service").asText())
        .isEqualTo("Headroom demo");
  }

  @Test
  void duplicateKeysAndAliasesAreRefusedOnReloadAndTheConfigurationInForceStays() throws Exception {
    start(GatewayConfig.DEFAULT_MAX_BYTES);
    String sample = GatewayConfig.sampleText();
    Files.writeString(file, sample.replace("    quota: 5\n", "    quota: 5\n    quota: 500\n"));
    ConfigException dup = catchThrowableOfType(() -> gateway.reloadFromFile(), ConfigException.class);
    int first = lineOf(sample, "    quota: 5\n");
    assertThat(dup.getMessage()).isEqualTo(file + ": policies.burst.quota: duplicate key \"quota\" at line "
        + (first + 1) + ", first at line " + first + "; expected each key once in a mapping");
    Files.writeString(file, sample.replace("    quota: 1000\n", "    quota: &q 1000\n")
        .replace("    quota: 2\n", "    quota: *q\n"));
    ConfigException alias = catchThrowableOfType(() -> gateway.reloadFromFile(), ConfigException.class);
    assertThat(alias.getMessage()).startsWith(file + ": policies.in-flight.quota: the alias *q at line");
    HttpResponse<String> r = send("POST", admin("/reload"));
    assertThat(r.statusCode()).isEqualTo(422);
    assertThat(JSON.readTree(r.body()).get("problems").get(0).asText()).startsWith("policies.in-flight.quota: the alias");
    assertThat(gateway.config().text()).isEqualTo(sample);
    assertThat(gateway.config().policies().get("in-flight").quota().quota()).isEqualTo(2);
    assertThat(send("GET", proxy("/hello")).statusCode()).isEqualTo(200);
  }

  @Test
  void aRaisedBoundAppliesToReloadsToo() throws Exception {
    start(2 * MIB);
    ConfigFiles.write(file, GatewayConfig.sampleText().replace("Headroom demo", "Renamed"), 2 * MIB);
    gateway.reloadFromFile();
    assertThat(gateway.config().service().name()).isEqualTo("Renamed");
    ConfigFiles.write(file, GatewayConfig.sampleText().replace("Headroom demo", "Too big"), 2 * MIB + 1);
    ConfigException e = catchThrowableOfType(() -> gateway.reloadFromFile(), ConfigException.class);
    assertThat(e.problems()).containsExactly("the file is 2097153 bytes; expected at most 2097152 bytes "
        + "(headroom serve --max-config-bytes sets the bound)");
    assertThat(gateway.config().service().name()).isEqualTo("Renamed");
  }

  private static int lineOf(String text, String line) {
    return (int) text.substring(0, text.indexOf(line)).lines().count() + 1;
  }

  private URI admin(String path) {
    InetSocketAddress a = gateway.adminAddress().orElseThrow();
    return URI.create("http://127.0.0.1:" + a.getPort() + path);
  }

  private URI proxy(String path) {
    return URI.create("http://127.0.0.1:" + gateway.address().getPort() + path);
  }

  private HttpResponse<String> send(String method, URI uri) throws Exception {
    return client.send(HttpRequest.newBuilder(uri).method(method, HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
