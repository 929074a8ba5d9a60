package dev.headroom.checker;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * {@code headroom check URL}: the conformance checker as a picocli command. headroom-cli's
 * {@code headroom} command registers it as a subcommand; {@link #main} runs it alone.
 *
 * <p>Exit status: 0 when the check ran and the level is at least {@code --min-level} (default N/A,
 * so any completed check passes); 1 when the level is below {@code --min-level}; 2 for a usage
 * error; 3 when the target could not be reached.
 */
@Command(name = "check", mixinStandardHelpOptions = true, version = "headroom check 0.1.0",
    description = "Checks a service against Graceful Boundaries (levels N/A, 0-4) and "
        + "draft-ietf-httpapi-ratelimit-headers: the discovery document, every RateLimit field in every dialect, "
        + "every non-success body and, with --probe, one provoked refusal. Reports the level with its evidence "
        + "and every violation with its specification section.",
    exitCodeListHeading = "Exit status:%n",
    exitCodeList = {
        "0:the check ran and the level is at least --min-level",
        "1:the level is below --min-level",
        "2:usage error",
        "3:the target could not be reached"})
public final class CheckCommand implements Callable<Integer> {

  /** Exit status when the level is below {@code --min-level}. */
  public static final int BELOW_MIN_LEVEL = 1;

  /** Exit status when the target could not be reached. */
  public static final int UNREACHABLE = 3;

  @Spec
  CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "URL", description = "The service, e.g. https://api.example.com/")
  String url;

  @Option(names = "--limits-path", paramLabel = "PATH",
      description = "Discovery document path (default: Link rel=\"limits\", /.well-known/limits, /api/limits)")
  String limitsPath;

  @Option(names = "--probe", paramLabel = "N", defaultValue = "0",
      description = "Send at most N requests to one endpoint to provoke a refusal; stops at the first (default: ${DEFAULT-VALUE})")
  int probe;

  @Option(names = "--endpoint", paramLabel = "PATH", description = "The endpoint to probe (default: the first listed GET endpoint, or URL)")
  String endpoint;

  @Option(names = "--min-level", paramLabel = "LEVEL", defaultValue = "N/A",
      description = "Exit with 1 when the level is below this (N/A, 0-4; default: ${DEFAULT-VALUE})")
  String minLevel;

  @Option(names = "--cloaking",
      description = "Also request the target and the discovery document as a browser and report content "
          + "that differs by User-Agent (Graceful Boundaries SC-9)")
  boolean cloaking;

  @Option(names = "--json", description = "Print the report as JSON")
  boolean json;

  @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "10", description = "Per-request timeout (default: ${DEFAULT-VALUE})")
  int timeoutSeconds;

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Level min;
    URI target;
    Checker checker;
    try {
      if (timeoutSeconds < 1 || timeoutSeconds > 3600) {
        throw new IllegalArgumentException("--timeout: expected 1 to 3600 seconds, got " + timeoutSeconds);
      }
      min = Level.parse(minLevel);
      target = new URI(url);
      Checker.Builder b = Checker.builder(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(timeoutSeconds))
          .followRedirects(HttpClient.Redirect.NEVER).build()).probe(probe).timeout(Duration.ofSeconds(timeoutSeconds)).cloaking(cloaking);
      if (limitsPath != null) {
        b.limitsPath(limitsPath);
      }
      if (endpoint != null) {
        b.probeEndpoint(endpoint);
      }
      checker = b.build();
    } catch (IllegalArgumentException | URISyntaxException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    }
    Report report;
    try {
      report = checker.check(target);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    } catch (IOException e) {
      err.println("headroom check: " + e.getMessage());
      err.flush();
      return UNREACHABLE;
    }
    out.print(json ? report.toJson() + System.lineSeparator() : report.toText());
    out.flush();
    if (!report.level().atLeast(min)) {
      err.println("headroom check: level " + report.level().label() + " is below --min-level " + min.label());
      err.flush();
      return BELOW_MIN_LEVEL;
    }
    return 0;
  }

  /** Runs {@code check} alone: {@code java -cp ... dev.headroom.checker.CheckCommand URL [options]}. */
  public static void main(String[] args) {
    if (System.getProperty("slf4j.internal.verbosity") == null) {
      // The schema validator logs through SLF4J; a command line needs no binding and no warning about it.
      System.setProperty("slf4j.internal.verbosity", "ERROR");
    }
    System.exit(new CommandLine(new CheckCommand()).execute(args));
  }
}
