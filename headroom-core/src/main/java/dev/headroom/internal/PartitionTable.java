package dev.headroom.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The tracked partitions of one policy in the in-memory store: an open-addressing hash table from
 * partition key to one state per key.
 *
 * <h2>How is this designed, and why?</h2>
 * A map of key to a per-key object (a {@code ConcurrentHashMap} node, a cell object, its atomic
 * reference, its state object) costs five objects and 150 to 350 bytes per key, and one cache
 * miss per object on every decision. This table keeps parallel arrays in a {@link Slots}:
 * the keys ({@code Object[]}, the caller's own {@code String}s, nothing copied), their hash codes
 * and generations ({@code long[]} tags, word tables only, below), and the state,
 * either one {@code long} per key ({@link #words}: the GCRA theoretical arrival time, the whole
 * state of a token bucket) or one reference to an immutable state per key (windows, leases).
 * A token bucket key thus costs 20 bytes per slot with compressed references (key 4, tag 8,
 * TAT 8), 27 to 53 bytes per key at the load factors used (41.9 measured for 1,000,000 keys in
 * 2^21 slots), and a decision touches three cache lines.
 *
 * <p>A probe compares the stored hash before it touches another key's {@code String}: a lookup
 * that passes a run of other keys then costs reads of two arrays, not one likely cache miss per key
 * passed. Word tables keep the hash in the low half of a {@code long} <em>tag</em> whose high half
 * is the slot's generation (below). The generation is what the tag's four bytes beyond an
 * {@code int[]} of hashes buy (33.6 bytes per key became 41.9): without it, reusing tombstones
 * opens the ABA window described below. Reference tables
 * (windows, leases) keep no tag array: their 8 bytes per slot would take a fixed-window key past
 * one fifth of Bucket4j's memory (benchmarks/HISTORY.md, "Memory per tracked key"), so they read the key's
 * cached {@code String} hash, and the identity of their immutable states serves as generation.
 *
 * <p>Keys are found by linear probing from a Fibonacci hash of {@code String.hashCode()} (cached in
 * the string). Lookups take no lock: a key is in at most one slot at a time, so a reader that
 * finds a key at a slot has found that key's only slot, and a reader that misses a key being
 * inserted simply takes the insert path, which looks again under the lock. A slot's key goes from
 * {@code null} to a key to {@link #TOMBSTONE}, then either to another key (tombstones are reused)
 * or back to {@code null} (see "Emptying tombstones"); a reader therefore checks, after it read a
 * state, that the slot still belongs to its key (the <em>generation</em> check below).
 *
 * <h2>State transitions</h2>
 * A state is changed only by compare-and-set (volatile semantics: a decision happens-after every
 * decision it observed). Two reserved states end a slot's life: <em>retired</em> (evicted; the key
 * is then replaced by a tombstone) and <em>moved</em> (copied into a rebuilt table). A CAS that
 * meets either fails, and the caller looks the key up again through {@link #awaitStructure()}, so
 * no update is ever lost to eviction or to a rebuild.
 *
 * <h2>Tombstone reuse, and why it needs a generation</h2>
 * Without reuse, churn (keys evicted and new ones inserted) leaves tombstones on every probe path
 * until the next rebuild: measured chains grew to 12 to 25 slots. An insert therefore takes the
 * first tombstone on its key's probe path (after checking, under the lock, that the key is absent).
 * Reuse opens an ABA window for the lock-free CAS: a reader of key A finds slot {@code i}, reads
 * A's state {@code X}; A is evicted, key B takes slot {@code i} and, at the same clock reading,
 * reaches the same value {@code X} (two TATs {@code now + T} are equal numbers); A's reader's
 * {@code CAS(X, X + T)} then succeeds on B's state. The tag closes the window:
 * <ul>
 *   <li>Word tables: the slot's generation (the tag's high half) is increased whenever a key takes
 *       a reused slot, before its state and key are published. A decision reads the tag
 *       {@code g}, checks the key, reads the state, and checks the tag is still {@code g}: the
 *       state it read is then its key's. After a successful CAS it reads the tag again: still
 *       {@code g} means no reuse happened before the CAS, so the CAS landed on its own key (and if
 *       that key was evicted afterwards, the evictor retired the value it left, unit included). A
 *       changed tag leaves it open which key took the unit: the decision counts the unit as spent
 *       and decides again from scratch. A decision racing with the eviction and reuse of its own
 *       slot can thus charge one unit twice (once to a neighbour); it can never charge one less.
 *   <li>Reference tables: every state stored in a slot is a distinct object that is stored once
 *       (inserts store a fresh initial state, updates store new objects, never an earlier one), so
 *       a state object names one generation of one slot. A decision reads the state {@code S},
 *       checks the key, and reads the state again: {@code S} still there means it was there all
 *       along, so the key checked is {@code S}'s. Its {@code CAS(S, next)} succeeds only while
 *       {@code S} is there, i.e. on its own key.
 * </ul>
 *
 * <h2>Emptying tombstones</h2>
 * A tombstone whose next slot is empty lies on no key's probe path: a key is always placed in the
 * first free slot of its path, so every slot from a key's home to the key is occupied (by a key or a
 * tombstone) as long as the key is there, and a path that reaches an empty slot ends. So when an
 * eviction leaves a tombstone before an empty slot, it empties it and the run of tombstones before
 * it, under the lock: a lookup passing those slots was for an absent key either way (it stops one
 * slot earlier, or at the same place), and an insert looking for a free slot takes the same one or
 * an earlier one. Without this, at a full store every eviction whose victim lay past the new
 * key's first free slot left a tombstone, lookups that miss crossed them (a flood's every call
 * is one), and the table was rebuilt (a million keys copied under the lock) every half million new
 * keys. An emptied slot keeps its tag, so its generation keeps increasing when a key takes it.
 *
 * <h2>Growth</h2>
 * Inserts, evictions and rebuilds take {@link #lock}; decisions on tracked keys never do. When
 * live keys and tombstones that no insert reused together exceed {@link #MAX_LOAD_NUMERATOR}/{@link #MAX_LOAD_DENOMINATOR}
 * of the capacity, or live keys fall below one in {@link #SHRINK_FACTOR} slots, the table is rebuilt at
 * a capacity of at least {@link #REBUILD_SPACE} times the live keys (growing, purging tombstones, or
 * shrinking). A decision on a key that is being moved waits for the rebuild to finish: this
 * happens at most once per doubling, purge or shrink.
 *
 * <p>Thread-safe.
 */
final class PartitionTable {

  /** The key of an evicted slot: skipped by lookups, taken again by an insert on its probe path. */
  static final Object TOMBSTONE = new Object() {
    @Override
    public String toString() {
      return "TOMBSTONE";
    }
  };

  /** The word of a retired slot. No TAT can take this value: TATs are at least some {@code now}. */
  static final long RETIRED_WORD = Long.MIN_VALUE;

  /** The word of a slot copied into a rebuilt table. */
  static final long MOVED_WORD = Long.MIN_VALUE + 2;

  /** The state of a retired slot, for reference states. */
  static final Object RETIRED = new Object() {
    @Override
    public String toString() {
      return "RETIRED";
    }
  };

  /** The state of a slot copied into a rebuilt table, for reference states. */
  static final Object MOVED = new Object() {
    @Override
    public String toString() {
      return "MOVED";
    }
  };

  /** The smallest capacity, in slots. */
  static final int MIN_CAPACITY = 16;

  /** The largest capacity, in slots (a power of two that an array can hold). */
  static final int MAX_CAPACITY = 1 << 30;

  /** Numerator of the load (live keys plus tombstones over capacity) that triggers a rebuild. */
  static final int MAX_LOAD_NUMERATOR = 3;

  /** Denominator of the load that triggers a rebuild. */
  static final int MAX_LOAD_DENOMINATOR = 4;

  /** A rebuilt table has at least this many slots per live key, so that probe chains stay short. */
  static final int REBUILD_SPACE = 2;

  /**
   * A table with more than this many slots per live key is rebuilt smaller at the next insert: the
   * memory of a flood that has receded is given back (tombstones that would trigger a purge are
   * mostly emptied on the spot, so growth no longer comes with purges).
   */
  static final int SHRINK_FACTOR = 8;

  private static final VarHandle KEYS = MethodHandles.arrayElementVarHandle(Object[].class);
  private static final VarHandle TAGS = MethodHandles.arrayElementVarHandle(long[].class);
  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);
  private static final VarHandle REFS = MethodHandles.arrayElementVarHandle(Object[].class);

  /** Whether states are {@code long} words (GCRA) rather than references. */
  final boolean words;

  /** Guards inserts, evictions and rebuilds; never held by a decision on a tracked key. */
  final ReentrantLock lock = new ReentrantLock();

  private volatile Slots slots;

  /** Keys present (guarded by {@link #lock}). */
  private int live;

  /** Slots holding a key or a tombstone (guarded by {@link #lock}). */
  private int used;

  PartitionTable(boolean words) {
    this.words = words;
    this.slots = new Slots(MIN_CAPACITY, words);
  }

  /** The current arrays. A lookup in a stale {@link Slots} meets only moved or retired states. */
  Slots slots() {
    return slots;
  }

  /** Keys present now. */
  int live() {
    lock.lock();
    try {
      return live;
    } finally {
      lock.unlock();
    }
  }

  /** The arrays of one generation of the table. */
  static final class Slots {
    final Object[] keys;
    /**
     * Per slot: the hash code of its key in the low half, its generation in the high half. Written
     * before the key is published and changed only when an insert reuses the slot (a tombstone
     * keeps it). {@code null} for reference tables.
     */
    final long[] tags;
    /** One TAT per slot when the table holds words, else {@code null}. */
    final long[] words;
    /** One immutable state per slot when the table holds references, else {@code null}. */
    final Object[] refs;
    final int mask;
    private final int shift;

    Slots(int capacity, boolean words) {
      this.keys = new Object[capacity];
      this.tags = words ? new long[capacity] : null;
      this.words = words ? new long[capacity] : null;
      this.refs = words ? null : new Object[capacity];
      this.mask = capacity - 1;
      this.shift = 32 - Integer.numberOfTrailingZeros(capacity);
    }

    int capacity() {
      return keys.length;
    }

    /** The home slot of a hash: Fibonacci hashing spreads sequential string hashes. */
    int home(int hash) {
      return (hash * 0x9E3779B9) >>> shift;
    }

    /** The slot of {@code key}, or -1 when it is absent. Takes no lock. */
    int find(String key, int hash) {
      Object[] ks = keys;
      long[] hs = tags;
      int i = home(hash);
      for (;;) {
        Object k = KEYS.getAcquire(ks, i);
        if (k == key) {
          return i;
        }
        if (k == null) {
          return -1;
        }
        if (k != TOMBSTONE && sameHash(hs, i, k, hash) && ((String) k).equals(key)) {
          return i; // keys are Strings or the tombstone: a direct call, no dispatch
        }
        i = (i + 1) & mask;
      }
    }

    /**
     * The keys other than {@code key} whose {@code String} a lookup of {@code key} reads (same
     * stored hash, not the same instance), and the slots it passes, as {@code {strings, slots}}.
     * Walks exactly as {@link #find} does; for tests and diagnostics, not for decisions.
     */
    long[] probeCost(String key, int hash) {
      Object[] ks = keys;
      int i = home(hash);
      long strings = 0;
      long slots = 0;
      for (;;) {
        Object k = KEYS.getAcquire(ks, i);
        if (k == key || k == null) {
          return new long[] {strings, slots};
        }
        if (k != TOMBSTONE && (tags == null || (int) tags[i] == hash)) {
          if (((String) k).hashCode() == hash && ((String) k).equals(key)) {
            return new long[] {strings, slots};
          }
          strings++; // without a hash array, every key passed is read
        }
        slots++;
        i = (i + 1) & mask;
      }
    }

    /** Whether the key {@code k} at slot {@code i} has {@code hash}: the stored one if any. */
    private static boolean sameHash(long[] hs, int i, Object k, int hash) {
      return hs != null ? (int) hs[i] == hash : ((String) k).hashCode() == hash;
    }

    /** Whether slot {@code i} holds {@code key} now (acquire read of the key). */
    boolean holds(int i, String key) {
      Object k = KEYS.getAcquire(keys, i);
      return k == key || (k != TOMBSTONE && k != null && ((String) k).equals(key));
    }

    /** The tag of slot {@code i}: hash in the low half, generation in the high half (word tables). */
    long tag(int i) {
      return (long) TAGS.getVolatile(tags, i);
    }

    /** The key at slot {@code i}: a {@code String}, {@link #TOMBSTONE} or {@code null}. */
    Object key(int i) {
      return KEYS.getAcquire(keys, i);
    }

    long word(int i) {
      return (long) WORDS.getVolatile(words, i);
    }

    boolean casWord(int i, long expected, long next) {
      return WORDS.compareAndSet(words, i, expected, next);
    }

    Object ref(int i) {
      return REFS.getVolatile(refs, i);
    }

    boolean casRef(int i, Object expected, Object next) {
      return REFS.compareAndSet(refs, i, expected, next);
    }

    /**
     * Places a key known to be absent (under the lock, or before publication) in the first
     * tombstone or empty slot of its probe path. Returns the slot, negated minus one when a
     * tombstone was reused (so that the caller can keep its count of used slots).
     */
    private int place(String key, int hash, long word, Object ref) {
      int i = home(hash);
      Object k;
      while ((k = keys[i]) != null && k != TOMBSTONE) {
        i = (i + 1) & mask;
      }
      if (words != null) {
        long generation = (tags[i] >>> 32) + 1; // emptied tombstones keep their tag: never reuse one
        TAGS.setVolatile(tags, i, generation << 32 | (hash & 0xFFFF_FFFFL));
        WORDS.setVolatile(words, i, word);
      } else {
        REFS.setVolatile(refs, i, ref);
      }
      KEYS.setRelease(keys, i, key); // the state is visible to whoever sees the key
      return k == TOMBSTONE ? -i - 1 : i;
    }

    /**
     * Probe lengths of the keys present: {@code {longest, total, keys}}, where a key's length is
     * the number of slots from its home slot to its own (0 at home). For tests and diagnostics.
     */
    long[] probeLengths() {
      long longest = 0;
      long total = 0;
      long count = 0;
      for (int i = 0; i < keys.length; i++) {
        Object k = KEYS.getAcquire(keys, i);
        if (k == null || k == TOMBSTONE) {
          continue;
        }
        long length = (i - home(((String) k).hashCode())) & mask;
        longest = Math.max(longest, length);
        total += length;
        count++;
      }
      return new long[] {longest, total, count};
    }
  }

  /**
   * Adds {@code key} with the given initial state unless it is already present. Returns whether it
   * was added. Takes {@link #lock}.
   */
  boolean insert(String key, int hash, long initialWord, Object initialRef) {
    lock.lock();
    try {
      if (slots.find(key, hash) >= 0) {
        return false;
      }
      insertAbsent(key, hash, initialWord, initialRef);
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Adds {@code key}, known to be absent, with the given initial state (a reference state must be
   * an object no slot holds). Caller holds {@link #lock}.
   */
  void insertAbsent(String key, int hash, long initialWord, Object initialRef) {
    Slots s = slots;
    long capacity = s.capacity();
    if ((long) (used + 1) * MAX_LOAD_DENOMINATOR > capacity * MAX_LOAD_NUMERATOR
        || capacity > MIN_CAPACITY && (long) (live + 1) * SHRINK_FACTOR < capacity) {
      s = rebuild(live + 1);
    }
    if (s.place(key, hash, initialWord, initialRef) >= 0) {
      used++;
    }
    live++;
  }

  /** Keys present now; caller holds {@link #lock}. */
  int liveLocked() {
    return live;
  }

  /** Tombstones not yet reused; caller holds {@link #lock}. */
  int tombstones() {
    return used - live;
  }

  /**
   * Retires the word state {@code expected} of slot {@code i} and tombstones its key. Fails, and
   * changes nothing, when a decision changed the state first. Caller holds {@link #lock} and
   * {@code s} is current.
   */
  boolean retireWord(Slots s, int i, long expected) {
    if (!s.casWord(i, expected, RETIRED_WORD)) {
      return false;
    }
    bury(s, i);
    return true;
  }

  /** {@link #retireWord} for reference states. */
  boolean retireRef(Slots s, int i, Object expected) {
    if (!s.casRef(i, expected, RETIRED)) {
      return false;
    }
    bury(s, i);
    return true;
  }

  /**
   * Tombstones the key of the retired slot {@code i}, then empties the run of tombstones that ends
   * there when the next slot is empty (see "Emptying tombstones" above). Caller holds the lock.
   */
  private void bury(Slots s, int i) {
    KEYS.setRelease(s.keys, i, TOMBSTONE);
    live--;
    if (KEYS.getAcquire(s.keys, (i + 1) & s.mask) != null) {
      return;
    }
    for (int j = i; s.keys[j] == TOMBSTONE; j = (j - 1) & s.mask) {
      KEYS.setRelease(s.keys, j, null);
      used--;
    }
  }

  /**
   * Waits until no structural change (eviction or rebuild) is in progress on this table. A caller
   * that met a retired or moved state calls this and then looks its key up again.
   */
  void awaitStructure() {
    lock.lock();
    lock.unlock();
  }

  /**
   * Evicts the key at slot {@code i} of {@code s} if {@code test} says its state may go (or
   * unconditionally when {@code force}). Caller holds {@link #lock} and {@code s} is current.
   * Returns whether the key was evicted.
   */
  boolean evict(Slots s, int i, long now, StateTest test, boolean force) {
    Object k = s.keys[i];
    if (k == null || k == TOMBSTONE) {
      return false;
    }
    for (;;) {
      if (words) {
        long w = s.word(i);
        boolean expired = test.expiredWord(w, now);
        if (!force && !expired) {
          return false;
        }
        if (retireWord(s, i, w)) {
          return true;
        }
      } else {
        Object r = s.ref(i);
        boolean expired = test.expiredRef(r, now);
        if (!force && !expired) {
          return false;
        }
        if (retireRef(s, i, r)) {
          return true;
        }
      }
      // A decision changed the state in between: look at it again.
    }
  }

  /** Decides whether a state equals an absent key's at {@code now}. */
  interface StateTest {
    boolean expiredWord(long word, long now);

    boolean expiredRef(Object ref, long now);
  }

  /** Rebuilds for {@code need} live keys; caller holds {@link #lock}. */
  private Slots rebuild(int need) {
    Slots old = slots;
    long wanted = Math.max(MIN_CAPACITY, (long) need * REBUILD_SPACE);
    int capacity = wanted >= MAX_CAPACITY ? MAX_CAPACITY : Integer.highestOneBit((int) wanted - 1) << 1;
    if ((long) need * MAX_LOAD_DENOMINATOR > (long) capacity * MAX_LOAD_NUMERATOR) {
      throw new IllegalStateException("partition table: cannot hold " + need + " keys; expected at most "
          + (long) MAX_CAPACITY * MAX_LOAD_NUMERATOR / MAX_LOAD_DENOMINATOR);
    }
    Slots fresh = new Slots(capacity, words);
    int moved = 0;
    for (int i = 0; i < old.keys.length; i++) {
      Object k = old.keys[i];
      if (k == null || k == TOMBSTONE) {
        continue;
      }
      String key = (String) k;
      if (words) {
        long w;
        do {
          w = old.word(i);
        } while (!old.casWord(i, w, MOVED_WORD)); // freeze: later CAS on the old slot fail
        fresh.place(key, key.hashCode(), w, null); // generation 0: a fresh Slots has no stale reader
      } else {
        Object r;
        do {
          r = old.ref(i);
        } while (!old.casRef(i, r, MOVED));
        fresh.place(key, key.hashCode(), 0, r);
      }
      moved++;
    }
    used = moved;
    slots = fresh; // volatile write publishes the copied states
    return fresh;
  }
}
