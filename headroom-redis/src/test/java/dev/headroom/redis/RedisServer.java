package dev.headroom.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A redis-server process of a test's own, on a free loopback port, in a temporary directory.
 * Never the shared 6379 one. Stopped by {@link #close()} (tests use try-with-resources or
 * {@code @AfterAll}, so it stops even when the test fails), and by a shutdown hook as a last resort.
 */
final class RedisServer implements AutoCloseable {

  final int port;
  final Path dir;
  private final List<String> extra;
  /** A Sentinel's configuration file (Sentinel needs one it can rewrite), or null for a data node. */
  private final Path sentinelConfig;
  private Process process;

  private RedisServer(int port, Path dir, List<String> extra) {
    this(port, dir, extra, null);
  }

  private RedisServer(int port, Path dir, List<String> extra, Path sentinelConfig) {
    this.port = port;
    this.dir = dir;
    this.extra = extra;
    this.sentinelConfig = sentinelConfig;
  }

  /**
   * Starts a Sentinel on a free port watching the master {@code name} at {@code masterPort}, with
   * quorum 2, {@code down-after-milliseconds} 1000 and {@code failover-timeout} 3000 (short, for
   * tests that kill the master).
   */
  static RedisServer sentinel(String name, int masterPort) throws IOException {
    int port = freePort(false);
    Path dir = Files.createTempDirectory("headroom-sentinel-" + port);
    Path conf = dir.resolve("sentinel.conf");
    Files.writeString(conf, "sentinel monitor " + name + " 127.0.0.1 " + masterPort + " 2\n"
        + "sentinel down-after-milliseconds " + name + " 1000\n"
        + "sentinel failover-timeout " + name + " 3000\n"
        + "sentinel parallel-syncs " + name + " 1\n");
    RedisServer s = new RedisServer(port, dir, List.of(), conf);
    s.start();
    return s;
  }

  /** Starts a server on a free port (and, for Cluster nodes, a free bus port at +10000). */
  static RedisServer launch(String... extra) throws IOException {
    int port = freePort(extra.length > 0 && List.of(extra).contains("--cluster-enabled"));
    Path dir = Files.createTempDirectory("headroom-redis-" + port);
    RedisServer s = new RedisServer(port, dir, List.of(extra));
    s.start();
    return s;
  }

  /** Starts a server on the given port. */
  static RedisServer onPort(int port, String... extra) throws IOException {
    RedisServer s = new RedisServer(port, Files.createTempDirectory("headroom-redis-" + port), List.of(extra));
    s.start();
    return s;
  }

  /** How many {@code FCALL}s this server has run ({@code INFO commandstats}). */
  long fcalls() throws Exception {
    Process p = new ProcessBuilder("redis-cli", "-p", Integer.toString(port), "info", "commandstats")
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor(5, TimeUnit.SECONDS);
    Matcher m = Pattern.compile("cmdstat_fcall:calls=(\\d+)").matcher(out);
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /**
   * The number of keys of each {@code FCALL} in the slow log, oldest first (log every command:
   * {@code CONFIG SET slowlog-log-slower-than 0}).
   */
  List<Integer> fcallKeyCounts() throws Exception {
    Process p = new ProcessBuilder("redis-cli", "-p", Integer.toString(port), "slowlog", "get", "1024")
        .redirectErrorStream(true).start();
    List<String> lines = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
    p.waitFor(5, TimeUnit.SECONDS);
    List<Integer> counts = new ArrayList<>();
    for (int i = 0; i + 2 < lines.size(); i++) {
      if (lines.get(i).equalsIgnoreCase("fcall")) {
        counts.add(0, Integer.parseInt(lines.get(i + 2))); // the log lists the newest first
      }
    }
    return counts;
  }

  String uri() {
    return "redis://127.0.0.1:" + port;
  }

  synchronized void start() throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add("redis-server");
    if (sentinelConfig != null) {
      cmd.add(sentinelConfig.toString());
      cmd.add("--sentinel");
    }
    cmd.addAll(List.of("--port", Integer.toString(port),
        "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString(),
        "--logfile", dir.resolve("redis.log").toString()));
    cmd.addAll(extra);
    process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("stdout.log").toFile()).start();
    Process p = process;
    Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      if ("+PONG".equals(command("PING"))) {
        return;
      }
      if (System.nanoTime() > until || !process.isAlive()) {
        throw new IOException("redis-server on port " + port + " did not start; see " + dir);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(e);
      }
    }
  }

  /** Kills the server at once (no shutdown, no save): Redis stopped mid-load. */
  synchronized void kill() {
    if (process != null) {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      process = null;
    }
  }

  /**
   * Stops the process where it stands (SIGSTOP): it reads nothing, answers nothing and keeps its
   * sockets open, as a replica that hangs. {@link #thaw()} lets it run on.
   */
  synchronized void freeze() throws Exception {
    signal("-STOP");
  }

  /** Lets a {@link #freeze() frozen} process run on (SIGCONT). */
  synchronized void thaw() throws Exception {
    signal("-CONT");
  }

  private void signal(String signal) throws Exception {
    Process k = new ProcessBuilder("kill", signal, Long.toString(process.pid())).redirectErrorStream(true).start();
    if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
      throw new IOException("kill " + signal + " " + process.pid() + " failed: " + new String(k.getInputStream().readAllBytes()));
    }
  }

  boolean alive() {
    return process != null && process.isAlive();
  }

  /** Sends one inline command and returns the first reply line, or null when nobody answers. */
  String command(String inline) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
      s.setSoTimeout(5000);
      OutputStream out = s.getOutputStream();
      out.write((inline + "\r\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
      InputStream in = s.getInputStream();
      StringBuilder b = new StringBuilder();
      int c;
      while ((c = in.read()) >= 0 && c != '\n') {
        if (c != '\r') {
          b.append((char) c);
        }
      }
      return b.toString();
    } catch (IOException e) {
      return null;
    }
  }

  @Override
  public void close() {
    kill();
  }

  static int freePort(boolean withBus) throws IOException {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = withBus ? 20000 + ThreadLocalRandom.current().nextInt(20000) : 0;
      try (ServerSocket a = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        if (!withBus) {
          return a.getLocalPort();
        }
        try (ServerSocket b = new ServerSocket(port + 10000, 1, InetAddress.getLoopbackAddress())) {
          return port;
        }
      } catch (IOException busy) {
        // try another
      }
    }
    throw new IOException("no free loopback port");
  }
}
