package dev.headroom.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code headroom serve --help} reads cleanly in an 80-column terminal: no line longer, none broken by hand. */
class ServeHelpTest {

  @Test
  void serveHelpWrapsAt80Columns() {
    StringWriter out = new StringWriter();
    CommandLine cli = HeadroomCommand.commandLine();
    cli.setOut(new PrintWriter(out, true));
    assertThat(cli.execute("serve", "--help")).isZero();
    String help = out.toString();
    assertThat(help.lines()).allSatisfy(l -> assertThat(l.length()).as(l).isLessThanOrEqualTo(80));
    // a paragraph wrapped by picocli, not cut short by a hand-made line break
    assertThat(help).contains("Without --config it runs the built-in sample configuration: the in-memory\nstore,");
    assertThat(help).contains("headroom-config.schema.json");
  }
}
