package dev.headroom.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distribution as an operator gets it: target/headroom-VERSION.tar.gz unpacked with tar into a
 * folder outside the repository, run through bin/headroom (POSIX sh) on real sockets. It serves its
 * own sample configuration (conf/headroom.yaml, the demo upstream in-process), passes
 * {@code headroom check} at level 4 of the Graceful Boundaries specification's "Conformance
 * Levels" (the level the sample declares), and stops on SIGTERM sent to the process the script
 * started: the script execs java, so the signal reaches the JVM and its shutdown hook.
 */
class DistributionIT {
  private static final String VERSION = System.getProperty("headroom.version");
  private static final Path ARCHIVE = Path.of(System.getProperty("headroom.distribution"));
  private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)");

  @Test
  void theUnpackedDistributionServesItsSampleAndPassesTheCheck(@TempDir Path folder) throws Exception {
    Path home = unpack(folder);
    assertThat(home.resolve("bin/headroom")).isExecutable();
    assertThat(home.resolve("lib/headroom-cli-" + VERSION + ".jar")).isRegularFile();
    assertThat(home.resolve("LICENSE")).isRegularFile();
    assertThat(home.resolve("share/systemd/headroom.service")).content().contains("ExecStart=");
    assertThat(home.resolve("share/logrotate/headroom")).content().contains("copytruncate");
    assertThat(home.resolve("conf/headroom.yaml")).content()
        .startsWith("# The configuration `headroom serve` runs when no --config is given");

    Path log = folder.resolve("serve.log");
    ProcessBuilder serve = headroom(home, folder, "serve", "--config", "conf/headroom.yaml", "--port", "0")
        .directory(home.toFile()).redirectError(log.toFile());
    serve.environment().put("HEADROOM_JAVA_OPTS", "-Xmx128m -Dheadroom.distribution.test=true");
    Process gateway = serve.start();
    try {
      String url = listeningUrl(gateway, log);
      ProcessHandle.Info info = gateway.info();
      assertThat(info.command()).as("the command of the process bin/headroom started (it execs java)")
          .hasValueSatisfying(c -> assertThat(c).endsWith("/java"));
      assertThat(info.arguments()).as("the JVM's arguments, HEADROOM_JAVA_OPTS among them")
          .hasValueSatisfying(a -> assertThat(a).contains("-Xmx128m", "-Dheadroom.distribution.test=true"));

      Result check = run(headroom(home, folder, "check", url + "/", "--probe", "10"));
      assertThat(check.status).as("headroom check's exit status; its output:%n%s", check.output).isZero();
      assertThat(check.output).contains("Graceful Boundaries level: 4");

      gateway.destroy();
      assertThat(gateway.waitFor(60, TimeUnit.SECONDS)).as("the gateway stopped after SIGTERM").isTrue();
      assertThat(gateway.exitValue()).as("exit status after SIGTERM (128 + 15); its log:%n%s",
          Files.readString(log)).isIn(0, 143);
    } finally {
      gateway.destroyForcibly();
    }
  }

  @Test
  void versionNamesTheVersionAndTheCommitWithJavaFromJavaHomeOrThePath(@TempDir Path folder) throws Exception {
    Path home = unpack(folder);
    Pattern expected = Pattern.compile("headroom " + Pattern.quote(VERSION) + " \\(commit ([0-9a-f]{12}|unknown)\\)\\s*");

    Result withJavaHome = run(headroom(home, folder, "--version"));
    assertThat(withJavaHome.output).matches(expected);

    ProcessBuilder fromPath = headroom(home, folder, "--version");
    fromPath.environment().remove("JAVA_HOME");
    fromPath.environment().put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":/usr/bin:/bin");
    assertThat(run(fromPath).output).matches(expected);

    ProcessBuilder badJavaHome = headroom(home, folder, "--version");
    badJavaHome.environment().put("JAVA_HOME", folder.resolve("no-such-java").toString());
    Result refused = run(badJavaHome);
    assertThat(refused.status).isEqualTo(1);
    assertThat(refused.output).contains("JAVA_HOME is " + folder.resolve("no-such-java"), "not an executable");
  }

  private static Path unpack(Path folder) throws Exception {
    assertThat(ARCHIVE).as("the distribution built in package").isRegularFile();
    Result tar = run(new ProcessBuilder("tar", "-xzf", ARCHIVE.toString(), "-C", folder.toString()));
    assertThat(tar.status).as("tar's exit status; its output:%n%s", tar.output).isZero();
    return folder.resolve("headroom-" + VERSION);
  }

  /** bin/headroom with these arguments, run from folder (not the repository), Java from java.home. */
  private static ProcessBuilder headroom(Path home, Path folder, String... args) {
    List<String> command = new ArrayList<>();
    command.add(home.resolve("bin/headroom").toString());
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).directory(folder.toFile());
    Map<String, String> env = pb.environment();
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.remove("HEADROOM_JAVA_OPTS");
    return pb;
  }

  /** Reads standard output until the one line serve prints once it accepts connections. */
  private static String listeningUrl(Process gateway, Path log) throws IOException {
    BufferedReader out = new BufferedReader(new InputStreamReader(gateway.getInputStream(), StandardCharsets.UTF_8));
    for (String line = out.readLine(); line != null; line = out.readLine()) {
      Matcher m = LISTENING.matcher(line);
      if (m.find()) {
        return m.group(1);
      }
    }
    throw new AssertionError("serve ended without printing 'listening on'; its log:\n" + Files.readString(log));
  }

  private record Result(int status, String output) {}

  private static Result run(ProcessBuilder pb) throws Exception {
    Process p = pb.redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(pb.command() + " did not end within 120 s; its output:\n" + output);
    }
    return new Result(p.exitValue(), output);
  }
}
