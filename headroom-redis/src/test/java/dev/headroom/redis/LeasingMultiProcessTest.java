package dev.headroom.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.QuotaPolicy;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The over-admission bound of quota leasing (headroom-redis README "Quota leasing"), across
 * processes: three JVMs lease from the same hot key's fixed window (q = 3,000) and token bucket
 * (q = 2,500, one unit of refill per 3.5 hours), 3,300 attempts in all. One of them goes first
 * and halts while it holds slices; the two others then decide together (started behind a Redis
 * barrier). Slices are taken atomically from the global count, so the JVMs together admit no
 * more than the bucket's 2,500, and what Redis has left is exactly the quota minus what was
 * admitted minus what the crashed JVM held: no unit is created, and the only units lost are the
 * crashed node's (until the window ends or the bucket refills).
 */
class LeasingMultiProcessTest {

  private String prefix;

  @AfterEach
  void clean() {
    LocalRedis.deleteAll(prefix);
  }

  @Test
  void jvmsLeasingOneKeyNeverAdmitMoreThanTheQuotaAndACrashLosesOnlyItsSlice() throws Exception {
    prefix = LocalRedis.uniquePrefix("leasemp");
    long secondsIntoWindow = Instant.now().getEpochSecond() % LeasingWorker.WINDOW.windowSeconds();
    assertThat(LeasingWorker.WINDOW.windowSeconds() - secondsIntoWindow)
        .as("not within ten minutes of the 366-day window's end").isGreaterThan(600);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("java.class.path");
    String[][] runs = {{"1500", "close"}, {"1500", "close"}, {"300", "crash"}};
    List<Process> processes = new ArrayList<>();
    List<File> outputs = new ArrayList<>();
    try {
      for (int i = 0; i < runs.length; i++) {
        File out = Files.createTempFile("leasing" + i, ".out").toFile();
        out.deleteOnExit();
        outputs.add(out);
        processes.add(new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", classpath,
            LeasingWorker.class.getName(), LocalRedis.URI, prefix, runs[i][0], runs[i][1], Integer.toString(i))
            .redirectErrorStream(true).redirectOutput(out).start());
      }
      for (int i = 0; i < runs.length; i++) {
        Object ready = null;
        for (int wait = 0; wait < 12 && ready == null; wait++) { // 9 s each: under the client's 10 s timeout
          ready = LocalRedis.commands().blpop(9, prefix + "ready");
        }
        assertThat(ready).as("process %d ready within 108 s", i).isNotNull();
      }
      // The crashing JVM goes first, so that it surely dies holding slices; then the two others
      // compete for what is left.
      LocalRedis.commands().rpush(prefix + "go:2", "1");
      assertThat(processes.get(2).waitFor(120, TimeUnit.SECONDS)).as("crashing process finished").isTrue();
      LocalRedis.commands().rpush(prefix + "go:0", "1");
      LocalRedis.commands().rpush(prefix + "go:1", "1");
      long admitted = 0;
      long crashedWindow = 0;
      long crashedBucket = 0;
      long slices = 0;
      for (int i = 0; i < runs.length; i++) {
        Process p = processes.get(i);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("process " + i + " finished").isTrue();
        String out = Files.readString(outputs.get(i).toPath());
        assertThat(p.exitValue()).as("process " + i + " exit; output:\n" + out).isZero();
        Map<String, Long> r = result(out);
        assertThat(r.get("dishonest")).as("decisions whose r overstated what was left").isZero();
        admitted += r.get("admitted");
        slices += r.get("slices");
        if (runs[i][1].equals("crash")) {
          crashedWindow = r.get("heldWindow");
          crashedBucket = r.get("heldBucket");
        }
      }
      assertThat(admitted).isLessThanOrEqualTo(LeasingWorker.BUCKET.quota());
      assertThat(slices).as("leasing was used").isPositive();
      assertThat(admitted).as("3,300 attempts for 2,500 units: the bucket ran out").isGreaterThan(2_000);
      assertThat(crashedBucket).as("the crashed JVM held a slice").isPositive();
      assertThat(remaining(LeasingWorker.WINDOW)).isEqualTo(3_000 - admitted - crashedWindow);
      // The bucket refills one unit per 3.5 hours: at most one during the run.
      assertThat(remaining(LeasingWorker.BUCKET)).isBetween(2_500 - admitted - crashedBucket,
          2_500 - admitted - crashedBucket + 1);
    } finally {
      for (Process p : processes) {
        p.destroyForcibly();
      }
    }
  }

  private long remaining(QuotaPolicy policy) {
    try (RedisStore store = RedisStore.builder().uri(LocalRedis.URI).keyPrefix(prefix)
        .decisionDeadline(Duration.ofSeconds(5)).build()) {
      return store.acquire(List.of(Acquisition.of(policy, LeasingWorker.KEY, 0))).outcomes().get(0).remaining();
    }
  }

  private static Map<String, Long> result(String out) {
    String line = out.lines().filter(l -> l.startsWith("admitted=")).findFirst()
        .orElseThrow(() -> new AssertionError("no result from process; output:\n" + out));
    Map<String, Long> r = new TreeMap<>();
    for (String part : line.split(" ")) {
      String[] kv = part.split("=");
      r.put(kv[0], Long.parseLong(kv[1]));
    }
    return r;
  }
}
