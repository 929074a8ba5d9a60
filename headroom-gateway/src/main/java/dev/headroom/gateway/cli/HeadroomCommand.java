package dev.headroom.gateway.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code headroom}: the command line. Each action is a subcommand class registered in
 * {@code subcommands}; adding one (such as {@code check}) touches only that list.
 */
@Command(name = "headroom",
    mixinStandardHelpOptions = true,
    versionProvider = Version.class,
    description = {
        "Headroom: a rate-limiting gateway that tells every caller exactly where it stands.",
        "",
        "Run `headroom serve` to start the gateway with the built-in sample configuration and demo",
        "upstream, or `headroom serve --config FILE` with your own."},
    subcommands = {ServeCommand.class, CommandLine.HelpCommand.class})
public final class HeadroomCommand implements Runnable {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
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
