package dev.headroom.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The module table of ARCHITECTURE.md, checked on the compiled classes of every module of the tree
 * with the JDK's {@code jdeps}, so that a reference by a fully qualified name counts as much as an
 * import:
 * <ul>
 *   <li>each module's {@code internal} packages are its own: no other module's main code uses them
 *       (CONTRIBUTING.md: implementations live under {@code internal}, "which no other module may
 *       use"). What one module needs of another goes through its declared API, such as
 *       {@code QuotaPolicy.emissionIntervalNanos()} for the Redis store's token bucket;
 *   <li>each module's main classes use only the modules the table lets it depend on ({@link #MAY_USE},
 *       closed over: a module may use what the modules it may use may use). The benchmarks may use
 *       anything and are checked for neither rule.
 * </ul>
 * Runs in headroom-architecture, the last module of the reactor, so every module's classes exist.
 */
class ModuleBoundaryTest {
  private static final Pattern DEPENDENCY = Pattern.compile("^\\s+(dev\\.headroom\\S+)\\s+->\\s+(dev\\.headroom\\S+)");

  /** What each module's main code may use directly, as the module table says. */
  static final Map<String, List<String>> MAY_USE = Map.ofEntries(
      Map.entry("headroom-core", List.of()),
      Map.entry("headroom-http", List.of("headroom-core")),
      Map.entry("headroom-enforcement", List.of("headroom-http")),
      Map.entry("headroom-plans", List.of("headroom-enforcement")),
      Map.entry("headroom-vend-format", List.of()),
      Map.entry("headroom-client", List.of("headroom-http", "headroom-vend-format")),
      Map.entry("headroom-client-okhttp", List.of("headroom-client")),
      Map.entry("headroom-client-spring", List.of("headroom-client")),
      Map.entry("headroom-client-httpclient5", List.of("headroom-client")),
      Map.entry("headroom-checker", List.of("headroom-client")),
      Map.entry("headroom-redis", List.of("headroom-core")),
      Map.entry("headroom-vend", List.of("headroom-http", "headroom-vend-format")),
      Map.entry("headroom-conformance", List.of("headroom-enforcement")),
      Map.entry("headroom-gateway", List.of("headroom-enforcement", "headroom-vend", "headroom-plans", "headroom-redis")),
      Map.entry("headroom-cli", List.of("headroom-gateway", "headroom-checker")),
      Map.entry("headroom-servlet", List.of("headroom-enforcement", "headroom-vend", "headroom-plans")),
      Map.entry("headroom-webflux", List.of("headroom-enforcement", "headroom-vend", "headroom-plans")),
      Map.entry("headroom-spring-boot", List.of("headroom-servlet", "headroom-webflux", "headroom-redis")),
      Map.entry("headroom-spring-cloud-gateway", List.of("headroom-webflux", "headroom-redis")));

  @Test
  void everyModuleIsInTheTable() throws IOException {
    Map<String, Path> modules = compiledModules(Path.of("").toAbsolutePath().getParent());
    assertThat(MAY_USE.keySet()).as("modules of the table").containsExactlyInAnyOrderElementsOf(modules.keySet());
  }

  @Test
  void eachModuleUsesOnlyWhatTheTableAllows() throws IOException {
    Map<String, Path> modules = compiledModules(Path.of("").toAbsolutePath().getParent());
    List<String> args = new ArrayList<>(List.of("-verbose:class", "-e", "dev\\.headroom\\..*"));
    modules.values().forEach(p -> args.add(p.toString()));
    String report = jdeps(args);

    List<String> violations = new ArrayList<>();
    Set<String> seenEdges = new TreeSet<>();
    for (String line : report.split("\n")) {
      Matcher m = DEPENDENCY.matcher(line);
      if (!m.find()) {
        continue;
      }
      String from = owner(modules, m.group(1)).orElse("?");
      String to = owner(modules, m.group(2)).orElse("?");
      if (from.equals(to) || to.equals("?")) {
        continue;
      }
      seenEdges.add(from + " -> " + to);
      if (!closure(from).contains(to)) {
        violations.add(from + ": " + m.group(1) + " uses " + to + "'s " + m.group(2));
      }
    }
    assertThat(seenEdges).as("edges between modules seen by jdeps (the check is not vacuous)")
        .contains("headroom-gateway -> headroom-redis", "headroom-spring-boot -> headroom-servlet",
            "headroom-servlet -> headroom-enforcement");
    assertThat(violations).as("main classes using a module the table does not let them use").isEmpty();
  }

  /** Every module {@code module} may use, directly or through the modules it may use. */
  static Set<String> closure(String module) {
    Set<String> out = new TreeSet<>();
    Deque<String> todo = new ArrayDeque<>(MAY_USE.getOrDefault(module, List.of()));
    while (!todo.isEmpty()) {
      String next = todo.pop();
      if (out.add(next)) {
        todo.addAll(MAY_USE.getOrDefault(next, List.of()));
      }
    }
    return out;
  }

  @Test
  void noModuleUsesAnotherModulesInternalPackages() throws IOException {
    Map<String, Path> modules = compiledModules(Path.of("").toAbsolutePath().getParent());
    assertThat(modules).as("modules compiled before this one").containsKeys("headroom-core", "headroom-redis",
        "headroom-vend", "headroom-vend-format", "headroom-gateway", "headroom-client", "headroom-servlet",
        "headroom-webflux", "headroom-spring-boot", "headroom-spring-cloud-gateway");

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
          .filter(d -> !d.getFileName().toString().equals("headroom-architecture"))
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
