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
 * ({@code int[]}, word tables only), and the state,
 * either one {@code long} per key ({@link #words}: the GCRA theoretical arrival time, the whole
 * state of a token bucket) or one reference to an immutable state per key (windows, leases).
 * A token bucket key thus costs 16 bytes per slot, 21 to 43 bytes per key at the load factors
 * used, and a decision touches three cache lines.
 *
 * <p>A probe compares the stored hash before it touches another key's {@code String}: a lookup
 * that passes a long run of other keys (runs grow with churn, as tombstones are not reused) then
 * costs reads of two arrays, not one likely cache miss per key passed. Reference tables (windows,
 * leases) keep no hash array: their 4 bytes per slot would take a fixed-window key past one fifth
 * of Bucket4j's memory (BENCHMARKS.md, "Memory per tracked key"), so they read the key's cached
 * {@code String} hash as before.
 *
 * <p>Keys are found by linear probing from a Fibonacci hash of {@code String.hashCode()} (cached in
 * the string). Lookups take no lock: a slot's key goes from {@code null} to a key to
 * {@link #TOMBSTONE} and never back within one {@link Slots}, so a reader that finds a key at a
 * slot has found that key's one and only slot, and a reader that misses a key being inserted
 * simply takes the insert path, which looks again under the lock.
 *
 * <h2>State transitions</h2>
 * A state is changed only by compare-and-set (volatile semantics: a decision happens-after every
 * decision it observed). Two reserved states end a slot's life: <em>retired</em> (evicted; the key
 * is then replaced by a tombstone) and <em>moved</em> (copied into a rebuilt table). A CAS that
 * meets either fails, and the caller looks the key up again through {@link #awaitStructure()}, so
 * no update is ever lost to eviction or to a rebuild. Tombstoned slots are never reused within a
 * {@link Slots}: a stale index held by a slow reader can therefore never point at another key's
 * state (no ABA).
 *
 * <h2>Growth</h2>
 * Inserts, evictions and rebuilds take {@link #lock}; decisions on tracked keys never do. When
 * live keys and tombstones together exceed {@link #MAX_LOAD_NUMERATOR}/{@link #MAX_LOAD_DENOMINATOR}
 * of the capacity, the table is rebuilt at a capacity of at least {@link #REBUILD_SPACE} times the
 * live keys (growing, purging tombstones, or shrinking). A decision on a key that is being moved
 * waits for the rebuild to finish: this happens at most once per doubling and once per purge.
 *
 * <p>Thread-safe.
 */
final class PartitionTable {

  /** The key of an evicted slot: skipped by lookups, never reused until the next rebuild. */
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

  private static final VarHandle KEYS = MethodHandles.arrayElementVarHandle(Object[].class);
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
     * The hash code of each slot's key, written before the key is published and never changed
     * within a {@code Slots} (a tombstone keeps it): a reader that saw a key sees its hash.
     * {@code null} for reference tables.
     */
    final int[] hashes;
    /** One TAT per slot when the table holds words, else {@code null}. */
    final long[] words;
    /** One immutable state per slot when the table holds references, else {@code null}. */
    final Object[] refs;
    final int mask;
    private final int shift;

    Slots(int capacity, boolean words) {
      this.keys = new Object[capacity];
      this.hashes = words ? new int[capacity] : null;
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
      int[] hs = hashes;
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
        if (k != TOMBSTONE && (hashes == null || hashes[i] == hash)) {
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
    private static boolean sameHash(int[] hs, int i, Object k, int hash) {
      return hs != null ? hs[i] == hash : ((String) k).hashCode() == hash;
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

    /** Places a key known to be absent (under the lock, or before publication). */
    private int place(String key, int hash, long word, Object ref) {
      int i = home(hash);
      while (keys[i] != null) {
        i = (i + 1) & mask;
      }
      if (words != null) {
        hashes[i] = hash;
        words[i] = word;
      } else {
        refs[i] = ref;
      }
      KEYS.setRelease(keys, i, key); // the state is visible to whoever sees the key
      return i;
    }
  }

  /**
   * Adds {@code key} with the given initial state unless it is already present. Returns whether it
   * was added. Takes {@link #lock}.
   */
  boolean insert(String key, int hash, long initialWord, Object initialRef) {
    lock.lock();
    try {
      Slots s = slots;
      if (s.find(key, hash) >= 0) {
        return false;
      }
      if ((long) (used + 1) * MAX_LOAD_DENOMINATOR > (long) s.capacity() * MAX_LOAD_NUMERATOR) {
        s = rebuild(live + 1);
      }
      s.place(key, hash, initialWord, initialRef);
      live++;
      used++;
      return true;
    } finally {
      lock.unlock();
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
      boolean expired;
      boolean retired;
      if (words) {
        long w = s.word(i);
        expired = test.expiredWord(w, now);
        retired = (force || expired) && s.casWord(i, w, RETIRED_WORD);
      } else {
        Object r = s.ref(i);
        expired = test.expiredRef(r, now);
        retired = (force || expired) && s.casRef(i, r, RETIRED);
      }
      if (retired) {
        KEYS.setRelease(s.keys, i, TOMBSTONE);
        live--;
        return true;
      }
      if (!force && !expired) {
        return false;
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
        fresh.place(key, key.hashCode(), w, null);
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
