package dev.headroom.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No import circle between source files of different packages (CONTRIBUTING.md; issue "The house",
 * item 4: {@code GatewayConfig} imported its readers and the readers imported the section records nested
 * in it). A file refers to another through an {@code import} (another package) or by its simple
 * name (its own package), or names it in code by its fully qualified name (which an import check
 * alone would miss); a circle of such references that stays inside one package is a package's
 * own business, one that crosses a package edge is what this test refuses, because neither side can
 * then be read, tested or moved without the other.
 *
 * <p>Reads every main source file of every module under the repository root (the benchmarks and
 * examples included), so it runs wherever the sources are, before or after anything is compiled.
 */
class ImportCircleTest {
  private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
  private static final Pattern IMPORT = Pattern.compile("^import\\s+(static\\s+)?([\\w.]+?)(\\.\\*)?\\s*;",
      Pattern.MULTILINE);
  private static final Pattern WORD = Pattern.compile("\\b[A-Z]\\w*\\b");
  /** A class named in code by its fully qualified name rather than an import: an edge all the same. */
  private static final Pattern QUALIFIED = Pattern.compile("\\bdev\\.headroom(?:\\.[a-z_]\\w*)*\\.[A-Z]\\w*");

  @Test
  void noCircleCrossesAPackage() throws IOException {
    Map<String, Source> files = sources(Path.of("").toAbsolutePath().getParent());
    assertThat(files).as("main source files found").hasSizeGreaterThan(200)
        .containsKeys("dev.headroom.gateway.GatewayConfig", "dev.headroom.gateway.internal.config.ConfigReader");

    Map<String, Set<String>> edges = new HashMap<>();
    Map<String, Set<String>> byPackage = new HashMap<>();
    files.values().forEach(s -> byPackage.computeIfAbsent(s.pkg, k -> new TreeSet<>()).add(s.name));
    for (Source s : files.values()) {
      Set<String> to = new LinkedHashSet<>();
      for (String imported : s.imports) {
        resolve(files, imported).filter(t -> !t.equals(s.name)).ifPresent(to::add);
      }
      for (String sibling : byPackage.get(s.pkg)) {
        String simple = sibling.substring(sibling.lastIndexOf('.') + 1);
        if (!sibling.equals(s.name) && s.words.contains(simple)) {
          to.add(sibling);
        }
      }
      edges.put(s.name, to);
    }
    assertThat(edges.get("dev.headroom.gateway.GatewayConfig")).as("the check sees imports")
        .contains("dev.headroom.gateway.internal.config.ConfigReader");

    List<String> circles = new ArrayList<>();
    for (Set<String> component : new Tarjan(edges).components()) {
      Set<String> packages = new TreeSet<>();
      component.forEach(c -> packages.add(files.get(c).pkg));
      if (packages.size() > 1) {
        circles.add(packages + ": " + component);
      }
    }
    assertThat(circles).as("circles of references that cross a package").isEmpty();
  }

  /** The source file an import names: the class itself, or the file of the class it is nested in. */
  private static Optional<String> resolve(Map<String, Source> files, String imported) {
    String name = imported;
    while (name.contains(".")) {
      if (files.containsKey(name)) {
        return Optional.of(name);
      }
      name = name.substring(0, name.lastIndexOf('.'));
    }
    return Optional.empty();
  }

  private static Map<String, Source> sources(Path root) throws IOException {
    Map<String, Source> files = new TreeMap<>();
    try (Stream<Path> all = Files.walk(root)) {
      all.filter(p -> p.toString().endsWith(".java"))
          .filter(p -> root.relativize(p).toString().replace('\\', '/').matches("([^/]+/)*[^/]+/src/main/java/.*"))
          .filter(p -> !p.getFileName().toString().equals("module-info.java")
              && !p.getFileName().toString().equals("package-info.java"))
          .forEach(p -> {
            Source s = Source.read(p);
            files.put(s.name, s);
          });
    }
    return files;
  }

  private record Source(String name, String pkg, List<String> imports, Set<String> words) {
    static Source read(Path file) {
      String text;
      try {
        text = Files.readString(file);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Matcher pm = PACKAGE.matcher(text);
      String pkg = pm.find() ? pm.group(1) : "";
      String simple = file.getFileName().toString().replaceAll("\\.java$", "");
      List<String> imports = new ArrayList<>();
      Matcher im = IMPORT.matcher(text);
      while (im.find()) {
        imports.add(im.group(2));
      }
      String code = codeOnly(text);
      Matcher qm = QUALIFIED.matcher(code);
      while (qm.find()) {
        imports.add(qm.group());
      }
      Set<String> words = new TreeSet<>();
      Matcher wm = WORD.matcher(code);
      while (wm.find()) {
        words.add(wm.group());
      }
      return new Source(pkg.isEmpty() ? simple : pkg + "." + simple, pkg, imports, words);
    }
  }

  /** The text without comments, string, text-block and character literals (a scan, not a regex). */
  private static String codeOnly(String text) {
    StringBuilder out = new StringBuilder(text.length());
    int i = 0;
    int n = text.length();
    while (i < n) {
      char c = text.charAt(i);
      if (c == '/' && i + 1 < n && text.charAt(i + 1) == '/') {
        i = text.indexOf('\n', i);
        i = i < 0 ? n : i;
      } else if (c == '/' && i + 1 < n && text.charAt(i + 1) == '*') {
        int end = text.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 2;
        out.append(' ');
      } else if (text.startsWith("\"\"\"", i)) {
        int end = text.indexOf("\"\"\"", i + 3);
        i = end < 0 ? n : end + 3;
        out.append("\"\"");
      } else if (c == '"' || c == '\'') {
        int j = i + 1;
        while (j < n && text.charAt(j) != c) {
          j += text.charAt(j) == '\\' ? 2 : 1;
        }
        i = j + 1;
        out.append("\"\"");
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }

  /** Tarjan's strongly connected components, iteratively (no deep recursion on long chains). */
  private static final class Tarjan {
    private final Map<String, Set<String>> edges;
    private final Map<String, Integer> index = new HashMap<>();
    private final Map<String, Integer> low = new HashMap<>();
    private final Deque<String> stack = new ArrayDeque<>();
    private final Set<String> onStack = new HashSet<>();
    private final List<Set<String>> components = new ArrayList<>();
    private int next;

    Tarjan(Map<String, Set<String>> edges) {
      this.edges = edges;
    }

    List<Set<String>> components() {
      for (String v : new TreeSet<>(edges.keySet())) {
        if (!index.containsKey(v)) {
          visit(v);
        }
      }
      return components;
    }

    private void visit(String root) {
      Deque<Object[]> work = new ArrayDeque<>();
      enter(root);
      work.push(new Object[] {root, edges.getOrDefault(root, Set.of()).iterator()});
      while (!work.isEmpty()) {
        Object[] frame = work.peek();
        String v = (String) frame[0];
        @SuppressWarnings("unchecked")
        Iterator<String> it = (Iterator<String>) frame[1];
        if (it.hasNext()) {
          String w = it.next();
          if (!index.containsKey(w)) {
            enter(w);
            work.push(new Object[] {w, edges.getOrDefault(w, Set.of()).iterator()});
          } else if (onStack.contains(w)) {
            low.put(v, Math.min(low.get(v), index.get(w)));
          }
          continue;
        }
        work.pop();
        if (!work.isEmpty()) {
          String parent = (String) work.peek()[0];
          low.put(parent, Math.min(low.get(parent), low.get(v)));
        }
        if (low.get(v).equals(index.get(v))) {
          Set<String> component = new TreeSet<>();
          String w;
          do {
            w = stack.pop();
            onStack.remove(w);
            component.add(w);
          } while (!w.equals(v));
          if (component.size() > 1) {
            components.add(component);
          }
        }
      }
    }

    private void enter(String v) {
      index.put(v, next);
      low.put(v, next);
      next++;
      stack.push(v);
      onStack.add(v);
    }
  }
}
