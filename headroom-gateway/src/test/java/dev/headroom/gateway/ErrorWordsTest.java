package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Error texts say what happened in words, never a Java class name ({@code AnnotatedConnectException},
 * {@code NoSuchFileException}): a 502 for an upstream that refuses connections (Graceful Boundaries
 * section 6, availability errors) and a key file that does not exist, each from a real socket or file.
 */
class ErrorWordsTest {
  @TempDir Path dir;

  private static final String YAML = """
      service: {name: Words test}
      listen: {host: 127.0.0.1, port: 0}
      admin: {enabled: false}
      timeouts: {connect: 2s}
      upstreams:
        up: {url: "http://127.0.0.1:%d"}
      policies:
        minute: {quota: 10, window: 1m, partition: client-ip, why: Limits keep the service available for everyone.}
      routes:
        - {method: GET, path: /x, upstream: up, policies: [minute], normaliseErrors: true}
      """;

  @Test
  void anUpstreamThatRefusesConnectionsIsA502SayingSo() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    try (Gateway g = Gateway.builder(GatewayConfig.parse(YAML.formatted(closed), "words.yaml"))
        .ticker(ManualTicker.atFixedInstant()).threads(2).watchFile(false).start()) {
      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + g.address().getPort() + "/x")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(502);
      JsonNode body = new ObjectMapper().readTree(r.body());
      assertThat(body.path("detail").asText())
          .isEqualTo("The upstream service could not be reached (connection refused). Try again later.");
      assertThat(r.body()).doesNotContain("Exception");
    }
  }

  @Test
  void aMissingKeyFileIsNoSuchFile() {
    Path missing = dir.resolve("pk.key");
    String yaml = YAML.formatted(1).replace("admin: {enabled: false}\n",
        "admin: {enabled: false}\npk: {exposure: hmac, keyFile: \"" + missing.toString().replace("\\", "\\\\") + "\"}\n");
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml, "pk.yaml"), ConfigException.class);
    assertThat(e.problems()).singleElement().satisfies(p -> assertThat(p)
        .startsWith("pk.keyFile: \"" + missing + "\" does not exist; expected a file holding the base64 HMAC key")
        .doesNotContain("Exception"));
  }
}
