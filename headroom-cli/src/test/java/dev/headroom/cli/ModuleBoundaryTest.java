package dev.headroom.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Each module's {@code internal} packages are its own: no other module's main code uses them
 * (DESIGN.md, "Modules"; STYLE.md: "a public {@code internal} package that another module imports:
 * export an API or keep it private"). What one module needs of another goes through that module's
 * declared API, such as {@code QuotaPolicy.emissionIntervalNanos()} for the Redis store's token
 * bucket, or the vend format's {@code VendJson} and {@code VendResponses} for vend enforcement.
 *
 * <p>Checked with the JDK's {@code jdeps} over the compiled main classes of every module built
 * before this one in the reactor (all but the benchmarks, which DESIGN.md lets depend on anything,
 * and the Spring Boot modules, built after this one). Runs from headroom-cli because its build
 * comes after every module it checks.
 */
class ModuleBoundaryTest {
  private static final Pattern DEPENDENCY = Pattern.compile("^\\s+(dev\\.headroom\\S+)\\s+->\\s+(dev\\.headroom\\S+)");

  @Test
  void noModuleUsesAnotherModulesInternalPackages() throws IOException {
    Map<String, Path> modules = compiledModules(Path.of("").toAbsolutePath().getParent());
    assertThat(modules).as("modules compiled before headroom-cli").containsKeys("headroom-core", "headroom-redis",
        "headroom-vend", "headroom-vend-format", "headroom-gateway", "headroom-client");

    List<String> args = new ArrayList<>(List.of("-verbose:class", "-e", "dev\\.headroom\\.(.*\\.)?internal\\..*"));
    modules.values().forEach(p -> args.add(p.toString()));
    String report = jdeps(args);

    List<String> violations = new ArrayList<>();
    int internalUses = 0;
    for (String line : report.split("\n")) {
      Matcher m = DEPENDENCY.matcher(line);
      if (!m.find()) {
        continue;
      }
      internalUses++;
      String from = owner(modules, m.group(1)).orElse("?");
      String to = owner(modules, m.group(2)).orElse("?");
      if (!from.equals(to)) {
        violations.add(from + ": " + m.group(1) + " uses " + to + "'s " + m.group(2));
      }
    }
    assertThat(internalUses).as("uses of internal packages seen by jdeps (the check is not vacuous)").isPositive();
    assertThat(violations).as("main classes using another module's internal package").isEmpty();
  }

  /** The module whose compiled classes hold this class (an inner class's outer file counts). */
  private static Optional<String> owner(Map<String, Path> modules, String className) {
    String file = className.replace('.', '/').replaceAll("\\$.*", "") + ".class";
    return modules.entrySet().stream().filter(e -> Files.exists(e.getValue().resolve(file))).map(Map.Entry::getKey)
        .findFirst();
  }

  private static Map<String, Path> compiledModules(Path root) throws IOException {
    Map<String, Path> modules = new TreeMap<>();
    try (Stream<Path> dirs = Files.list(root)) {
      dirs.filter(d -> d.getFileName().toString().startsWith("headroom-"))
          .filter(d -> !d.getFileName().toString().equals("headroom-benchmarks"))
          .filter(d -> Files.isDirectory(d.resolve("target/classes/dev/headroom")))
          .forEach(d -> modules.put(d.getFileName().toString(), d.resolve("target/classes")));
    }
    return modules;
  }

  private static String jdeps(List<String> args) {
    ToolProvider jdeps = ToolProvider.findFirst("jdeps")
        .orElseThrow(() -> new AssertionError("jdeps: not in this JDK; expected a full JDK 17 or later"));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = jdeps.run(new PrintWriter(out, true), new PrintWriter(err, true), args.toArray(String[]::new));
    assertThat(code).as("jdeps exit code; its errors: %s", err).isZero();
    return out.toString();
  }
}
