package dev.headroom.checker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.Ticker;
import dev.headroom.client.TestServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code headroom check} on the command line: output, --json, and exit statuses usable in CI. */
class CheckCommandTest {

  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return new CommandLine(new CheckCommand()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err)).execute(args);
  }

  @Test
  void printsTheLevelAndEvidenceAndExitsZero() throws Exception {
    try (TestServer server = new Service().start(Ticker.system())) {
      int status = run(server.uri("/").toString(), "--probe", "10", "--min-level", "4");
      assertThat(status).as(out + "\n" + err).isZero();
      assertThat(out.toString()).contains("Graceful Boundaries level: 4 (declared: level-4)", "RateLimit dialects: ietf",
          "[PASS] level 1", "refused after 3 of at most 10 request(s)", "Requests sent:");
      System.out.println(out);
    }
  }

  @Test
  void jsonIsForMachines() throws Exception {
    try (TestServer server = new Service().withoutDiscovery().start(Ticker.system())) {
      int status = run(server.uri("/").toString(), "--probe", "5", "--json");
      assertThat(status).isZero();
      JsonNode json = new ObjectMapper().readTree(out.toString());
      assertThat(json.get("level").asText()).isEqualTo("1");
      assertThat(json.get("findings")).anySatisfy(f -> assertThat(f.get("rule").asText()).isEqualTo("GB-1"));
    }
  }

  @Test
  void belowMinLevelExitsOne() throws Exception {
    try (TestServer server = new Service().withoutDiscovery().start(Ticker.system())) {
      assertThat(run(server.uri("/").toString(), "--probe", "5", "--min-level", "2")).isEqualTo(CheckCommand.BELOW_MIN_LEVEL);
      assertThat(err.toString()).contains("level 1 is below --min-level 2");
    }
  }

  @Test
  void anUnreachableTargetExitsThree() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    assertThat(run("http://127.0.0.1:" + port + "/", "--timeout", "2")).isEqualTo(CheckCommand.UNREACHABLE);
    assertThat(err.toString()).contains("unreachable");
  }

  @Test
  void usageErrorsExitTwoNamingTheValue() {
    assertThat(run("http://127.0.0.1:1/", "--min-level", "7")).isEqualTo(2);
    assertThat(err.toString()).contains("level: expected N/A, 0, 1, 2, 3 or 4", "'7'");
    assertThat(run("http://127.0.0.1:1/", "--timeout", "0")).isEqualTo(2);
    assertThat(err.toString()).contains("--timeout: expected 1 to 3600 seconds, got 0");
    assertThat(run("http://127.0.0.1:1/", "--probe", "-1")).isEqualTo(2);
    assertThat(err.toString()).contains("probe: expected 0 to 10000 requests, got -1");
    assertThat(run("ftp://example.invalid/")).isEqualTo(2);
    assertThat(err.toString()).contains("target: expected an absolute http or https URL");
  }
}
