package dev.headroom.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.gateway.TestUpstream;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code headroom serve} stops gracefully on SIGTERM: run in its own JVM (the command line's main
 * class), sent SIGTERM ({@link Process#destroy()}) while a 3-second upstream call is in flight, it
 * still delivers that call's 200, says {@code Connection: close} on it and closes the connection
 * (RFC 9112 section 9.6), then exits with status 0.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ServeDrainTest {
  @TempDir Path dir;

  @Test
  void sigtermLetsTheRequestInFlightFinishWithIts200ThenExits0_rfc9112_9_6() throws Exception {
    try (TestUpstream upstream = new TestUpstream()) {
      Path config = dir.resolve("drain.yaml");
      Files.writeString(config, """
          service: {name: Drain}
          admin: {enabled: false}
          shutdown: {drainTimeout: 20s}
          upstreams:
            up: {url: "http://127.0.0.1:%d"}
          routes:
            - {method: GET, path: "/slow/{ms}", upstream: up}
          """.formatted(upstream.port()));
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      Path stderr = dir.resolve("gateway.err");
      Process p = new ProcessBuilder(List.of(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
          System.getProperty("java.class.path"), "dev.headroom.cli.HeadroomCommand", "serve", "--config",
          config.toString(), "--port", "0", "--threads", "1"))
          .redirectError(stderr.toFile()).start();
      try {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine(); // bounded by the process: it prints this line or exits
        assertThat(line).startsWith("listening on http://127.0.0.1:");
        int port = Integer.parseInt(line.substring(line.lastIndexOf(':') + 1));
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 10_000);
          s.setSoTimeout(60_000);
          OutputStream o = s.getOutputStream();
          o.write("GET /slow/3000 HTTP/1.1\r\nHost: test\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
          o.flush();
          upstream.awaitRequest("/slow/3000");

          p.destroy(); // SIGTERM

          InputStream in = s.getInputStream();
          String response = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1); // to the end: closed after it
          assertThat(response).startsWith("HTTP/1.1 200 ");
          assertThat(response.toLowerCase(Locale.ROOT)).contains("\r\nconnection: close\r\n");
          assertThat(response).endsWith("\r\n\r\nslow");
        }
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the gateway exits").isTrue();
        assertThat(p.exitValue()).as("exit status after a drain").isZero();
        assertThat(Files.readString(stderr)).contains("draining").doesNotContain("Exception");
      } finally {
        p.destroyForcibly();
      }
    }
  }
}
