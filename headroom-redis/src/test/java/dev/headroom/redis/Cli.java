package dev.headroom.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** {@code redis-cli} against a loopback port of a test's own server: the whole reply as text. */
final class Cli {

  private Cli() {}

  static String run(int port, String... args) {
    List<String> cmd = new ArrayList<>(List.of("redis-cli", "-h", "127.0.0.1", "-p", Integer.toString(port)));
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
      return out.trim();
    } catch (Exception e) {
      return "";
    }
  }

  static String info(int port, String section) {
    return run(port, "info", section);
  }
}
