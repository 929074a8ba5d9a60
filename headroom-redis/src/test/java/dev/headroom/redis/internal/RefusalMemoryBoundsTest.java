package dev.headroom.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.headroom.Acquisition;
import dev.headroom.Algorithm;
import dev.headroom.PartitionKey;
import dev.headroom.QuotaPolicy;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link RefusalMemory}'s arithmetic and bounds, on calls encoded as the store encodes them (the
 * behaviour through the store is {@code RefusalMemoryTest}, on real Redis).
 */
class RefusalMemoryBoundsTest {

  private static final QuotaPolicy HOURLY = QuotaPolicy.builder("hourly").quota(1).window(Duration.ofHours(1))
      .algorithm(Algorithm.FIXED_WINDOW).build();
  private static final KeyLayout LAYOUT = new KeyLayout("t:");
  private static final long MS = 1_000_000L;

  private static DecisionScript.Call call(String key, long cost) {
    return DecisionScript.encode(LAYOUT, false, DecisionScript.ACQUIRE, null, 0,
        List.of(Acquisition.of(HOURLY, PartitionKey.of(key), cost)), null);
  }

  /** A refusal with this retry and reset (nanoseconds), r = 0, more quota when the window resets. */
  private static long[] refusal(long retry, long reset) {
    return new long[] {0, 0, 0, reset / 1_000_000_000L, reset % 1_000_000_000L, retry / 1_000_000_000L,
        retry % 1_000_000_000L, 0, reset / 1_000_000_000L, reset % 1_000_000_000L};
  }

  @Test
  void anAnswerIsTheRefusalAgedByTheLeastTimeRedisCanHavePassed() {
    RefusalMemory memory = new RefusalMemory(Duration.ofSeconds(1).toNanos());
    memory.answered(call("a", 1), refusal(500 * MS, 700 * MS), 1_000 * MS, 1_002 * MS);
    long[] at = memory.answer(call("a", 1), 1_102 * MS);
    assertThat(DecisionScript.nanos(at[5], at[6])).isEqualTo(400 * MS); // 500 - (1102 - 1002)
    assertThat(DecisionScript.nanos(at[3], at[4])).isEqualTo(600 * MS);
    assertThat(DecisionScript.nanos(at[8], at[9])).as("the time until more quota, aged alike").isEqualTo(600 * MS);
    assertThat(at[1]).isZero();
    // refused while now - written < retry: until 1,500 ms
    assertThat(memory.answer(call("a", 1), 1_499 * MS)).isNotNull();
    assertThat(memory.answer(call("a", 1), 1_500 * MS)).isNull();
    assertThat(memory.size()).isZero();
  }

  @Test
  void theBoundCapsALongRetryAndAnAdmissionOrGiveBackForgets() {
    RefusalMemory memory = new RefusalMemory(200 * MS);
    memory.answered(call("a", 1), refusal(3_600_000 * MS, 3_600_000 * MS), 0, MS);
    assertThat(memory.answer(call("a", 1), 199 * MS)).isNotNull();
    assertThat(memory.answer(call("a", 1), 200 * MS)).isNull();

    memory.answered(call("a", 1), refusal(3_600_000 * MS, 3_600_000 * MS), 0, MS);
    assertThat(memory.answer(call("a", 2), 10 * MS)).as("another cost is another request").isNull();
    memory.answered(call("a", 2), new long[] {1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 10 * MS, 11 * MS);
    assertThat(memory.answer(call("a", 1), 12 * MS)).as("an admission on the keys forgets").isNull();

    memory.answered(call("b", 1), refusal(3_600_000 * MS, 3_600_000 * MS), 0, MS);
    memory.forgetAll();
    assertThat(memory.answer(call("b", 1), 2 * MS)).isNull();
  }

  @Test
  void atMostMaxEntriesKeySetsAreRememberedAndExpiredOnesMakeRoom() {
    RefusalMemory memory = new RefusalMemory(Duration.ofSeconds(1).toNanos());
    for (int i = 0; i < RefusalMemory.MAX_ENTRIES; i++) {
      memory.answered(call("k" + i, 1), refusal(100 * MS, 100 * MS), 0, MS);
    }
    memory.answered(call("late", 1), refusal(100 * MS, 100 * MS), 0, 2 * MS);
    assertThat(memory.size()).isEqualTo(RefusalMemory.MAX_ENTRIES);
    assertThat(memory.answer(call("late", 1), 3 * MS)).isNull();

    memory.answered(call("later", 1), refusal(900 * MS, 900 * MS), 150 * MS, 151 * MS); // the rest expired at 100 ms
    assertThat(memory.size()).isEqualTo(1);
    assertThat(memory.answer(call("later", 1), 152 * MS)).isNotNull();
  }

  @Test
  void aRefusalAnsweredAfterItsRetryRanOutIsNotRemembered() {
    RefusalMemory memory = new RefusalMemory(Duration.ofSeconds(1).toNanos());
    memory.answered(call("a", 1), refusal(5 * MS, 5 * MS), 0, 6 * MS);
    assertThat(memory.size()).isZero();
    RefusalMemory off = new RefusalMemory(0);
    off.answered(call("a", 1), refusal(500 * MS, 500 * MS), 0, MS);
    assertThat(off.answer(call("a", 1), 2 * MS)).isNull();
  }
}
