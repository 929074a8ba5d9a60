package dev.headroom.conformance;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A redis-server of a test's own on a free loopback port, with a password, which the test can stop
 * and start again on the same port: how the front ends' tests show a store losing Redis and getting
 * it back (their health contributors going {@code DOWN} or {@code DEGRADED}, then {@code UP}).
 * Needs {@code redis-server} on the {@code PATH}. Keeps the process it started and its directory.
 */
public final class RedisProcess implements AutoCloseable {

  /** The password every client must give ({@code redis://default:secret@127.0.0.1:PORT}). */
  public static final String PASSWORD = "secret";

  private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

  private final int port;
  private final Path dir;
  private final List<String> extra;
  private Process process;

  private RedisProcess(int port, Path dir, List<String> extra) {
    this.port = port;
    this.dir = dir;
    this.extra = extra;
  }

  /**
   * Starts a redis-server on a free loopback port and waits until it accepts connections;
   * {@code extra} are more of its command-line options ({@code "--hz", "100"}).
   */
  public static RedisProcess launch(String... extra) throws IOException, InterruptedException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    RedisProcess r = new RedisProcess(port, Files.createTempDirectory("headroom-redis-process-"), List.of(extra));
    r.start();
    return r;
  }

  /** The port it listens on (the same after a {@link #stop()} and {@link #start()}). */
  public int port() {
    return port;
  }

  /** Its URI with the password, for a Redis store. */
  public String uri() {
    return "redis://default:" + PASSWORD + "@127.0.0.1:" + port;
  }

  /** Starts the server again (after {@link #stop()}) and waits until it accepts connections. */
  public void start() throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
        "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--requirepass", PASSWORD,
        "--logfile", dir.resolve("redis.log").toString()));
    cmd.addAll(extra);
    process = new ProcessBuilder(cmd).start();
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (true) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
        return;
      } catch (IOException ex) {
        if (System.nanoTime() > deadline || !process.isAlive()) {
          throw new IllegalStateException("redis-server did not start on port " + port, ex);
        }
        Thread.sleep(20);
      }
    }
  }

  /** Kills the server (as a crash would) and waits for it to end. */
  public void stop() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
