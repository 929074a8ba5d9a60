package dev.headroom.cli;

import picocli.CommandLine.IVersionProvider;

/** The version from the jar manifest, or "development" when run from classes. */
final class Version implements IVersionProvider {
  @Override
  public String[] getVersion() {
    String v = Version.class.getPackage().getImplementationVersion();
    return new String[] {"headroom " + (v == null ? "development build" : v)};
  }
}
