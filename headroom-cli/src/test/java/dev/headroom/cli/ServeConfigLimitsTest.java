package dev.headroom.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.gateway.ConfigFiles;
import dev.headroom.gateway.GatewayConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code headroom serve --config FILE} refuses a file over its size bound, or with YAML the
 * configuration does not accept, with exit status 3 and one line naming the file; the bound is
 * {@code --max-config-bytes}.
 */
class ServeConfigLimitsTest {
  private static final long MIB = 1 << 20;

  @TempDir Path dir;

  record Run(int status, String out, String err) {}

  /** Runs the command line in this JVM, capturing what it writes. */
  static Run headroom(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = HeadroomCommand.commandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int status = cli.execute(args);
    return new Run(status, out.toString(), err.toString());
  }

  @Test
  void anOversizedFileEndsServeWithStatus3AndOneLine() throws Exception {
    Path big = ConfigFiles.write(dir.resolve("big.yaml"), GatewayConfig.sampleText(), 16 * MIB);
    Run r = headroom("serve", "--config", big.toString(), "--port", "0");
    assertThat(r.status()).isEqualTo(3);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).isEqualTo(big + ": the file is 16777216 bytes; expected at most 1048576 bytes "
        + "(headroom serve --max-config-bytes sets the bound)" + System.lineSeparator());
  }

  @Test
  void aDuplicateKeyEndsServeWithStatus3AndOneLine() throws Exception {
    Path dup = Files.writeString(dir.resolve("dup.yaml"),
        GatewayConfig.sampleText().replace("  name: Headroom demo\n", "  name: Headroom demo\n  name: Again\n"));
    Run r = headroom("serve", "--config", dup.toString(), "--port", "0");
    assertThat(r.status()).isEqualTo(3);
    long first = GatewayConfig.sampleText().lines().takeWhile(l -> !l.equals("  name: Headroom demo")).count() + 1;
    assertThat(r.err()).isEqualTo(dup + ": service.name: duplicate key \"name\" at line " + (first + 1) + ", first at line "
        + first + "; "
        + "expected each key once in a mapping" + System.lineSeparator());
  }

  @Test
  void maxConfigBytesSetsTheBound() throws Exception {
    Path sample = Files.writeString(dir.resolve("sample.yaml"), GatewayConfig.sampleText());
    Run r = headroom("serve", "--config", sample.toString(), "--port", "0", "--max-config-bytes", "1KiB");
    assertThat(r.status()).isEqualTo(3);
    assertThat(r.err()).isEqualTo(sample + ": the file is " + Files.size(sample) + " bytes; expected at most 1024 "
        + "bytes (headroom serve --max-config-bytes sets the bound)" + System.lineSeparator());
  }

  @Test
  void aBoundThatIsNotASizeIsABadCommandLine() {
    for (String bad : new String[] {"0", "65MiB", "1GiB", "lots", "-5"}) {
      Run r = headroom("serve", "--max-config-bytes", bad, "--port", "0");
      assertThat(r.status()).as(bad).isEqualTo(2);
      assertThat(r.err()).as(bad).contains("--max-config-bytes")
          .contains("\"" + bad + "\" is not valid; expected a size from 1 byte to 64MiB, such as 1048576, 512KiB or 2MiB");
    }
  }

  @Test
  void sizesAreBytesKiBOrMiB() {
    ByteSize size = new ByteSize();
    assertThat(size.convert("1048576")).isEqualTo(MIB);
    assertThat(size.convert("512KiB")).isEqualTo(512 * 1024L);
    assertThat(size.convert("2mib")).isEqualTo(2 * MIB);
    assertThat(size.convert("64MiB")).isEqualTo(64 * MIB);
  }
}
