package dev.headroom.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/**
 * {@code headroom --version}: the version and the git commit it was built from, as the build wrote
 * them into {@code version.properties} (resource filtering; the commit is "unknown" when the build
 * ran without git or outside a repository).
 */
final class Version implements IVersionProvider {
  static final String RESOURCE = "version.properties";

  @Override
  public String[] getVersion() throws IOException {
    Properties p = new Properties();
    try (InputStream in = Version.class.getResourceAsStream(RESOURCE)) {
      if (in != null) {
        p.load(in);
      }
    }
    return new String[] {"headroom " + value(p, "version") + " (commit " + value(p, "commit") + ")"};
  }

  /** The property, or "unknown" when the build did not set it (missing, or left unfiltered). */
  private static String value(Properties p, String key) {
    String v = p.getProperty(key, "").trim();
    return v.isEmpty() || v.startsWith("${") ? "unknown" : v;
  }
}
