package dev.headroom.gateway.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The configuration watcher on a real file system: a reload that throws does not end the watching. */
class ConfigWatcherTest {

  @Test
  void aReloadThatThrowsLeavesTheFileWatched(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("headroom.yaml");
    Files.writeString(file, "service: {name: A}\n");
    AtomicInteger reloads = new AtomicInteger();
    try (ConfigWatcher w = ConfigWatcher.start(file, () -> {
      if (reloads.incrementAndGet() == 1) {
        throw new IllegalStateException("a reload that failed in an unexpected way");
      }
    })) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      // Each write is a change; the watcher may coalesce several into one reload, so write until
      // a reload after the one that threw is seen.
      for (int i = 0; reloads.get() < 2 && System.nanoTime() < deadline; i++) {
        Files.writeString(file, "service: {name: B" + i + "}\n");
        Thread.sleep(200);
      }
      assertThat(reloads.get()).as("reloads after one threw").isGreaterThanOrEqualTo(2);
    }
  }
}
