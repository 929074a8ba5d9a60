package dev.headroom.consumer;

import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * What the surrounding build tells the checks (surefire's system properties in this module's pom)
 * and how a file of the staging repository is found: Maven's repository layout, where a SNAPSHOT
 * is stored under a timestamped name that the version's {@code maven-metadata.xml} lists per
 * classifier and extension, and a release under its version.
 */
final class StagedBuild {
  static final String GROUP = "dev.headroom";

  final Path root = Path.of(required("headroom.root")).normalize();
  final Path staging = Path.of(required("headroom.staging.repository")).normalize();
  final String version = required("headroom.version");
  final Path mavenHome = Path.of(required("maven.home"));
  final Path localRepository = Path.of(required("maven.local.repository"));

  /** Skips the calling test when Maven runs offline: maven-deploy-plugin then stages nothing. */
  void assumeStaged() {
    assumeFalse(required("headroom.maven.offline").equals("offline=true"),
        "Maven runs offline (-o): maven-deploy-plugin refuses to deploy, even to "
            + staging + ", so nothing was staged to check; run mvn verify without -o");
  }

  Path versionFolder(String artifactId) {
    return staging.resolve(GROUP.replace('.', '/')).resolve(artifactId).resolve(version);
  }

  /** The staged file of one artifact, or empty when the repository does not list it. */
  Optional<Path> file(String artifactId, String classifier, String extension) throws IOException {
    String suffix = (classifier.isEmpty() ? "" : "-" + classifier) + "." + extension;
    Path folder = versionFolder(artifactId);
    if (!version.endsWith("-SNAPSHOT")) {
      Path p = folder.resolve(artifactId + "-" + version + suffix);
      return Files.isRegularFile(p) ? Optional.of(p) : Optional.empty();
    }
    Path metadata = folder.resolve("maven-metadata.xml");
    if (!Files.isRegularFile(metadata)) {
      return Optional.empty();
    }
    for (Element v : elements(xml(metadata).getDocumentElement(), "snapshotVersion")) {
      if (text(v, "classifier").equals(classifier) && text(v, "extension").equals(extension)) {
        Path p = folder.resolve(artifactId + "-" + text(v, "value") + suffix);
        return Files.isRegularFile(p) ? Optional.of(p) : Optional.empty();
      }
    }
    return Optional.empty();
  }

  static Document xml(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
      f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
      return f.newDocumentBuilder().parse(in);
    } catch (ParserConfigurationException | SAXException e) {
      throw new IOException(file + ": not well-formed XML: " + e.getMessage(), e);
    }
  }

  /** Every descendant element of that name. */
  static List<Element> elements(Element parent, String name) {
    NodeList nodes = parent.getElementsByTagName(name);
    List<Element> out = new ArrayList<>();
    for (int i = 0; i < nodes.getLength(); i++) {
      out.add((Element) nodes.item(i));
    }
    return out;
  }

  /** The text of the first direct child of that name, "" when there is none. */
  static String text(Element parent, String name) {
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element && n.getNodeName().equals(name)) {
        return n.getTextContent().trim();
      }
    }
    return "";
  }

  private static String required(String name) {
    String v = System.getProperty(name);
    if (v == null || v.isBlank()) {
      throw new IllegalStateException("system property " + name
          + " is not set; expected it from this module's surefire configuration");
    }
    return v;
  }
}
