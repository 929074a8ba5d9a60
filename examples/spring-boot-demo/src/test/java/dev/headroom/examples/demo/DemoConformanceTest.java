package dev.headroom.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.checker.Checker;
import dev.headroom.checker.Finding;
import dev.headroom.checker.Level;
import dev.headroom.checker.Report;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

/**
 * {@code headroom check --probe} against the demo as shipped, over a real port: Graceful Boundaries
 * level 4 (discovery, structured refusals with guidance, proactive headers, and the framework's own
 * 404/405/500 answered with {@code error}, {@code detail} and {@code why}, Graceful Boundaries
 * section 6), and the level the discovery document declares is the level observed.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(DemoApplicationTest.Clock.class)
class DemoConformanceTest {

  @LocalServerPort int port;

  @Test
  void headroomCheckWithProbeRatesTheDemoLevel4AsDeclared() throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    Report r = Checker.builder(http).probe(10).probeEndpoint("/api/items/1").timeout(Duration.ofSeconds(10)).build()
        .check(URI.create("http://127.0.0.1:" + port + "/"));
    assertThat(r.findings(Finding.Severity.VIOLATION)).as(r.toText()).isEmpty();
    assertThat(r.level()).as(r.toText()).isEqualTo(Level.LEVEL_4);
    assertThat(r.declared().map(Level::parse)).as(r.toText()).hasValue(Level.LEVEL_4);
  }
}
