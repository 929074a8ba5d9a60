package dev.headroom.cli;

import dev.headroom.checker.CheckCommand;
import picocli.CommandLine.Command;
import picocli.CommandLine;

/**
 * {@code headroom}: the command line. Each action is a subcommand class registered in
 * {@code subcommands}: {@code serve} runs the gateway, {@code check} (headroom-checker's
 * {@link CheckCommand}) reports a service's Graceful Boundaries level.
 */
@Command(name = "headroom",
    mixinStandardHelpOptions = true,
    versionProvider = Version.class,
    description = {
        "Headroom: a rate-limiting gateway that tells callers exactly where they stand.",
        "",
        "`headroom serve` starts the gateway with the built-in sample configuration and",
        "demo upstream, `headroom serve --config FILE` with your own.",
        "`headroom check URL --probe 10` reports the conformance level of any service."},
    subcommands = {ServeCommand.class, CheckCommand.class, CommandLine.HelpCommand.class})
public final class HeadroomCommand implements Runnable {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    int status;
    try {
      status = commandLine().execute(args);
    } catch (Throwable t) {
      // an error picocli lets through (it handles exceptions only): main must still end in exit,
      // or threads that are not daemons (the gateway's event loops) would keep the JVM alive
      t.printStackTrace();
      status = 1;
    }
    System.exit(status);
  }

  /** The command line with every subcommand, for tests and for embedding. */
  public static CommandLine commandLine() {
    return new CommandLine(new HeadroomCommand());
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
