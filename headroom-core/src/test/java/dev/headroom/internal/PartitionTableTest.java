package dev.headroom.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The open-addressing table behind the in-memory store: probing, tombstones, rebuilds, races. */
class PartitionTableTest {

  /** Expires words at or before {@code now} (as GCRA does) and every reference state. */
  private static final PartitionTable.StateTest EXPIRED_AT_OR_BEFORE = new PartitionTable.StateTest() {
    @Override
    public boolean expiredWord(long word, long now) {
      return word <= now;
    }

    @Override
    public boolean expiredRef(Object ref, long now) {
      return true;
    }
  };

  /** 2^n distinct strings with one hash code: "Aa" and "BB" hash alike. */
  private static List<String> collidingKeys(int n) {
    List<String> keys = new ArrayList<>();
    keys.add("");
    for (int i = 0; i < n; i++) {
      List<String> next = new ArrayList<>();
      for (String k : keys) {
        next.add(k + "Aa");
        next.add(k + "BB");
      }
      keys = next;
    }
    return keys;
  }

  private static String copy(String s) {
    return new String(s.toCharArray()); // equal, not the same instance
  }

  private static boolean insert(PartitionTable t, String key, long word) {
    return t.insert(key, key.hashCode(), word, null);
  }

  private static int find(PartitionTable t, String key) {
    return t.slots().find(key, key.hashCode());
  }

  private static boolean evict(PartitionTable t, String key, boolean force) {
    t.lock.lock();
    try {
      PartitionTable.Slots s = t.slots();
      return t.evict(s, s.find(key, key.hashCode()), 100, EXPIRED_AT_OR_BEFORE, force);
    } finally {
      t.lock.unlock();
    }
  }

  @Test
  void findsEveryInsertedKeyByEqualityAndKeepsItsState() {
    PartitionTable t = new PartitionTable(true);
    for (int i = 0; i < 1000; i++) {
      assertThat(insert(t, "k" + i, i)).isTrue();
    }
    assertThat(insert(t, copy("k7"), 99)).as("present already: not added twice").isFalse();
    assertThat(t.live()).isEqualTo(1000);
    for (int i = 0; i < 1000; i++) {
      int slot = find(t, copy("k" + i));
      assertThat(slot).isNotNegative();
      assertThat(t.slots().word(slot)).isEqualTo(i);
    }
    assertThat(find(t, "absent")).isEqualTo(-1);
  }

  @Test
  void growsByRebuildingAndKeepsTheLoadAtMostThreeQuarters() {
    PartitionTable t = new PartitionTable(true);
    assertThat(t.slots().capacity()).isEqualTo(PartitionTable.MIN_CAPACITY);
    for (int i = 0; i < 10_000; i++) {
      insert(t, "key-" + i, i);
      assertThat((long) t.live() * 4).isLessThanOrEqualTo((long) t.slots().capacity() * 3);
    }
    assertThat(t.slots().capacity()).isEqualTo(16_384);
  }

  @Test
  void aRebuildFreezesTheOldSlotsSoThatNoUpdateLandsInAStaleTable() {
    PartitionTable t = new PartitionTable(true);
    insert(t, "a", 5);
    PartitionTable.Slots old = t.slots();
    int slot = find(t, "a");
    for (int i = 0; i < 100; i++) {
      insert(t, "fill-" + i, 0);
    }
    assertThat(t.slots()).isNotSameAs(old);
    assertThat(old.word(slot)).isEqualTo(PartitionTable.MOVED_WORD);
    assertThat(old.casWord(slot, 5, 6)).isFalse();
    assertThat(t.slots().word(find(t, "a"))).isEqualTo(5);
  }

  @Test
  void referenceStatesAreCopiedAndFrozenToo() {
    PartitionTable t = new PartitionTable(false);
    Object state = new Object();
    t.insert("a", "a".hashCode(), 0, state);
    PartitionTable.Slots old = t.slots();
    int slot = old.find("a", "a".hashCode());
    for (int i = 0; i < 100; i++) {
      t.insert("fill-" + i, ("fill-" + i).hashCode(), 0, new Object());
    }
    assertThat(old.ref(slot)).isSameAs(PartitionTable.MOVED);
    assertThat(t.slots().ref(t.slots().find("a", "a".hashCode()))).isSameAs(state);
  }

  @Test
  void probeChainsOfCollidingKeysSurviveRemovalInTheMiddle() {
    List<String> keys = collidingKeys(4); // 16 keys, one hash, one probe chain
    PartitionTable t = new PartitionTable(true);
    for (String k : keys) {
      insert(t, k, 0);
    }
    assertThat(evict(t, keys.get(3), false)).isTrue();
    assertThat(evict(t, keys.get(8), false)).isTrue();
    assertThat(find(t, keys.get(3))).isEqualTo(-1);
    assertThat(find(t, keys.get(8))).isEqualTo(-1);
    for (int i = 0; i < keys.size(); i++) {
      if (i != 3 && i != 8) {
        assertThat(find(t, copy(keys.get(i)))).as(keys.get(i)).isNotNegative();
      }
    }
    assertThat(t.live()).isEqualTo(14);
  }

  @Test
  void aTombstoneIsReusedUnderANewGenerationSoThatAStaleReaderCanTellItsSlotChanged() {
    List<String> keys = collidingKeys(2); // one hash code: one home slot
    PartitionTable t = new PartitionTable(true);
    insert(t, keys.get(0), 0);
    insert(t, keys.get(3), 3); // the next slot: the tombstone below is not followed by an empty slot
    PartitionTable.Slots s = t.slots();
    int first = find(t, keys.get(0));
    long generation = s.tag(first);
    evict(t, keys.get(0), false);
    assertThat(s.key(first)).isSameAs(PartitionTable.TOMBSTONE);
    assertThat(s.word(first)).isEqualTo(PartitionTable.RETIRED_WORD);
    assertThat(s.tag(first)).as("eviction leaves the generation").isEqualTo(generation);
    insert(t, keys.get(1), 5);
    assertThat(find(t, keys.get(1))).as("the tombstone on the probe path is taken").isEqualTo(first);
    assertThat(s.word(first)).isEqualTo(5);
    assertThat(s.tag(first) >>> 32).as("a new generation").isEqualTo((generation >>> 32) + 1);
    assertThat((int) s.tag(first)).as("the hash half is the new key's").isEqualTo(keys.get(1).hashCode());
    assertThat(s.holds(first, keys.get(0))).as("a reader of the old key sees the slot is not its own").isFalse();
    insert(t, keys.get(0), 7);
    assertThat(find(t, keys.get(0))).isNotEqualTo(first);
    assertThat(t.slots().word(find(t, keys.get(0)))).as("a fresh state").isEqualTo(7);
    assertThat(t.live()).isEqualTo(3);
  }

  /** PartitionTable, "Emptying tombstones": a tombstone before an empty slot is on no probe path. */
  @Test
  void aTombstoneBeforeAnEmptySlotIsEmptiedWithTheTombstonesBeforeIt() {
    List<String> keys = collidingKeys(2); // one home slot: the keys take consecutive slots
    PartitionTable t = new PartitionTable(true);
    for (int i = 0; i < 3; i++) {
      insert(t, keys.get(i), i);
    }
    PartitionTable.Slots s = t.slots();
    int home = find(t, keys.get(0));
    int second = (home + 1) & s.mask;
    int third = (home + 2) & s.mask;
    long generation = s.tag(second);
    evict(t, keys.get(1), false);
    assertThat(s.key(second)).as("followed by a key: stays a tombstone").isSameAs(PartitionTable.TOMBSTONE);
    evict(t, keys.get(2), false);
    assertThat(s.key(third)).as("followed by an empty slot: emptied").isNull();
    assertThat(s.key(second)).as("the run before it too").isNull();
    assertThat(find(t, keys.get(0))).isEqualTo(home);
    assertThat(find(t, keys.get(1))).isEqualTo(-1);
    assertThat(find(t, keys.get(2))).isEqualTo(-1);
    assertThat(t.tombstones()).isZero();
    insert(t, keys.get(3), 9);
    assertThat(find(t, keys.get(3))).isEqualTo(second);
    assertThat(s.tag(second) >>> 32).as("an emptied slot's generation keeps increasing")
        .isEqualTo((generation >>> 32) + 1);
    assertThat(t.live()).isEqualTo(2);
  }

  @Test
  void aRebuildPurgesTombstonesAndShrinksAnEmptiedTable() {
    PartitionTable t = new PartitionTable(true);
    for (int i = 0; i < 1000; i++) {
      insert(t, "key-" + i, 0);
    }
    int big = t.slots().capacity();
    for (int i = 0; i < 1000; i++) {
      evict(t, "key-" + i, false);
    }
    assertThat(t.live()).isZero();
    // A table that lost its keys shrinks at the next insert; churn then never makes it grow.
    for (int i = 0; i < 5000; i++) {
      insert(t, "again-" + i, 0);
      evict(t, "again-" + i, false);
    }
    assertThat(t.slots().capacity()).isLessThan(big);
    assertThat(t.live()).isZero();
  }

  @Test
  void evictionOfALiveStateNeedsForce() {
    PartitionTable t = new PartitionTable(true);
    insert(t, "live", 1_000);
    assertThat(evict(t, "live", false)).as("expires at 1000, now is 100").isFalse();
    assertThat(find(t, "live")).isNotNegative();
    assertThat(evict(t, "live", true)).isTrue();
    assertThat(find(t, "live")).isEqualTo(-1);
  }

  @Test
  void concurrentInsertsOfOverlappingKeysAddEachKeyOnce() throws Exception {
    PartitionTable t = new PartitionTable(true);
    int threads = 4;
    int perThread = 20_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<Integer>> added = new ArrayList<>();
    for (int w = 0; w < threads; w++) {
      int offset = w * (perThread / 2); // each half overlaps the next thread's
      added.add(pool.submit(() -> {
        start.await();
        int n = 0;
        for (int i = offset; i < offset + perThread; i++) {
          String k = "key-" + i;
          if (insert(t, k, i)) {
            n++;
          }
          assertThat(find(t, k)).isNotNegative();
        }
        return n;
      }));
    }
    start.countDown();
    int total = 0;
    for (Future<Integer> f : added) {
      total += f.get();
    }
    pool.shutdown();
    Set<String> distinct = new HashSet<>();
    for (int i = 0; i < (threads - 1) * (perThread / 2) + perThread; i++) {
      distinct.add("key-" + i);
    }
    assertThat(total).isEqualTo(distinct.size());
    assertThat(t.live()).isEqualTo(distinct.size());
    for (String k : distinct) {
      int slot = find(t, k);
      assertThat(t.slots().word(slot)).isEqualTo(Long.parseLong(k.substring(4)));
    }
  }

  @Test
  void casUpdatesRacingWithRebuildsLoseNothing() throws Exception {
    PartitionTable t = new PartitionTable(true);
    insert(t, "counter", 0);
    int increments = 200_000;
    Thread counter = new Thread(() -> {
      for (int n = 0; n < increments; ) {
        PartitionTable.Slots s = t.slots();
        int i = s.find("counter", "counter".hashCode());
        long w = s.word(i);
        if (w == PartitionTable.MOVED_WORD) {
          t.awaitStructure();
          continue;
        }
        if (s.casWord(i, w, w + 1)) {
          n++;
        }
      }
    });
    counter.start();
    for (int i = 0; counter.isAlive(); i++) {
      insert(t, "grow-" + i, 0); // forces rebuild after rebuild
    }
    counter.join();
    assertThat(t.slots().word(find(t, "counter"))).isEqualTo(increments);
  }

  /**
   * Churn as in the Zipf warm-up (benchmarks/HISTORY.md, Core limiter, "Zipf allow against the lean GCRA"):
   * hot keys expire, are evicted and come back many times. Before tombstones were reused, each
   * comeback was placed past its own tombstone, so runs grew (more than 2 slots passed per lookup
   * here, 12 to 25 in the benchmark); now a comeback takes the first tombstone of its path, so
   * runs stay as short as without churn. The stored hash keeps passes from reading other strings.
   */
  @Test
  void afterEvictAndReinsertChurnALookupReadsAlmostNoOtherKeysString() {
    PartitionTable t = new PartitionTable(true);
    List<String> cold = new ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      cold.add("cold-" + i);
      insert(t, cold.get(i), 1_000); // never expires at now = 100
    }
    List<String> hot = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      hot.add("hot-" + i);
    }
    long slotsPassed = 0;
    long stringsRead = 0;
    long lookups = 0;
    for (int round = 0; round < 40; round++) {
      for (String k : hot) {
        insert(t, k, 0); // expired at now = 100
      }
      PartitionTable.Slots s = t.slots();
      for (String k : hot) {
        long[] cost = s.probeCost(copy(k), k.hashCode());
        stringsRead += cost[0];
        slotsPassed += cost[1];
        lookups++;
      }
      for (String k : hot) {
        assertThat(evict(t, k, false)).as(k).isTrue();
      }
    }
    assertThat(t.live()).isEqualTo(cold.size());
    for (String k : cold) {
      assertThat(find(t, copy(k))).as(k).isNotNegative();
    }
    // The churn no longer builds long runs: tombstones are reused.
    assertThat((double) slotsPassed / lookups).as("slots passed per lookup").isLessThan(1.5);
    long[] probes = t.slots().probeLengths();
    assertThat(probes[2]).isEqualTo(cold.size());
    assertThat((double) probes[1] / probes[2]).as("mean probe length of the keys present").isLessThan(1.0);
    // Yet a lookup reads another key's string only on a full 32-bit hash collision.
    assertThat((double) stringsRead / lookups).as("other keys' strings read per lookup").isLessThan(0.01);
  }
}
