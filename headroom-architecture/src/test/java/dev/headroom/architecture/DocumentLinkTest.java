package dev.headroom.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documentation's relative links lead somewhere: in every Markdown file of the repository (the
 * root's and each module's README, ARCHITECTURE.md, CONTRIBUTING.md, ...), every link that is not a
 * URL names a file or folder that exists, and a {@code #fragment} names a heading of its target as
 * GitHub renders anchors (lower case, punctuation dropped, spaces as hyphens). Images count: the
 * README's picture must be committed. And every module the bill of materials publishes has a README.
 */
class DocumentLinkTest {
  private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
  private static final Pattern FENCE = Pattern.compile("^\\s*```");
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

  @Test
  void everyRelativeLinkResolves() throws IOException {
    List<String> broken = new ArrayList<>();
    List<Path> documents = documents();
    assertThat(documents).extracting(d -> ROOT.relativize(d).toString())
        .contains("README.md", "CONTRIBUTING.md", "headroom-gateway/README.md");
    for (Path document : documents) {
      for (String target : links(document)) {
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
          continue; // a URL (https:, mailto:)
        }
        String file = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
        String fragment = target.contains("#") ? target.substring(target.indexOf('#') + 1) : null;
        Path resolved = file.isEmpty() ? document : document.getParent().resolve(file).normalize();
        String where = ROOT.relativize(document) + ": " + target;
        if (!Files.exists(resolved)) {
          broken.add(where + " (no such file)");
        } else if (fragment != null && resolved.toString().endsWith(".md")
            && !anchors(resolved).contains(fragment)) {
          broken.add(where + " (no such heading)");
        }
      }
    }
    assertThat(broken).as("relative links that lead nowhere").isEmpty();
  }

  @Test
  void everyPublishedModuleHasAReadme() throws IOException {
    String bom = Files.readString(ROOT.resolve("headroom-bom/pom.xml"), StandardCharsets.UTF_8);
    Matcher m = Pattern.compile("<artifactId>(headroom-[a-z0-9-]+)</artifactId>").matcher(bom);
    List<String> missing = new ArrayList<>();
    int modules = 0;
    while (m.find()) {
      modules++;
      if (!Files.isRegularFile(ROOT.resolve(m.group(1)).resolve("README.md"))) {
        missing.add(m.group(1));
      }
    }
    assertThat(modules).isGreaterThan(10);
    assertThat(missing).as("published modules without a README.md").isEmpty();
  }

  /** GitHub's anchor of a heading: lower case, anything but letters, digits, '-', '_' and spaces dropped, spaces as '-'. */
  static String anchor(String heading) {
    return heading.trim().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
  }

  private static Set<String> anchors(Path document) throws IOException {
    Set<String> anchors = new HashSet<>();
    boolean code = false;
    for (String line : Files.readAllLines(document, StandardCharsets.UTF_8)) {
      if (FENCE.matcher(line).find()) {
        code = !code;
      } else if (!code && line.startsWith("#")) {
        String anchor = anchor(line.replaceFirst("^#+\\s*", ""));
        String unique = anchor;
        for (int n = 1; !anchors.add(unique); n++) {
          unique = anchor + "-" + n;
        }
      }
    }
    return anchors;
  }

  private static List<String> links(Path document) throws IOException {
    List<String> links = new ArrayList<>();
    boolean code = false;
    for (String line : Files.readAllLines(document, StandardCharsets.UTF_8)) {
      if (FENCE.matcher(line).find()) {
        code = !code;
        continue;
      }
      if (code) {
        continue;
      }
      Matcher m = LINK.matcher(line.replaceAll("`[^`]*`", ""));
      while (m.find()) {
        links.add(m.group(1));
      }
    }
    return links;
  }

  private static List<Path> documents() throws IOException {
    try (Stream<Path> files = Files.walk(ROOT)) {
      return files
          .filter(p -> p.toString().endsWith(".md"))
          .filter(p -> {
            Path rel = ROOT.relativize(p);
            for (Path part : rel) {
              String s = part.toString();
              if (s.equals("target") || s.equals("node_modules") || s.startsWith(".")) {
                return false;
              }
            }
            return true;
          })
          .sorted()
          .toList();
    }
  }
}
