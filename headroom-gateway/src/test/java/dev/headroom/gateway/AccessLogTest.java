package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.headroom.ManualTicker;
import java.io.BufferedReader;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The access log ({@code accessLog}), read as an operator reads it: one line per exchange, JSON
 * or the combined log format (Apache httpd's {@code LogFormat "%h %l %u %t \"%r\" %>s %b
 * \"%{Referer}i\" \"%{User-agent}i\"" combined}, nginx's {@code combined}) followed by Headroom's
 * fields; the partition as the {@code pk} of the RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-09 sections 3.1.4 and 6.1), never the raw key; the query
 * left out unless asked for; the file reopened after logrotate renamed it.
 */
class AccessLogTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Instant NOW = Instant.parse("2026-03-04T05:06:07.123Z");
  private static final String API_KEY = "raw-api-key-0123456789";

  @TempDir Path dir;
  final TestUpstream upstream = new TestUpstream();
  final HttpClient client = HttpClient.newHttpClient();
  Gateway gateway;

  AccessLogTest() throws IOException {}

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    upstream.close();
  }

  private Path start(String accessLog) throws Exception {
    Path log = dir.resolve("access.log");
    String yaml = """
        service: {name: Access log test}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        pk: {exposure: hash}
        accessLog: %s
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          one: {quota: 1, window: 1h, partition: api-key, why: Limits keep the service available for everyone.}
        routes:
          - {name: echo, method: GET, path: "/echo/{id}", upstream: up, policies: [one], dialect: ietf}
        """.formatted(accessLog.replace("LOG", log.toString()), upstream.port());
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "access.yaml")).ticker(ManualTicker.atFixedInstant())
        .clock(Clock.fixed(NOW, ZoneOffset.UTC)).start();
    return log;
  }

  private HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + path))
        .version(HttpClient.Version.HTTP_1_1);
    if (headers.length > 0) {
      b.headers(headers);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The lines written once the gateway is closed (closing writes what was buffered). */
  private List<String> linesAfterClose(Path log) throws IOException {
    gateway.close();
    return Files.readAllLines(log);
  }

  /** The pk parameter of a RateLimit field, base64, as draft-09 section 3.1.4 writes it as a byte sequence. */
  private static String pk(HttpResponse<?> r) {
    Matcher m = Pattern.compile(";pk=:([A-Za-z0-9+/=]+):").matcher(r.headers().firstValue("RateLimit").orElseThrow());
    assertThat(m.find()).isTrue();
    return m.group(1);
  }

  @Test
  void jsonLinesSayEveryFieldOfAnAllowedARefusedAndALocallyAnsweredRequest() throws Exception {
    Path log = start("{format: json, path: LOG}");
    HttpResponse<String> allowed = get("/echo/1?token=secret", "X-Api-Key", API_KEY);
    HttpResponse<String> refused = get("/echo/2", "X-Api-Key", API_KEY, "Accept", "application/json");
    HttpResponse<String> missing = get("/nowhere");
    assertThat(allowed.statusCode()).isEqualTo(200);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(missing.statusCode()).isEqualTo(404);

    List<String> lines = linesAfterClose(log);
    assertThat(lines).hasSize(3).allSatisfy(l -> assertThat(l).doesNotContain(API_KEY).doesNotContain("secret"));

    JsonNode a = JSON.readTree(lines.get(0));
    assertThat(a.get("time").asText()).isEqualTo("2026-03-04T05:06:07.123Z");
    assertThat(a.get("client").asText()).isEqualTo("127.0.0.1");
    assertThat(a.get("method").asText()).isEqualTo("GET");
    assertThat(a.get("path").asText()).isEqualTo("/echo/1");
    assertThat(a.get("protocol").asText()).isEqualTo("HTTP/1.1");
    assertThat(a.get("status").asInt()).isEqualTo(200);
    assertThat(a.get("bytesIn").asLong()).isZero();
    assertThat(a.get("bytesOut").asLong()).isEqualTo(allowed.body().length());
    assertThat(a.get("durationMs").isNumber()).isTrue();
    assertThat(a.get("durationMs").asDouble()).isGreaterThanOrEqualTo(0);
    assertThat(a.get("upstreamMs").isNumber()).isTrue();
    assertThat(a.get("upstreamMs").asDouble()).isBetween(0.0, a.get("durationMs").asDouble());
    assertThat(a.get("route").asText()).isEqualTo("echo");
    assertThat(a.get("policies")).hasSize(1);
    assertThat(a.get("policies").get(0).asText()).isEqualTo("one");
    assertThat(a.get("outcome").asText()).isEqualTo("allowed");
    assertThat(a.get("policy").isNull()).isTrue();
    assertThat(a.get("pk").asText()).isEqualTo(pk(allowed));
    assertThat(a.get("complete").asBoolean()).isTrue();

    JsonNode r = JSON.readTree(lines.get(1));
    assertThat(r.get("path").asText()).isEqualTo("/echo/2");
    assertThat(r.get("status").asInt()).isEqualTo(429);
    assertThat(r.get("bytesOut").asLong()).isEqualTo(refused.body().length());
    assertThat(r.get("upstreamMs").isNull()).isTrue();
    assertThat(r.get("route").asText()).isEqualTo("echo");
    assertThat(r.get("outcome").asText()).isEqualTo("refused");
    assertThat(r.get("policy").asText()).isEqualTo("one");
    assertThat(r.get("policies").get(0).asText()).isEqualTo("one");
    assertThat(r.get("pk").asText()).isEqualTo(pk(refused)).isEqualTo(a.get("pk").asText());

    JsonNode n = JSON.readTree(lines.get(2));
    assertThat(n.get("path").asText()).isEqualTo("/nowhere");
    assertThat(n.get("status").asInt()).isEqualTo(404);
    assertThat(n.get("outcome").asText()).isEqualTo("local");
    assertThat(n.get("route").isNull()).isTrue();
    assertThat(n.get("policies")).isEmpty();
    assertThat(n.get("pk").isNull()).isTrue();
    assertThat(n.get("upstreamMs").isNull()).isTrue();
  }

  /** The combined format, with Headroom's fields after it; the query kept when {@code query: true}. */
  @Test
  void combinedLinesMatchTheCombinedFormatAndKeepTheQueryWhenAsked() throws Exception {
    Path log = start("{format: combined, path: LOG, query: true}");
    HttpResponse<String> allowed = get("/echo/7?page=2", "X-Api-Key", API_KEY, "Referer", "http://example.test/a",
        "User-Agent", "probe/1.0 \"quoted\"");
    assertThat(allowed.statusCode()).isEqualTo(200);

    List<String> lines = linesAfterClose(log);
    assertThat(lines).hasSize(1);
    Pattern combined = Pattern.compile("^(\\S+) - - \\[([^]]+)] \"([A-Z]+) (\\S+) (HTTP/1\\.[01])\" (\\d{3}) (\\d+|-)"
        + " \"((?:[^\"\\\\]|\\\\.)*)\" \"((?:[^\"\\\\]|\\\\.)*)\"(.*)$");
    Matcher m = combined.matcher(lines.get(0));
    assertThat(m.matches()).as(lines.get(0)).isTrue();
    assertThat(m.group(1)).isEqualTo("127.0.0.1");
    assertThat(m.group(2)).isEqualTo("04/Mar/2026:05:06:07 +0000");
    assertThat(m.group(4)).isEqualTo("/echo/7?page=2");
    assertThat(m.group(6)).isEqualTo("200");
    assertThat(m.group(7)).isEqualTo(Integer.toString(allowed.body().length()));
    assertThat(m.group(8)).isEqualTo("http://example.test/a");
    assertThat(m.group(9)).isEqualTo("probe/1.0 \\\"quoted\\\"");
    assertThat(m.group(10)).contains(" route=echo ", " outcome=allowed ", " policies=one ", " pk=" + pk(allowed) + " ",
        " bytesIn=0 ", " complete=true");
  }

  @Test
  void theQueryIsLeftOutByDefault() throws Exception {
    Path log = start("{format: combined, path: LOG}");
    assertThat(get("/echo/7?token=secret", "X-Api-Key", API_KEY).statusCode()).isEqualTo(200);
    assertThat(linesAfterClose(log)).singleElement().asString().contains("\"GET /echo/7 HTTP/1.1\"")
        .doesNotContain("token");
  }

  /** logrotate renames the file, then sends SIGUSR1: the next lines go to a new file of the configured name. */
  @Test
  void sigusr1ReopensTheFileAfterItWasRenamed() throws Exception {
    Path log = start("{path: LOG}");
    assertThat(get("/echo/1", "X-Api-Key", API_KEY).statusCode()).isEqualTo(200);
    awaitLines(log, 1);
    Path rotated = dir.resolve("access.log.1");
    Files.move(log, rotated);
    Process kill = new ProcessBuilder("kill", "-USR1", Long.toString(ProcessHandle.current().pid())).start();
    assertThat(kill.waitFor()).isZero();
    // the signal is handled on a thread of its own: a line written before the reopen still goes to
    // the renamed file, so requests are sent until one reaches the new file
    for (int i = 0; !Files.exists(log) || Files.readAllLines(log).isEmpty(); i++) {
      assertThat(i).as("a line in the reopened file").isLessThan(500);
      get("/nowhere/" + i);
      Thread.sleep(10);
    }
    List<String> fresh = linesAfterClose(log);
    assertThat(fresh).isNotEmpty().allSatisfy(l -> assertThat(JSON.readTree(l).get("status").asInt()).isEqualTo(404));
    assertThat(JSON.readTree(Files.readAllLines(rotated).get(0)).get("path").asText()).isEqualTo("/echo/1");
  }

  /** The dropped lines' meter is on /metrics from the start. */
  @Test
  void metricsCountDroppedLines() throws Exception {
    start("{path: LOG}");
    String metrics = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + gateway.adminAddress().orElseThrow().getPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString())
        .body();
    assertThat(metrics).contains("headroom_access_log_dropped_total 0.0");
  }

  /**
   * A writer that cannot keep up never holds a request back: its file is a pipe nobody reads until
   * the requests are done, so the writer blocks once the pipe is full, the buffer (4 lines here)
   * fills, and every further line is dropped and counted on /metrics; every request is answered,
   * and each one's line is either read from the pipe or counted as dropped.
   */
  @Test
  @EnabledOnOs(OS.LINUX)
  void aFullBufferDropsLinesAndCountsThemWithoutHoldingRequests() throws Exception {
    Path fifo = dir.resolve("access.fifo");
    assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
    AtomicInteger read = new AtomicInteger();
    CountDownLatch reading = new CountDownLatch(1);
    Thread reader = new Thread(() -> {
      try (BufferedReader in = Files.newBufferedReader(fifo)) {
        reading.await();
        while (in.readLine() != null) {
          read.incrementAndGet();
        }
      } catch (IOException | InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    reader.start(); // opening a pipe's reading end waits for its writing end: the gateway's
    String yaml = """
        service: {name: Access log test}
        listen: {host: 127.0.0.1, port: 0}
        admin: {host: 127.0.0.1, port: 0}
        accessLog: {path: "%s"}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        routes:
          - {name: echo, method: GET, path: /echo, upstream: up}
        """.formatted(fifo, upstream.port());
    gateway = Gateway.builder(GatewayConfig.parse(yaml, "access.yaml")).accessLogCapacity(4).start();
    int sent = 1000; // about 150 KB of lines: more than a pipe holds (64 KiB on Linux)
    for (int i = 0; i < sent; i++) {
      assertThat(get("/nowhere/" + i).statusCode()).isEqualTo(404);
    }
    long dropped = dropped();
    assertThat(dropped).isPositive();
    reading.countDown();
    for (int i = 0; read.get() + dropped() < sent; i++) {
      assertThat(i).as("lines read %d, dropped %d of %d", read.get(), dropped(), sent).isLessThan(500);
      Thread.sleep(10);
    }
    assertThat(read.get() + dropped()).isEqualTo(sent);
    gateway.close();
    reader.join();
  }

  private long dropped() throws Exception {
    String metrics = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + gateway.adminAddress().orElseThrow().getPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString())
        .body();
    Matcher m = Pattern.compile("(?m)^headroom_access_log_dropped_total (\\S+)$").matcher(metrics);
    assertThat(m.find()).isTrue();
    return (long) Double.parseDouble(m.group(1));
  }

  @Test
  void aFileThatCannotBeOpenedStopsTheStartNamingIt() {
    Path missing = dir.resolve("no-such-folder").resolve("access.log");
    ConfigException e = catchThrowableOfType(() -> start("{path: \"" + missing + "\"}"), ConfigException.class);
    assertThat(e.problems()).singleElement().asString().startsWith("accessLog.path: \"" + missing + "\" cannot be opened");
    gateway = null;
  }

  private static void awaitLines(Path log, int n) throws Exception {
    for (int i = 0; Files.readAllLines(log).size() < n; i++) {
      assertThat(i).as("lines written").isLessThan(500);
      Thread.sleep(10);
    }
  }
}
