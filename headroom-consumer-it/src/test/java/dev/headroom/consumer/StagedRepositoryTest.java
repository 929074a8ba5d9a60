package dev.headroom.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * What `mvn verify` staged in target/staging-repository is what Maven Central requires of a
 * release (the Central Portal's publishing requirements): for every published jar the jar, its pom,
 * a sources jar and a javadoc jar, each with {@code .md5} and {@code .sha1} checksums that match;
 * poms that carry name, description, url, licenses, scm and developers (the modules inherit all but
 * the first two from headroom-parent, itself staged). Signatures ({@code .asc}) are the release
 * profile's, not checked here. Besides Central's list: each jar's module name and its CycloneDX SBOM.
 */
class StagedRepositoryTest {
  /** Modules of the root pom that are never published. */
  private static final Set<String> UNPUBLISHED = Set.of("headroom-benchmarks", "headroom-architecture",
      "headroom-consumer-it", "headroom-migration-tests", "headroom-spring-boot-4-tests",
      "headroom-spring-cloud-gateway-5-tests", "examples/spring-boot-demo", "examples/spring-cloud-gateway-demo");

  private final StagedBuild build = new StagedBuild();

  @BeforeEach
  void staged() {
    build.assumeStaged();
  }

  @Test
  void theBomListsEveryPublishedModule() throws IOException {
    Set<String> published = new TreeSet<>();
    for (Element m : StagedBuild.elements(StagedBuild.xml(build.root.resolve("pom.xml")).getDocumentElement(), "module")) {
      String module = m.getTextContent().trim();
      if (!UNPUBLISHED.contains(module) && !module.equals("headroom-bom")) {
        published.add(module);
      }
    }
    assertThat(published).as("published modules of the root pom").contains("headroom-core", "headroom-cli");

    assertThat(bomEntries()).as("modules listed by the staged headroom-bom")
        .containsExactlyInAnyOrderElementsOf(published);
  }

  @Test
  void everyPublishedJarHasWhatCentralRequires() throws IOException {
    List<String> problems = new ArrayList<>();
    for (String artifactId : bomEntries()) {
      for (String classifier : List.of("", "sources", "javadoc")) {
        checked(artifactId, classifier, "jar", problems);
      }
      Optional<Path> pom = checked(artifactId, "", "pom", problems);
      if (pom.isPresent()) {
        Element project = StagedBuild.xml(pom.get()).getDocumentElement();
        for (String field : List.of("name", "description")) {
          if (StagedBuild.text(project, field).isEmpty()) {
            problems.add(pom.get().getFileName() + ": no <" + field + ">");
          }
        }
      }
      checked(artifactId, "cyclonedx", "json", problems);
      Optional<Path> jar = build.file(artifactId, "", "jar");
      if (jar.isPresent()) {
        String expected = "dev." + artifactId.replace('-', '.');
        try (JarFile j = new JarFile(jar.get().toFile())) {
          String name = j.getManifest() == null ? null
              : j.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
          if (!expected.equals(name)) {
            problems.add(jar.get().getFileName() + ": Automatic-Module-Name is " + name + "; expected " + expected);
          }
        }
      }
      build.file(artifactId, "javadoc", "jar").ifPresent(javadoc -> {
        try (JarFile j = new JarFile(javadoc.toFile())) {
          if (j.getEntry("index.html") == null) {
            problems.add(javadoc.getFileName() + ": no index.html; expected the module's API pages");
          }
        } catch (IOException e) {
          problems.add(javadoc.getFileName() + ": not a readable jar: " + e.getMessage());
        }
      });
    }
    assertThat(problems).as("what Maven Central would refuse in " + build.staging).isEmpty();
  }

  @Test
  void theParentAndTheBomCarryWhatCentralRequiresOfEveryPom() throws IOException {
    List<String> problems = new ArrayList<>();
    for (String artifactId : List.of("headroom-parent", "headroom-bom")) {
      Optional<Path> pom = checked(artifactId, "", "pom", problems);
      if (pom.isEmpty()) {
        continue;
      }
      Element project = StagedBuild.xml(pom.get()).getDocumentElement();
      for (String field : List.of("name", "description", "url")) {
        if (StagedBuild.text(project, field).isEmpty()) {
          problems.add(artifactId + ": no <" + field + ">");
        }
      }
      Element license = first(project, "license");
      if (license == null || !StagedBuild.text(license, "name").equals("Apache-2.0")) {
        problems.add(artifactId + ": no Apache-2.0 <license>");
      }
      Element scm = first(project, "scm");
      if (scm == null || !StagedBuild.text(scm, "connection").equals("scm:git:https://github.com/headroom-dev/headroom.git")) {
        problems.add(artifactId + ": <scm><connection> is not scm:git:https://github.com/headroom-dev/headroom.git");
      }
      Element developer = first(project, "developer");
      if (developer == null || !StagedBuild.text(developer, "id").equals("headroom")
          || StagedBuild.text(developer, "name").isEmpty()) {
        problems.add(artifactId + ": no <developer> with id headroom and a name");
      }
    }
    assertThat(problems).as("poms Maven Central would refuse in " + build.staging).isEmpty();
  }

  private List<String> bomEntries() throws IOException {
    List<String> problems = new ArrayList<>();
    Path bom = checked("headroom-bom", "", "pom", problems)
        .orElseThrow(() -> new AssertionError("the BOM is not staged: " + problems));
    List<String> entries = new ArrayList<>();
    for (Element d : StagedBuild.elements(StagedBuild.xml(bom).getDocumentElement(), "dependency")) {
      assertThat(StagedBuild.text(d, "groupId")).as("groupId of a BOM entry").isEqualTo(StagedBuild.GROUP);
      entries.add(StagedBuild.text(d, "artifactId"));
    }
    return entries;
  }

  /** The staged file with its checksums checked, each problem added to problems. */
  private Optional<Path> checked(String artifactId, String classifier, String extension, List<String> problems)
      throws IOException {
    Optional<Path> file = build.file(artifactId, classifier, extension);
    if (file.isEmpty()) {
      problems.add(artifactId + ": no " + (classifier.isEmpty() ? "" : classifier + " ") + extension
          + " staged in " + build.versionFolder(artifactId));
      return file;
    }
    byte[] content = Files.readAllBytes(file.get());
    for (String algorithm : List.of("MD5", "SHA-1")) {
      Path sum = Path.of(file.get() + "." + algorithm.replace("-", "").toLowerCase());
      if (!Files.isRegularFile(sum)) {
        problems.add(file.get().getFileName() + ": no " + sum.getFileName());
        continue;
      }
      String stated = Files.readString(sum, StandardCharsets.US_ASCII).trim().split("\\s+")[0];
      String actual = digest(algorithm, content);
      if (!stated.equalsIgnoreCase(actual)) {
        problems.add(sum.getFileName() + ": says " + stated + "; the file's " + algorithm + " is " + actual);
      }
    }
    return file;
  }

  private static Element first(Element project, String name) {
    List<Element> found = StagedBuild.elements(project, name);
    return found.isEmpty() ? null : found.get(0);
  }

  private static String digest(String algorithm, byte[] content) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(content));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(algorithm + ": not in this JDK", e);
    }
  }
}
