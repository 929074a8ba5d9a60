package dev.headroom;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * All or nothing in {@link InMemoryStore} when a commit fails half-way (LocalStore, "All or
 * nothing"): the commits already made are undone at the instant of the decision, so the undo is
 * the exact inverse of the commit even when the clock crosses a window boundary meanwhile.
 */
class InMemoryStoreUndoTest {

  /** A ticker that moves to the next scripted instant on each read, then stays there. */
  private static final class ScriptedTicker implements Ticker {
    private final Deque<Long> script = new ArrayDeque<>();
    private long now;

    ScriptedTicker(Instant start) {
      now = ManualTicker.at(start).read();
    }

    void thenReads(Instant... instants) {
      for (Instant i : instants) {
        script.add(ManualTicker.at(i).read());
      }
    }

    @Override
    public synchronized long read() {
      if (!script.isEmpty()) {
        now = script.poll();
      }
      return now;
    }
  }

  @Test
  @DisplayName("a decision refused half-way at :59 undoes its commit in the window it was made in, even if read at :60")
  void undoUsesTheInstantOfTheDecision() {
    Instant start = Instant.parse("2026-01-01T00:00:59Z");
    ScriptedTicker ticker = new ScriptedTicker(start);
    InMemoryStore store = InMemoryStore.builder().ticker(ticker).build();
    QuotaPolicy p = QuotaPolicy.builder("sliding").quota(5).window(Duration.ofSeconds(60))
        .algorithm(Algorithm.SLIDING_WINDOW).build();
    PartitionKey k = PartitionKey.of("client");
    assertThat(store.acquire(List.of(Acquisition.of(p, k, 4))).allowed()).isTrue();
    // Twice the same policy and key (the Store SPI tolerates it; QuotaLimiter refuses it): both
    // peeks see one unit left, the first commit takes it, the second fails and the first is undone.
    Instant nextWindow = Instant.parse("2026-01-01T00:01:00.000000001Z");
    ticker.thenReads(start, nextWindow);
    Decision d = store.acquire(List.of(Acquisition.of(p, k, 1), Acquisition.of(p, k, 1)));
    assertThat(d.allowed()).isFalse();
    // One nanosecond into the next window the previous window's 4 units weigh floor(4 * (w - 1ns) / w) = 3.
    PolicyOutcome after = store.acquire(List.of(Acquisition.of(p, k, 0))).outcomes().get(0);
    assertThat(after.remaining()).as("the refused request left nothing behind").isEqualTo(2);
  }
}
