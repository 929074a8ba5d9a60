package dev.headroom.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.gateway.TestCertificates;
import dev.headroom.gateway.TestCertificates.KeyKind;
import dev.headroom.gateway.TestCertificates.Pair;
import dev.headroom.gateway.TestUpstream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code headroom serve} with {@code listen.tls}: run in its own JVM with the command line's main
 * class, it says which TLS engine it uses (OpenSSL where netty-tcnative loads, the JDK's
 * otherwise), prints {@code listening on https://...}, and curl,
 * trusting the test CA only, gets the upstream's 200 through it. The certificate and key paths
 * are relative to the configuration file.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ServeTlsTest {
  @TempDir Path dir;

  @Test
  void servesHttpsWithOpenSslWhereItLoads() throws Exception {
    // netty-tcnative-boringssl-static ships the linux-x86_64 library, the platform this runs on
    assertThat(serve(List.of())).contains("listen.tls: OpenSSL (BoringSSL");
  }

  @Test
  void servesHttpsWithTheJdkEngineWhenOpenSslDoesNotLoad() throws Exception {
    // Netty's own switch: OpenSsl.isAvailable() is false, as on a platform without the library
    assertThat(serve(List.of("-Dio.netty.handler.ssl.noOpenSsl=true"))).contains("listen.tls: JDK engine");
  }

  /** Runs serve with {@code jvmFlags}, fetches one URL through it with curl; returns its standard error. */
  private String serve(List<String> jvmFlags) throws Exception {
    TestCertificates ca = TestCertificates.create(dir);
    Pair server = ca.server("server", KeyKind.EC_TRADITIONAL);
    try (TestUpstream upstream = new TestUpstream()) {
      Path config = dir.resolve("tls.yaml");
      Files.writeString(config, """
          service: {name: Tls}
          listen: {host: 127.0.0.1, port: 0, tls: {certificate: %s, key: %s}}
          admin: {enabled: false}
          upstreams:
            up: {url: "http://127.0.0.1:%d"}
          routes:
            - {method: GET, path: "/echo/{x}", upstream: up}
          """.formatted(server.certificate().getFileName(), server.key().getFileName(), upstream.port()));
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      Path stderr = dir.resolve("gateway.err");
      List<String> cmd = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:TieredStopAtLevel=1"));
      cmd.addAll(jvmFlags);
      cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "dev.headroom.cli.HeadroomCommand", "serve",
          "--config", config.toString(), "--threads", "1"));
      Process p = new ProcessBuilder(cmd).redirectError(stderr.toFile()).start();
      try {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine(); // bounded by the process: it prints this line or exits
        assertThat(line).startsWith("listening on https://127.0.0.1:");
        int port = Integer.parseInt(line.substring(line.lastIndexOf(':') + 1));
        Process curl = new ProcessBuilder("curl", "-sS", "--cacert", ca.ca().toString(), "-o", "/dev/null",
            "-w", "%{http_code} %{scheme}", "https://127.0.0.1:" + port + "/echo/cli")
            .redirectErrorStream(true).start();
        String got = new String(curl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(curl.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(got).isEqualTo("200 HTTPS");
        p.destroy();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the gateway exits").isTrue();
        assertThat(p.exitValue()).isZero();
        return Files.readString(stderr);
      } finally {
        p.destroyForcibly();
      }
    }
  }
}
