package dev.headroom.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code headroom serve}, run in its own JVM, always ends on SIGTERM (issue 36: after a long soak a
 * gateway outlived its {@code main}, its event loops still running, and a second SIGTERM did
 * nothing). After the faults of the soak in small (configuration reloads, the upstream stopped,
 * Redis restarted under a {@code fallback} store, {@code jcmd} attached) one SIGTERM drains and exits
 * 0; with a jar replaced under it (the likely cause: classes the stop loads first no longer load)
 * SIGTERM still ends it; a second SIGTERM or SIGINT during a drain stops at once, cutting the
 * exchange in flight, and exits 5.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ServeStopTest {
  /** Generous: the process exits within a second or two on a quiet machine. */
  private static final long EXIT_SECONDS = 60;

  @TempDir Path dir;
  final List<Process> started = new ArrayList<>();
  Upstream upstream;

  @AfterEach
  void stopAll() {
    started.forEach(Process::destroyForcibly);
    if (upstream != null) {
      upstream.stop();
    }
  }

  @Test
  void afterReloadsUpstreamStopsRedisRestartsAndJcmdOneSigtermDrainsAndExits0() throws Exception {
    int redisPort = freePort();
    Process redis = redis(redisPort);
    upstream = Upstream.start(freePort());
    Path config = dir.resolve("soak.yaml");
    writeConfig(config, redisPort, 200);
    Process gateway = serve(config, "--threads", "2");
    int port = listeningPort(gateway);
    Path err = dir.resolve("gateway.err");
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    for (int i = 1; i <= 30; i++) {
      writeConfig(config, redisPort, 200 + i % 2); // the soak's reload: the quota moves by one
      awaitLines(err, "configuration reloaded", i);
      if (i % 6 == 0) { // the upstream flaps
        upstream.stop();
        assertThat(get(http, port, "k" + i)).as("upstream stopped").isEqualTo(502);
        upstream = Upstream.start(upstream.port);
      }
      if (i == 10 || i == 20) { // Redis restarted: the store falls back, then reconnects
        redis.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        assertThat(get(http, port, "k" + i)).as("decided by the fallback").isEqualTo(200);
        redis = redis(redisPort);
      }
      assertThat(get(http, port, "k" + i)).isEqualTo(200);
    }
    jcmd(gateway, "GC.run");
    jcmd(gateway, "GC.class_histogram");

    gateway.destroy(); // SIGTERM
    redis.destroyForcibly(); // as the soak's clean-up does, at once: Redis goes while the gateway stops

    assertThat(gateway.waitFor(EXIT_SECONDS, TimeUnit.SECONDS)).as("the gateway exits; its log:\n%s",
        Files.readString(err)).isTrue();
    assertThat(gateway.exitValue()).as("exit status; the log:\n%s", Files.readString(err)).isZero();
    assertThat(Files.readString(err)).contains("draining", "stopped: every exchange in flight finished");
  }

  /**
   * The process, reproduced: a jar on the class path overwritten in place while the
   * gateway runs (as a rebuild of the executable jar does during a soak), so that the classes the
   * stop loads for the first time (the logger's, here) no longer load. The old command's main died
   * of the NoClassDefFoundError, picocli letting errors through, and the event loops kept the JVM
   * alive for ever; now the stop ends the process whatever fails.
   */
  @Test
  void aSigtermEndsTheProcessEvenWhenAJarIsReplacedUnderIt() throws Exception {
    upstream = Upstream.start(freePort());
    Path config = dir.resolve("swap.yaml");
    Files.writeString(config, """
        service: {name: Swap}
        admin: {enabled: false}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        routes:
          - {method: GET, path: "/api", upstream: up}
        """.formatted(upstream.port));
    String logger = jarOf("org/slf4j/Logger.class");
    Path copy = Files.copy(Path.of(logger), dir.resolve("replaced.jar"));
    String classPath = System.getProperty("java.class.path").replace(logger, copy.toString());
    Process gateway = serve(classPath, config, "--threads", "2");
    int port = listeningPort(gateway);
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    assertThat(get(http, port, "before")).isEqualTo(200); // the serving loops started

    Files.write(copy, new byte[4096]); // in place, the same file: what the JVM opened is now zeros

    gateway.destroy(); // SIGTERM
    Path err = dir.resolve("gateway.err");
    assertThat(gateway.waitFor(EXIT_SECONDS, TimeUnit.SECONDS)).as("the gateway exits; its log:\n%s",
        Files.readString(err)).isTrue();
    assertThat(gateway.exitValue()).as("0 when nothing failed, 1 when the stop failed").isIn(0, 1);
  }

  private static String jarOf(String resource) {
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (entry.endsWith(".jar") && ClassLoader.getSystemResource(resource).toString().contains(entry)) {
        return entry;
      }
    }
    throw new IllegalStateException(resource + " is in no jar of the class path");
  }

  @Test
  void aSecondSigtermDuringTheDrainStopsAtOnceCuttingTheExchangeInFlightAndExits5() throws Exception {
    secondSignalStopsAtOnce("TERM");
  }

  @Test
  void aSigintAfterTheSigtermDoesTheSame() throws Exception {
    secondSignalStopsAtOnce("INT");
  }

  private void secondSignalStopsAtOnce(String second) throws Exception {
    upstream = Upstream.start(freePort());
    Path config = dir.resolve("hang.yaml");
    Files.writeString(config, """
        service: {name: Stop}
        admin: {enabled: false}
        shutdown: {drainTimeout: 10m}
        timeouts: {response: 10m}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        routes:
          - {method: GET, path: "/hang", upstream: up}
        """.formatted(upstream.port));
    Process gateway = serve(config, "--threads", "1");
    int port = listeningPort(gateway);
    Path err = dir.resolve("gateway.err");
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 10_000);
      s.setSoTimeout((int) TimeUnit.SECONDS.toMillis(EXIT_SECONDS));
      OutputStream o = s.getOutputStream();
      o.write("GET /hang HTTP/1.1\r\nHost: test\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
      o.flush();
      assertThat(upstream.hanging.await(30, TimeUnit.SECONDS)).as("the request reached the upstream").isTrue();

      gateway.destroy(); // SIGTERM: the drain would wait up to 10 minutes for /hang to answer
      awaitLines(err, "draining", 1);
      signal(gateway, second);

      assertThat(gateway.waitFor(EXIT_SECONDS, TimeUnit.SECONDS)).as("the gateway exits; its log:\n%s",
          Files.readString(err)).isTrue();
      assertThat(gateway.exitValue()).as("exit status after a forced stop").isEqualTo(ServeStop.FORCED);
      assertThat(Files.readString(err)).contains("second signal");
      InputStream in = s.getInputStream();
      try {
        assertThat(in.readAllBytes()).as("no response: the exchange was cut").isEmpty();
      } catch (IOException reset) {
        // cut by a reset: as good an answer
      }
    }
  }

  private Process serve(Path config, String... more) throws IOException {
    return serve(System.getProperty("java.class.path"), config, more);
  }

  private Process serve(String classPath, Path config, String... more) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    // Started as a shell starts a command in the foreground, with SIGINT and SIGTERM at their
    // defaults: a build run in the background (CI) inherits SIGINT ignored, and the JVM then never
    // installs a handler for it (a signal ignored at start stays ignored, as in every program).
    List<String> cmd = new ArrayList<>(List.of("python3", "-c", "import os, signal, sys; "
        + "signal.signal(signal.SIGINT, signal.SIG_DFL); signal.signal(signal.SIGTERM, signal.SIG_DFL); "
        + "os.execv(sys.argv[1], sys.argv[1:])", java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
        classPath, "dev.headroom.cli.HeadroomCommand", "serve", "--config",
        config.toString(), "--port", "0"));
    cmd.addAll(List.of(more));
    Process p = new ProcessBuilder(cmd).redirectError(dir.resolve("gateway.err").toFile()).start();
    started.add(p);
    return p;
  }

  private static int listeningPort(Process p) throws IOException {
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine(); // bounded by the process: it prints this line or exits
    assertThat(line).startsWith("listening on http://127.0.0.1:");
    return Integer.parseInt(line.substring(line.lastIndexOf(':') + 1));
  }

  /** Writes the configuration as the soak does: a temporary file moved into place. */
  private void writeConfig(Path config, int redisPort, int quota) throws IOException {
    Path tmp = dir.resolve("soak.yaml.tmp");
    Files.writeString(tmp, """
        service: {name: Soak}
        admin: {enabled: false}
        store: {type: redis, uri: "redis://127.0.0.1:%d", keyPrefix: "stop:", failurePolicy: fallback, maxKeys: 1000}
        upstreams:
          origin: {url: "http://127.0.0.1:%d", maxConnections: 16}
        policies:
          per-key:
            quota: %d
            window: 10s
            partition: header:X-Key
            why: One quota per key.
        routes:
          - {method: GET, path: /api, upstream: origin, policies: [per-key]}
        """.formatted(redisPort, upstream.port, quota));
    Files.move(tmp, config, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static int get(HttpClient http, int port, String key) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api"))
        .header("X-Key", key).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  /** Waits (bounded) until the log holds {@code count} lines containing {@code text}. */
  private static void awaitLines(Path log, String text, int count) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(EXIT_SECONDS);
    while (true) {
      long seen = Files.readString(log).lines().filter(l -> l.contains(text)).count();
      if (seen >= count) {
        return;
      }
      assertThat(System.nanoTime()).as("%d lines with \"%s\" in the log:\n%s", count, text, Files.readString(log))
          .isLessThan(until);
      Thread.sleep(20);
    }
  }

  private static void signal(Process p, String signal) throws Exception {
    Process k = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start();
    assertThat(k.waitFor(10, TimeUnit.SECONDS) && k.exitValue() == 0).as("kill -%s", signal).isTrue();
  }

  private static void jcmd(Process p, String command) throws Exception {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    Process j = new ProcessBuilder(jcmd.toString(), Long.toString(p.pid()), command)
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    assertThat(j.waitFor(EXIT_SECONDS, TimeUnit.SECONDS) && j.exitValue() == 0).as("jcmd %s", command).isTrue();
  }

  /** A redis-server of this test's own on {@code port} (never the shared 6379), answering PING. */
  private Process redis(int port) throws Exception {
    Path data = Files.createDirectories(dir.resolve("redis"));
    Process p = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
        "--save", "", "--appendonly", "no", "--dir", data.toString())
        .redirectErrorStream(true).redirectOutput(data.resolve("redis.log").toFile()).start();
    started.add(p);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!pong(port)) {
      assertThat(p.isAlive() && System.nanoTime() < until).as("redis-server on port %d started", port).isTrue();
      Thread.sleep(20);
    }
    return p;
  }

  private static boolean pong(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
      s.setSoTimeout(2000);
      s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      byte[] b = new byte[5];
      return s.getInputStream().readNBytes(b, 0, 5) == 5 && new String(b, StandardCharsets.US_ASCII).equals("+PONG");
    } catch (IOException e) {
      return false;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /**
   * An upstream on a fixed loopback port that can be stopped and started again there: {@code /api}
   * answers 200 at once, {@code /hang} never (until stopped).
   */
  static final class Upstream {
    final int port;
    final CountDownLatch hanging = new CountDownLatch(1);
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final HttpServer server;

    private Upstream(int port, HttpServer server) {
      this.port = port;
      this.server = server;
    }

    static Upstream start(int port) throws IOException {
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
      Upstream u = new Upstream(port, server);
      server.createContext("/api", x -> {
        byte[] body = "{\"message\":\"hello\"}".getBytes(StandardCharsets.UTF_8);
        x.sendResponseHeaders(200, body.length);
        x.getResponseBody().write(body);
        x.close();
      });
      server.createContext("/hang", x -> {
        u.hanging.countDown();
        try {
          u.stopped.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        x.close();
      });
      server.setExecutor(Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "upstream-" + port);
        t.setDaemon(true);
        return t;
      }));
      server.start();
      return u;
    }

    void stop() {
      stopped.countDown();
      server.stop(0);
    }
  }
}
