package dev.headroom.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.gateway.TestUpstream;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bodies are streamed, never buffered whole: the gateway runs in its own JVM with a 40 MiB heap
 * (started through the command line, {@code headroom serve --config FILE --port 0}) and carries
 * 256 MiB each way.
 */
class StreamingTest {
  static final long SIZE = 256L * 1024 * 1024;

  @TempDir Path dir;

  @Test
  void bodiesMuchLargerThanTheHeapStreamBothWays() throws Exception {
    try (TestUpstream upstream = new TestUpstream()) {
      Path config = dir.resolve("stream.yaml");
      Files.writeString(config, """
          service: {name: Streaming}
          admin: {enabled: false}
          limits: {maxBodyBytes: 1099511627776}
          upstreams:
            up: {url: "http://127.0.0.1:%d"}
          routes:
            - {method: GET, path: "/bytes/{n}", upstream: up}
            - {method: POST, path: /sink, upstream: up}
          """.formatted(upstream.port()));
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      Process p = new ProcessBuilder(List.of(java, "-Xmx40m", "-cp", System.getProperty("java.class.path"),
          "dev.headroom.cli.HeadroomCommand", "serve", "--config", config.toString(), "--port", "0",
          "--threads", "1"))
          .redirectError(dir.resolve("gateway.err").toFile()).start();
      try {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine(); // bounded by the process: it prints this line or exits
        assertThat(line).startsWith("listening on http://127.0.0.1:");
        String base = line.substring("listening on ".length());
        HttpClient client = HttpClient.newHttpClient();

        HttpResponse<InputStream> down = client.send(HttpRequest.newBuilder(URI.create(base + "/bytes/" + SIZE))
            .timeout(Duration.ofMinutes(2)).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(down.statusCode()).isEqualTo(200);
        long received = 0;
        try (InputStream in = down.body()) {
          byte[] buf = new byte[1 << 16];
          int r;
          while ((r = in.read(buf)) >= 0) {
            received += r;
          }
        }
        assertThat(received).isEqualTo(SIZE);

        HttpResponse<String> up = client.send(HttpRequest.newBuilder(URI.create(base + "/sink"))
            .timeout(Duration.ofMinutes(2))
            .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ZeroStream(SIZE))).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(up.statusCode()).isEqualTo(200);
        assertThat(up.body()).contains("\"receivedBytes\":" + SIZE);
        assertThat(p.isAlive()).isTrue(); // no OutOfMemoryError killed it
      } finally {
        p.destroy();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /** {@code n} zero bytes, generated on the fly. */
  static final class ZeroStream extends InputStream {
    private long left;

    ZeroStream(long n) {
      left = n;
    }

    @Override
    public int read() {
      if (left == 0) {
        return -1;
      }
      left--;
      return 0;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (left == 0) {
        return -1;
      }
      int n = (int) Math.min(len, left);
      Arrays.fill(b, off, off + n, (byte) 0);
      left -= n;
      return n;
    }
  }
}
