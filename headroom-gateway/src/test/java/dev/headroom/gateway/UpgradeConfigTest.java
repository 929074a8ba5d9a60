package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.headroom.gateway.config.Timeouts;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code routes[].upgrade} and {@code timeouts.tunnelIdle} as the configuration reads them: each
 * bad value a problem naming its path, the value and what was expected; the shipped schema agrees.
 */
class UpgradeConfigTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private static String config(String timeouts, String routes) {
    return """
        service: {name: Upgrade config}
        %s
        upstreams:
          up: {url: "http://127.0.0.1:9"}
        policies:
          calls: {quota: 5, window: 1m, partition: global, why: A bound.}
        routes:
        %s
        """.formatted(timeouts, routes);
  }

  @Test
  void upgradeAndTunnelIdleAreReadAndValidateAgainstTheSchema() throws Exception {
    String yaml = config("timeouts: {tunnelIdle: 90s}", """
          - {name: chat, method: GET, path: /chat, upstream: up, policies: [calls], upgrade: [WebSocket, irc/6.9]}
          - {name: plain, method: GET, path: /plain, upstream: up}
        """);
    GatewayConfig c = GatewayConfig.parse(yaml, "up.yaml");
    assertThat(c.routes().get(0).upgrade()).isEqualTo(Set.of("websocket", "irc/6.9"));
    assertThat(c.routes().get(1).upgrade()).isEmpty();
    assertThat(c.timeouts().tunnelIdle()).isEqualTo(Duration.ofSeconds(90));
    assertThat(Schemas.validate(Schemas.CONFIG, YAML.readTree(yaml))).isEmpty();
  }

  @Test
  void tunnelIdleDefaultsToFiveMinutes() throws Exception {
    GatewayConfig c = GatewayConfig.parse(config("timeouts: {idle: 10s}",
        "  - {method: GET, path: /x, upstream: up}\n"), "up.yaml");
    assertThat(c.timeouts().tunnelIdle()).isEqualTo(Duration.ofMinutes(5)).isEqualTo(Timeouts.DEFAULT_TUNNEL_IDLE);
    GatewayConfig none = GatewayConfig.parse(config("", "  - {method: GET, path: /x, upstream: up}\n"), "up.yaml");
    assertThat(none.timeouts().tunnelIdle()).isEqualTo(Timeouts.DEFAULT_TUNNEL_IDLE);
  }

  @Test
  void badUpgradesAreProblemsNamingPathValueAndExpectation() throws Exception {
    String yaml = config("timeouts: {tunnelIdle: forever}", """
          - {method: GET, path: /a, upstream: up, upgrade: websocket}
          - {method: GET, path: /b, upstream: up, upgrade: [h2c]}
          - {method: GET, path: /c, upstream: up, upgrade: [websocket, WEBSOCKET]}
          - {method: GET, path: /d, upstream: up, upgrade: ["web socket"]}
          - {method: POST, path: /e, upstream: up, upgrade: [websocket]}
          - {method: GET, path: /f, upstream: up, upgrade: []}
        """);
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("timeouts.tunnelIdle: \"forever\" is not valid"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].upgrade: \"websocket\" is not valid")
        .contains("a list of protocols such as [websocket]"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[1].upgrade[0]: \"h2c\"")
        .contains("RFC 9113"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[2].upgrade[1]: \"WEBSOCKET\"")
        .contains("each protocol once"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[3].upgrade[0]: \"web socket\"")
        .contains("a token"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[4].upgrade:")
        .contains("only on a route that takes GET"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[5].upgrade:"));
    JsonNode tree = YAML.readTree(yaml);
    assertThat(Schemas.validate(Schemas.CONFIG, tree)).hasSizeGreaterThanOrEqualTo(4);
  }

  @Test
  void aVendRouteTakesNoUpgrade() {
    String yaml = config("", """
          - {type: vend, path: /vend, upstream: up, upgrade: [websocket]}
        """);
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml, "bad.yaml"), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("routes[0].upgrade:").contains("no upgrade on a vend route"));
  }
}
