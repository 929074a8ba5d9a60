package dev.headroom.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application outside the reactor (src/it/consumer, copied to a temporary folder) builds and
 * passes its own tests with Headroom resolved by coordinates from target/staging-repository alone,
 * as it would from Maven Central once released.
 *
 * <p>The nested Maven gets a fresh local repository and a settings file with two repositories, both
 * folders: the staging repository, and for everything else (the third-party libraries, Maven's
 * plugins) this machine's local repository seen through a folder of links that leaves out
 * {@code dev/headroom}, so no Headroom artifact can come from anywhere but the staging repository.
 * Nothing is written to the machine's local repository.
 */
class ConsumerBuildTest {
  private final StagedBuild build = new StagedBuild();

  @Test
  void anApplicationResolvesHeadroomFromTheStagingRepositoryAlone(@TempDir Path work) throws Exception {
    build.assumeStaged();
    Path project = work.resolve("consumer");
    copy(build.root.resolve("headroom-consumer-it/src/it/consumer"), project);
    Path thirdParty = thirdPartyView(work.resolve("third-party"));
    Path repository = work.resolve("repository");
    Path settings = work.resolve("settings.xml");
    Files.writeString(settings, settings(thirdParty), StandardCharsets.UTF_8);
    Path log = build.root.resolve("headroom-consumer-it/target/consumer-build.log");
    Files.createDirectories(log.getParent());

    List<String> command = new ArrayList<>(List.of(build.mavenHome.resolve("bin/mvn").toString(),
        "-B", "-ntp", "-s", settings.toString(), "-gs", settings.toString(),
        "-Dmaven.repo.local=" + repository, "-Dheadroom.version=" + build.version,
        "-f", project.resolve("pom.xml").toString(), "verify"));
    ProcessBuilder pb = new ProcessBuilder(command).directory(project.toFile())
        .redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().remove("MAVEN_ARGS");
    Process maven = pb.start();
    boolean ended = maven.waitFor(5, TimeUnit.MINUTES);
    if (!ended) {
      maven.destroyForcibly();
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(ended).as("the consumer build ended within 5 minutes; its log is in %s", log).isTrue();
    assertThat(maven.exitValue()).as("exit status of %s; its output:%n%s", command, output).isZero();
    assertThat(output).as("the consumer's tests ran").contains("Tests run: 2, Failures: 0, Errors: 0");

    for (String artifactId : List.of("headroom-bom", "headroom-core", "headroom-client")) {
      Path folder = repository.resolve("dev/headroom").resolve(artifactId).resolve(build.version);
      assertThat(Files.readString(folder.resolve("_remote.repositories"), StandardCharsets.UTF_8))
          .as("where the consumer's local repository says %s came from", artifactId)
          .contains(">headroom-staging=");
    }
  }

  /** The machine's local repository less dev/headroom, as a folder of symbolic links. */
  private Path thirdPartyView(Path view) throws IOException {
    Files.createDirectories(view.resolve("dev"));
    try (Stream<Path> top = Files.list(build.localRepository)) {
      for (Path p : (Iterable<Path>) top::iterator) {
        if (!p.getFileName().toString().equals("dev")) {
          Files.createSymbolicLink(view.resolve(p.getFileName().toString()), p);
        }
      }
    }
    Path dev = build.localRepository.resolve("dev");
    if (Files.isDirectory(dev)) {
      try (Stream<Path> groups = Files.list(dev)) {
        for (Path p : (Iterable<Path>) groups::iterator) {
          if (!p.getFileName().toString().equals("headroom")) {
            Files.createSymbolicLink(view.resolve("dev").resolve(p.getFileName().toString()), p);
          }
        }
      }
    }
    return view;
  }

  private String settings(Path thirdParty) {
    return """
        <settings>
          <mirrors>
            <mirror>
              <id>third-party</id>
              <mirrorOf>*,!headroom-staging</mirrorOf>
              <url>%s</url>
            </mirror>
          </mirrors>
          <profiles>
            <profile>
              <id>staging</id>
              <repositories>
                <repository>
                  <id>headroom-staging</id>
                  <url>%s</url>
                  <releases><enabled>true</enabled></releases>
                  <snapshots><enabled>true</enabled></snapshots>
                </repository>
              </repositories>
            </profile>
          </profiles>
          <activeProfiles>
            <activeProfile>staging</activeProfile>
          </activeProfiles>
        </settings>
        """.formatted(thirdParty.toUri(), build.staging.toUri());
  }

  private static void copy(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path p : (Iterable<Path>) files.sorted(Comparator.naturalOrder())::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }
}
