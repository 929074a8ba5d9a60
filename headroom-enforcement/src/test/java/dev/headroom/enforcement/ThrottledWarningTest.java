package dev.headroom.enforcement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.headroom.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A store that cannot decide is logged once per interval with the count of the refusals in
 * between, not once per refused request (issue 14: one WARN line per 503 under load).
 */
class ThrottledWarningTest {
  final ManualTicker ticker = ManualTicker.atFixedInstant();
  final List<String> lines = new ArrayList<>();
  final ThrottledWarning warning = new ThrottledWarning(Duration.ofSeconds(10), line -> {
    synchronized (lines) {
      lines.add(line);
    }
  });

  @Test
  void firstLineAtOnceThenOnePerIntervalWithTheCountSuppressed() {
    warning.warn(ticker, "store failed");
    for (int i = 0; i < 774; i++) {
      ticker.advance(Duration.ofMillis(10));
      warning.warn(ticker, "store failed");
    }
    assertThat(lines).containsExactly("store failed");
    ticker.advance(Duration.ofSeconds(3)); // 10.74 s after the first line
    warning.warn(ticker, "store failed again");
    assertThat(lines).containsExactly("store failed", "store failed again (and 774 more like it in the last 10 s)");
    ticker.advance(Duration.ofSeconds(10));
    warning.warn(ticker, "store failed");
    assertThat(lines).last().isEqualTo("store failed");
  }

  @Test
  void concurrentCallersWriteOneLineBetweenThem() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    CountDownLatch go = new CountDownLatch(1);
    for (int t = 0; t < 8; t++) {
      pool.execute(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        for (int i = 0; i < 1000; i++) {
          warning.warn(ticker, "store failed");
        }
      });
    }
    go.countDown();
    pool.shutdown();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    assertThat(lines).hasSize(1).allMatch(l -> l.startsWith("store failed"));
    ticker.advance(Duration.ofSeconds(10));
    warning.warn(ticker, "store failed");
    assertThat(lines).hasSize(2);
    // a refusal counted while the first line was being written may be reported on either line;
    // between them the lines account for every one of the 8,000 but the first
    long reported = lines.stream().mapToLong(ThrottledWarningTest::suppressedIn).sum();
    assertThat(reported).isEqualTo(7999);
  }

  static long suppressedIn(String line) {
    Matcher m = Pattern.compile("\\(and (\\d+) more like it").matcher(line);
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  @Test
  void intervalMustBePositive() {
    assertThatThrownBy(() -> new ThrottledWarning(Duration.ZERO, lines::add))
        .hasMessage("interval: expected a positive duration, got PT0S");
  }
}
