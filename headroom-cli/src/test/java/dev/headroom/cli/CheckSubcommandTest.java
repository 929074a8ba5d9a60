package dev.headroom.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import dev.headroom.checker.CheckCommand;
import dev.headroom.gateway.Gateway;
import dev.headroom.gateway.GatewayConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code headroom check URL}: headroom-checker's command run through the gateway's own command line
 * against the gateway running the built-in sample configuration (what {@code ./headroom serve}
 * runs), whose discovery document declares the level the checker then observes (Graceful
 * Boundaries section 1, "conformance").
 */
class CheckSubcommandTest {

  private Gateway gateway;
  private String url;

  @BeforeEach
  void start() throws Exception {
    GatewayConfig sample = GatewayConfig.sample().withListenPort(0).withAdminPort(0);
    gateway = Gateway.builder(sample).ticker(ManualTicker.atFixedInstant()).threads(2).watchFile(false).start();
    url = "http://127.0.0.1:" + gateway.address().getPort();
  }

  @AfterEach
  void stop() {
    gateway.close();
  }

  private record Run(int status, String out, String err) {}

  private static Run headroom(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = HeadroomCommand.commandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int status = cli.execute(args);
    return new Run(status, out.toString(), err.toString());
  }

  @Test
  void theHelpListsCheck() {
    Run r = headroom("--help");
    assertThat(r.status()).isZero();
    assertThat(r.out()).containsPattern("(?m)^\\s+check\\s+Checks a service");
  }

  @Test
  void checkingTheSampleConfigurationObservesTheLevelItDeclares() throws Exception {
    Run r = headroom("check", url, "--probe", "10", "--json");
    assertThat(r.status()).as(r.err()).isZero();
    JsonNode report = new ObjectMapper().readTree(r.out());
    assertThat(report.get("level").asText()).as(r.out()).isEqualTo("2");
    assertThat(report.get("declared").asText()).as(r.out()).isEqualTo("level-2");
    assertThat(report.get("dialects")).extracting(JsonNode::asText).containsExactly("ietf");
    assertThat(report.get("findings")).as(r.out())
        .noneMatch(f -> f.get("severity").asText().equals("VIOLATION"));
  }

  @Test
  void aMinimumLevelAboveTheObservedOneExitsWithOne() {
    Run r = headroom("check", url, "--probe", "10", "--min-level", "3");
    assertThat(r.status()).as(r.out() + r.err()).isEqualTo(CheckCommand.BELOW_MIN_LEVEL);
    assertThat(r.out()).contains("Graceful Boundaries level: 2 (declared: level-2)");
    assertThat(r.err()).contains("level 2 is below --min-level 3");
  }

  @Test
  void anUnreachableTargetExitsWithThree() throws Exception {
    gateway.close();
    Run r = headroom("check", url, "--timeout", "2");
    assertThat(r.status()).as(r.out() + r.err()).isEqualTo(CheckCommand.UNREACHABLE);
  }
}
