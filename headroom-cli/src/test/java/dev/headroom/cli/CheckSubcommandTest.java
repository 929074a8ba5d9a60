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
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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

  /**
   * Issue 18's "done": what {@code ./headroom serve} runs rates level 4 over real sockets, declares
   * exactly that, and every link it hands out (alternativeEndpoint, humanUrl, upgradeUrl) resolves.
   */
  @Test
  void theSampleConfigurationIsLevel4AndDeclaresIt() throws Exception {
    Run r = headroom("check", url, "--probe", "10", "--min-level", "4", "--json");
    assertThat(r.status()).as(r.out() + r.err()).isZero();
    JsonNode report = new ObjectMapper().readTree(r.out());
    assertThat(report.get("level").asText()).as(r.out()).isEqualTo("4");
    assertThat(report.get("declared").asText()).as(r.out()).isEqualTo("level-4");
    assertThat(report.get("dialects")).extracting(JsonNode::asText).containsExactly("ietf");
    assertThat(report.get("requirements")).as(r.out()).allMatch(q -> q.get("status").asText().equals("PASS"));
    assertThat(report.get("findings")).as(r.out())
        .noneMatch(f -> f.get("severity").asText().equals("VIOLATION") || f.get("severity").asText().equals("WARNING"));
    String guidance = report.get("requirements").get(3).get("evidence").toString();
    assertThat(guidance).as(r.out()).contains("followed: GET /cached/hello -> 200", "followed: GET /docs/limits -> 200");
  }

  /**
   * The README's walk-through runs the check right after curl has used the burst: every answer the
   * checker gets is then a refusal, and it honours Retry-After (within its timeout) to see one
   * success and its RateLimit fields, so the level is still 4 and not "unverified".
   */
  @Test
  void aCheckStartedWhileItsAddressIsRefusedWaitsRetryAfterAndStillRatesLevel4() throws Exception {
    GatewayConfig sample = GatewayConfig.sample().withListenPort(0).withAdminPort(0);
    try (Gateway live = Gateway.builder(sample).threads(2).watchFile(false).start()) {
      String liveUrl = "http://127.0.0.1:" + live.address().getPort();
      HttpClient client = HttpClient.newHttpClient();
      int status = 0;
      for (int i = 0; i < 20 && status != 429; i++) {
        status = client.send(HttpRequest.newBuilder(URI.create(liveUrl + "/hello")).build(),
            HttpResponse.BodyHandlers.discarding()).statusCode();
      }
      assertThat(status).as("the burst is used before the check").isEqualTo(429);
      Run r = headroom("check", liveUrl, "--probe", "10", "--json");
      JsonNode report = new ObjectMapper().readTree(r.out());
      assertThat(report.get("level").asText()).as(r.out()).isEqualTo("4");
      assertThat(report.get("requirements").toString()).as(r.out()).contains("asked again after Retry-After");
    }
  }

  /** Without guidance on the policy that refuses first, the gateway declares level 2, and is level 2. */
  @Test
  void aSampleWithoutGuidanceDeclaresAndRatesLevel2AndMissesAMinimumOf3() throws Exception {
    String text = GatewayConfig.sampleText().replaceFirst(
        "(?s)(  burst:.*?)    guidance:\n      alternativeEndpoint: /cached/hello\n      humanUrl: /docs/limits\n", "$1");
    GatewayConfig config = GatewayConfig.parse(text, "unguided.yaml").withListenPort(0).withAdminPort(0);
    try (Gateway unguided = Gateway.builder(config).ticker(ManualTicker.atFixedInstant()).threads(2).watchFile(false).start()) {
      Run r = headroom("check", "http://127.0.0.1:" + unguided.address().getPort(), "--probe", "10", "--min-level", "3");
      assertThat(r.status()).as(r.out() + r.err()).isEqualTo(CheckCommand.BELOW_MIN_LEVEL);
      assertThat(r.out()).contains("Graceful Boundaries level: 2 (declared: level-2)");
      assertThat(r.err()).contains("level 2 is below --min-level 3");
    }
  }

  @Test
  void anUnreachableTargetExitsWithThree() throws Exception {
    gateway.close();
    Run r = headroom("check", url, "--timeout", "2");
    assertThat(r.status()).as(r.out() + r.err()).isEqualTo(CheckCommand.UNREACHABLE);
  }
}
