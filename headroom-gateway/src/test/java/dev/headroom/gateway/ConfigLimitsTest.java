package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The configuration file is untrusted input: its size is bounded before it is parsed, and YAML the
 * configuration has no use for (duplicate keys, aliases, deep nesting, a second document) is
 * refused, each with one line naming the file, the YAML path and what is expected.
 */
class ConfigLimitsTest {
  static final String MINIMAL = """
      service: {name: S}
      upstreams:
        a: {url: "http://127.0.0.1:9"}
      policies:
        burst:
          quota: 5
          window: 10s
          why: Short bursts are capped so that one caller cannot starve the others.
      routes:
        - {method: GET, path: /x, upstream: a, policies: [burst]}
      """;
  private static final long MIB = 1 << 20;

  @TempDir Path dir;

  @Test
  void theMinimalConfigurationIsValid() throws Exception {
    assertThat(GatewayConfig.parse(MINIMAL, "t.yaml").policies().get("burst").quota().quota()).isEqualTo(5);
  }

  @Test
  void aDuplicateKeyInAPolicyNamesThePathTheKeyAndBothLines() throws Exception {
    Path file = Files.writeString(dir.resolve("config.yaml"),
        MINIMAL.replace("    window: 10s\n", "    window: 10s\n    quota: 50\n"));
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.load(file), ConfigException.class);
    assertThat(e.getMessage()).isEqualTo(file + ": policies.burst.quota: duplicate key \"quota\" at line 8, "
        + "first at line 6; expected each key once in a mapping");
  }

  @Test
  void duplicateKeysAtTheTopLevelAndInARouteListItemAreAllListed() {
    String yaml = MINIMAL.replace("  - {method: GET, path: /x, upstream: a, policies: [burst]}\n", """
          - method: GET
            path: /x
            upstream: a
            "path": /y
        service: {name: T}
        """);
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml, "t.yaml"), ConfigException.class);
    assertThat(e.problems()).containsExactly(
        "routes[0].path: duplicate key \"path\" at line 13, first at line 11; expected each key once in a mapping",
        "service: duplicate key \"service\" at line 14, first at line 1; expected each key once in a mapping");
  }

  @Test
  void aBillionLaughsFileIsRefusedAtItsFirstAlias() {
    StringBuilder bomb = new StringBuilder("lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (int i = 1; i <= 9; i++) {
      String prev = "*l" + (i - 1);
      bomb.append("lol").append(i).append(": &l").append(i).append(" [")
          .append(String.join(", ", Collections.nCopies(9, prev))).append("]\n");
    }
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(bomb.toString(), "bomb.yaml"),
        ConfigException.class);
    assertThat(e.getMessage()).isEqualTo("bomb.yaml: lol1[0]: the alias *l0 at line 2 is not valid; expected the "
        + "value written out (aliases and merge keys are not accepted in the configuration)");
  }

  @Test
  void anAliasOrAMergeKeyIsRefusedRatherThanReadAsTheAnchorsName() {
    // Jackson does not expand aliases: without the check, quota: *q would read as the text "q"
    String alias = MINIMAL.replace("quota: 5", "quota: &q 5").replace("window: 10s", "window: 10s\n    other: *q");
    assertThat(one(alias)).isEqualTo("policies.burst.other: the alias *q at line 8 is not valid; expected the value "
        + "written out (aliases and merge keys are not accepted in the configuration)");
    String merge = MINIMAL.replace("  burst:\n", "  base: &base {quota: 5}\n  burst:\n    <<: *base\n");
    assertThat(one(merge)).startsWith("policies.burst.<<: the alias *base at line 7 is not valid");
  }

  @Test
  void nestingDeeperThanTwentyLevelsIsRefusedWithoutRecursingIntoIt() {
    String deep = MINIMAL.replace("service: {name: S}", "service: {name: " + "[".repeat(100_000)
        + "]".repeat(100_000) + "}");
    assertThat(one(deep)).isEqualTo("service.name" + "[0]".repeat(18) + ": nested 21 levels deep at line 1 is not "
        + "valid; expected at most 20 levels of mappings and lists");
    // twenty levels pass the YAML bound, and the reader then says what service.name should be
    String twenty = MINIMAL.replace("service: {name: S}", "service: {name: " + "[".repeat(18) + "]".repeat(18) + "}");
    assertThat(one(twenty)).startsWith("service.name: a list is not valid; expected");
    StringBuilder block = new StringBuilder("service:\n");
    for (int i = 1; i <= 25; i++) {
      block.append("  ".repeat(i)).append("k").append(i).append(":\n");
    }
    assertThat(one(block + "upstreams: {}\n")).startsWith("service.k1.k2.k3.k4.k5.k6.k7.k8.k9.k10.k11.k12.k13.k14."
        + "k15.k16.k17.k18.k19: nested 21 levels deep at line 21 is not valid");
  }

  @Test
  void aSecondYamlDocumentIsRefused() throws Exception {
    assertThat(one(MINIMAL + "---\nservice: {name: Other}\n"))
        .startsWith("(root): a second YAML document at line 12 is not valid; expected one document");
    assertThat(GatewayConfig.parse("---\n" + MINIMAL + "...\n", "t.yaml").routes()).hasSize(1); // one document, marked
  }

  @Test
  void syntaxErrorsAreOneLineWithTheLineAndColumnOfTheProblem() {
    assertThat(one("service: [\n")).isEqualTo("not valid YAML at line 2, column 1: expected the node content, "
        + "but found '<stream end>' (while parsing a flow node)");
    assertThat(one("service: {name: S}\n\tupstreams: {}\n")).startsWith("not valid YAML at line 2, column 1: ");
    assertThat(one("a: &x 1\n*x : 2\n")).isEqualTo("not valid YAML at line 2, column 3: Expected a field name "
        + "(Scalar value in YAML), got this instead: Alias");
  }

  @Test
  void aFileExactlyAtTheBoundIsReadAndOneByteMoreIsRefused() throws Exception {
    Path at = ConfigFiles.write(dir.resolve("at.yaml"), MINIMAL, GatewayConfig.DEFAULT_MAX_BYTES);
    GatewayConfig c = GatewayConfig.load(at);
    assertThat(c.text()).hasSize((int) GatewayConfig.DEFAULT_MAX_BYTES);
    assertThat(c.policies()).containsKey("burst");
    Path over = ConfigFiles.write(dir.resolve("over.yaml"), MINIMAL, GatewayConfig.DEFAULT_MAX_BYTES + 1);
    assertThat(loadError(over)).isEqualTo(over + ": the file is 1048577 bytes; expected at most 1048576 bytes "
        + "(headroom serve --max-config-bytes sets the bound)");
  }

  @Test
  void a16MiBFileIsRefusedFromItsSizeBeforeItIsDecodedOrParsed() throws Exception {
    // one comment line (what takes SnakeYAML tens of seconds), ending in a byte that is not
    // UTF-8: refused for its size, so neither decoding nor parsing ever saw it
    Path big = dir.resolve("big.yaml");
    byte[] line = new byte[(int) MIB];
    Arrays.fill(line, (byte) 'x');
    try (OutputStream out = Files.newOutputStream(big)) {
      out.write("# ".getBytes(StandardCharsets.US_ASCII));
      for (int i = 0; i < 16; i++) {
        out.write(line);
      }
      out.write(0xff);
    }
    assertThat(loadError(big)).isEqualTo(big + ": the file is " + (16 * MIB + 3) + " bytes; expected at most "
        + "1048576 bytes (headroom serve --max-config-bytes sets the bound)");
    Path bigComment = Files.writeString(dir.resolve("comment.yaml"), MINIMAL + "# " + "x".repeat((int) (4 * MIB)));
    assertThat(loadError(bigComment)).startsWith(bigComment + ": the file is " + Files.size(bigComment) + " bytes");
  }

  @Test
  void aStreamWithNoSizeIsReadOnlyOneBytePastTheBound() {
    Path zero = Path.of("/dev/zero"); // endless: without the bounded read this would never return
    assumeThat(Files.isReadable(zero)).isTrue();
    assertThat(loadError(zero)).isEqualTo("/dev/zero: the file is larger than 1048576 bytes; expected at most "
        + "1048576 bytes (headroom serve --max-config-bytes sets the bound)");
  }

  @Test
  void theBoundIsSettable() throws Exception {
    Path twoMiB = ConfigFiles.write(dir.resolve("two.yaml"), MINIMAL, 2 * MIB);
    assertThat(loadError(twoMiB)).contains("the file is 2097152 bytes; expected at most 1048576 bytes");
    assertThat(GatewayConfig.load(twoMiB, 2 * MIB).policies()).containsKey("burst");
    Path small = Files.writeString(dir.resolve("small.yaml"), MINIMAL);
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.load(small, 100), ConfigException.class);
    assertThat(e.getMessage()).startsWith(small + ": the file is " + Files.size(small) + " bytes; expected at most 100");
    assertThatThrownBy(() -> GatewayConfig.load(small, 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxBytes: 0 is not valid; expected 1 to 67108864");
  }

  @Test
  void textGivenToParseHasTheSameBoundAsAFile() {
    String over = ConfigFiles.padded(MINIMAL, GatewayConfig.DEFAULT_MAX_BYTES + 1);
    assertThat(one(over)).isEqualTo("the text is more than 1048576 bytes; expected at most 1048576 bytes (headroom serve "
        + "--max-config-bytes sets the bound)");
    String manyChars = MINIMAL + "#" + "é".repeat(600_000); // fewer chars than the bound, more bytes
    assertThat(one(manyChars)).startsWith("the text is " + manyChars.getBytes(StandardCharsets.UTF_8).length + " bytes");
  }

  @Test
  void unreadableFilesSayWhyInOneLine() throws Exception {
    Path missing = dir.resolve("missing.yaml");
    assertThat(loadError(missing)).isEqualTo(missing + ": cannot read the file: it does not exist");
    assertThat(loadError(dir)).isEqualTo(dir + ": is a directory; expected a YAML file");
    Path latin1 = Files.write(dir.resolve("latin1.yaml"), "service: {name: Caf\u00e9}\n".getBytes(StandardCharsets.ISO_8859_1));
    assertThat(loadError(latin1)).isEqualTo(latin1 + ": the byte at offset 19 is not valid UTF-8; expected a UTF-8 "
        + "YAML file");
  }

  /** The single problem of a refused text, checked to be one line without Java's vocabulary. */
  private static String one(String yaml) {
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.parse(yaml, "t.yaml"), ConfigException.class);
    assertThat(e).as("refused").isNotNull();
    assertThat(e.problems()).hasSize(1);
    assertThat(e.getMessage()).isEqualTo("t.yaml: " + e.problems().get(0));
    assertPlain(e.getMessage());
    return e.problems().get(0);
  }

  private static String loadError(Path file) {
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.load(file), ConfigException.class);
    assertThat(e).as("refused").isNotNull();
    assertPlain(e.getMessage());
    return e.getMessage();
  }

  static void assertPlain(String message) {
    assertThat(message).doesNotContain("\n").doesNotContain("Exception").doesNotContain("java.")
        .doesNotContain("org.yaml").doesNotContain("com.fasterxml");
  }
}
