package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.PartitionKey;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Exactness across processes: four JVMs, each with its own RedisStore on Redis time, decide
 * 100,000 requests in total against the same keys (a global token bucket of 10,000 and ten
 * per-tenant fixed windows of 800, both asked by every request). The tenants cap the total at
 * 8,000: exactly 8,000 are admitted, 800 per tenant, and because a request refused by its tenant
 * consumes nothing of the global bucket (all or nothing), the bucket has exactly 2,000 left.
 */
class MultiProcessTest {

  static final int PROCESSES = 4;
  static final int DECISIONS_EACH = 25_000;

  private String prefix;

  @AfterEach
  void clean() {
    LocalRedis.deleteAll(prefix);
  }

  @Test
  void fourJvmsNeverAdmitMoreThanThePolicies() throws Exception {
    prefix = LocalRedis.uniquePrefix("procs");
    long secondsIntoWindow = Instant.now().getEpochSecond() % Hammer.TENANT.windowSeconds();
    assertThat(Hammer.TENANT.windowSeconds() - secondsIntoWindow)
        .as("not within ten minutes of the 366-day window's end").isGreaterThan(600);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("java.class.path");
    List<Process> processes = new ArrayList<>();
    List<File> outputs = new ArrayList<>();
    try {
      for (int i = 0; i < PROCESSES; i++) {
        File out = Files.createTempFile("hammer" + i, ".out").toFile();
        outputs.add(out);
        processes.add(new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", classpath,
            Hammer.class.getName(), LocalRedis.URI, prefix, Integer.toString(DECISIONS_EACH), "4")
            .redirectErrorStream(true).redirectOutput(out).start());
      }
      long admitted = 0;
      long[] perTenant = new long[Hammer.TENANTS];
      for (int i = 0; i < PROCESSES; i++) {
        Process p = processes.get(i);
        assertThat(p.waitFor(150, TimeUnit.SECONDS)).as("process " + i + " finished").isTrue();
        String out = Files.readString(outputs.get(i).toPath());
        assertThat(p.exitValue()).as("process " + i + " exit; output:\n" + out).isZero();
        String line = out.lines().filter(l -> l.startsWith("admitted=")).findFirst().orElseThrow(
            () -> new AssertionError("no result from process; output:\n" + out));
        String[] parts = line.split(" ");
        admitted += Long.parseLong(parts[0].substring("admitted=".length()));
        String[] tenants = parts[2].substring("tenants=".length()).split(",");
        for (int t = 0; t < Hammer.TENANTS; t++) {
          perTenant[t] += Long.parseLong(tenants[t]);
        }
      }
      assertThat(admitted).isEqualTo(8_000);
      assertThat(perTenant).containsOnly(800);
      try (RedisStore store = RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix)
          .decisionDeadline(Duration.ofSeconds(5)).build()) {
        long left = store.acquire(List.of(Acquisition.of(Hammer.GLOBAL, PartitionKey.GLOBAL, 0)))
            .outcomes().get(0).remaining();
        assertThat(left).isEqualTo(2_000);
      }
    } finally {
      for (Process p : processes) {
        p.destroyForcibly();
      }
    }
  }
}
