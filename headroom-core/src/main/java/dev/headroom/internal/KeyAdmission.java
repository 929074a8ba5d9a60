package dev.headroom.internal;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongUnaryOperator;
import java.util.function.UnaryOperator;

/**
 * What enters the tables of a bounded {@link LocalStore}, what leaves them, and how a key kept out
 * is decided: the store's bound on tracked keys, its admission filter and its eviction.
 *
 * <h2>Admission: a full store keeps one-request keys out</h2>
 * While the store has room, every new key enters its table. At a full store, a new key of a rate
 * policy (token bucket, fixed or sliding window) enters only when it comes back: the first time,
 * it is decided from its table's {@link UseSketch} sketch, under the table's lock, exactly as the
 * table would decide from the state the key would start from there (what the sketch remembers
 * of it, else at rest), and the use after the decision is folded back into the sketch, as if the
 * key had entered and been evicted at once; the table's {@link Doorkeeper} records it. A key the
 * doorkeeper has recorded enters the table the next time (evicting as below), starting from what
 * the sketch remembers. This is TinyLFU's admission filter (its doorkeeper, then the sketch): a
 * flood of distinct keys costs a lookup that misses, a hash, the doorkeeper's line and the four
 * sketch cells per call, and stores nothing; the keys in the tables stay, with their exact states.
 * Not kept out: a key of a concurrency policy (its lease must stay where a release finds it), and
 * any new key while its table's last sweep found keys at rest (room then costs nothing).
 *
 * <p>A decision from the sketch and a key's entry into its table both happen under the table's
 * lock, after a lookup under that lock has found the key absent; a key absent from its table has
 * no state but the sketch's. So each key's decisions are serialised through one state at a time,
 * the table's or the sketch's, and the sketch errs only upwards ({@link UseSketch}): a key kept
 * out is never admitted more than the table would have admitted it.
 *
 * <h2>Eviction</h2>
 * When a key enters a full store, its own table ({@link PolicyPartitions}) samples up to {@link
 * PolicyPartitions#EVICTION_SAMPLE} keys in the {@link PolicyPartitions#SAMPLE_SLOTS} slots from the
 * new key's home on (hashes are spread, so the sample is random; the lines are the ones the new
 * key's lookup has just read): the keys at rest among them are removed; if none was, one other
 * table is sampled for keys at rest; only then is the <em>least consumed</em> live key of the
 * sample evicted (share of its quota used; lease holders last), and its state is folded into the
 * table's sketch.
 *
 * <p>Eviction takes only the lock of the table that loses the key, the same lock an insert into
 * that table takes anyway (a new key evicts from its own table first, within one critical
 * section); another table is only ever tried with {@code tryLock}, so there is no global evictor
 * and no lock order to deadlock on. An evicted key's state is first retired by CAS, so a decision
 * racing with the eviction either lands before it (and is folded with the state) or sees the
 * retirement and starts again on the returning key: no update is lost. A new key reserves its
 * place in {@link #size} under its table's lock right before it enters the table, so inserts racing
 * at a full store never take the count above {@code maxKeys}; a place freed by its own eviction
 * is taken at once. Every {@link #SWEEP_INTERVAL} new keys of a table (entered or kept out), the
 * thread holding its lock also removes keys at rest among the next {@link #SWEEP_SLICE} keys of
 * that table; a sweep that finds none doubles the interval to the next (up to
 * {@link #MAX_SWEEP_INTERVAL}), one that finds some resets it.
 *
 * <h2>What the counters count</h2>
 * <ul>
 *   <li>{@link #size}: keys in the tables now, each with its exact state; at most {@code maxKeys}.
 *       A key kept out is not in it.
 *   <li>{@link #evictedResting}: keys at rest removed from a table (to make room, or by a sweep).
 *   <li>{@link #evictedLive}: live keys removed from a table to make room for a key that entered,
 *       each folded into the sketch. Under a flood of one-request keys this stays near zero (a key
 *       the doorkeeper wrongly takes for a returning one enters and evicts, at most about one in a
 *       hundred).
 *   <li>{@link #restored}: keys that entered a table starting from the use the sketch remembered.
 *   <li>{@link #untracked}: decisions (and charges) made from the sketch for keys kept out: one per
 *       call of a one-request key at a full store.
 * </ul>
 * How a new key's cache misses are taken before the lock: {@link PolicyPartitions}, "Where a new
 * key's time goes".
 */
final class KeyAdmission {

  /** Every this many new keys in a table, the thread holding its lock sweeps a slice of it for keys at rest. */
  static final int SWEEP_INTERVAL = 1024;

  /** How many keys one periodic sweep looks at. */
  static final int SWEEP_SLICE = 256;

  /** The longest interval, in new keys, between sweeps that keep finding nothing at rest. */
  static final int MAX_SWEEP_INTERVAL = 64 * SWEEP_INTERVAL;

  /** A value the warming reads of {@link #add} are compared with, so that they are not dropped. */
  private static final long WARMTH_NEVER = 0x5EED_5EED_5EED_5EEDL;

  private final long maxKeys;
  private final List<PolicyPartitions> tables;
  final AtomicLong size = new AtomicLong();
  final LongAdder evictedResting = new LongAdder();
  final LongAdder evictedLive = new LongAdder();
  final LongAdder restored = new LongAdder();
  final LongAdder untracked = new LongAdder();

  /** Admission to the {@code tables} (the store's list, which grows) of a store of {@code maxKeys}. */
  KeyAdmission(long maxKeys, List<PolicyPartitions> tables) {
    this.maxKeys = maxKeys;
    this.tables = tables;
  }

  /**
   * Puts a key absent from {@code t} (sketch hash {@code keyHash}) in the table, if it enters:
   * when the store has room, when its table does not filter ({@link PolicyPartitions#filters}),
   * when the doorkeeper saw it lately (it comes back), or, in place of keys at rest only, when its
   * table's last sweep found some (making room costs nothing). Returns whether the key is in the
   * table now; otherwise the caller decides it from the sketch. The path is chosen without the
   * lock: a racy choice costs time, never a wrong decision (see "Admission" above).
   */
  private boolean enter(PolicyPartitions t, String key, int hash, long keyHash, long now) {
    if (size.get() < maxKeys || !t.filters() || t.returning(keyHash)) {
      return add(t, key, hash, keyHash, now, true);
    }
    return t.restLikely() && add(t, key, hash, keyHash, now, false);
  }

  /**
   * Adds {@code key} (sketch hash {@code keyHash}) to the table unless present, within the bound on
   * tracked keys, starting from what the table's sketch remembers of it; at a full store, in place
   * of keys at rest, and of a live key only when {@code evictLive}. Returns whether the key is in
   * the table now. At a full store, the cache misses of the eviction are taken before the lock
   * ({@link PolicyPartitions}, "Where a new key's time goes").
   */
  private boolean add(PolicyPartitions t, String key, int hash, long keyHash, long now, boolean evictLive) {
    PartitionTable pt = t.partitions;
    Object guessed = null;
    long guessedHash = 0;
    long warmth = 0;
    if (evictLive && size.get() >= maxKeys) {
      warmth = t.warm(keyHash); // first: independent of the reads below, so they overlap
      int v = t.guessVictim(now, hash);
      Object k = v < 0 ? null : pt.slots().key(v);
      if (k instanceof String) {
        guessed = k;
        guessedHash = t.sketchHash((String) k);
        warmth ^= t.warm(guessedHash);
      }
    }
    pt.lock.lock();
    try {
      if (pt.slots().find(key, hash) >= 0) {
        return true; // another thread added it
      }
      if (!reserve(t, now, hash, guessed, guessedHash, evictLive)) {
        return false;
      }
      try {
        long word = pt.words ? t.startingWord(keyHash, now, LocalStore.EMPTY_TAT) : 0;
        Object ref = pt.words ? null : t.startingRef(keyHash, now);
        pt.insertAbsent(key, hash, word, ref);
        if (t.remembered(word, ref)) {
          restored.increment();
        }
      } catch (RuntimeException | Error e) {
        size.decrementAndGet();
        throw e;
      }
      newKey(t, now);
    } finally {
      pt.lock.unlock();
    }
    if (warmth == WARMTH_NEVER) {
      Thread.onSpinWait(); // never taken: keeps the warming reads from being optimised away
    }
    return true;
  }

  /**
   * Counts a new key of {@code t} (added, or decided from the sketch) and, every
   * {@link PolicyPartitions#sweepInterval} of them, sweeps a slice of the table for keys at rest.
   * Caller holds the lock.
   */
  private void newKey(PolicyPartitions t, long now) {
    if (++t.insertions >= t.nextSweep) {
      int removed = t.sweep(SWEEP_SLICE, now);
      // A sweep that finds nothing at rest is wasted on a flood of live keys: back off.
      t.sweepInterval = removed > 0 ? SWEEP_INTERVAL : Math.min(MAX_SWEEP_INTERVAL, t.sweepInterval * 2);
      t.nextSweep = t.insertions + t.sweepInterval;
      size.addAndGet(-removed);
      evictedResting.add(removed);
    }
  }

  // ---------------------------------------------------------------- keys kept out: the sketch decides

  /** What {@link #tryAbsent} answers when the key is in its table now: decide there. */
  static final int IN_TABLE = -1;

  /**
   * {@link LocalStore#tryAcquire} for a key its table lacks: puts it in the table ({@link #enter})
   * and answers {@link #IN_TABLE}, or keeps it out and answers the decision from the sketch, 1
   * (allowed) or 0 (refused).
   */
  int tryAbsent(Binding b, String key, int hash, long now, long cost) {
    long keyHash = b.table.sketchHash(key);
    return enter(b.table, key, hash, keyHash, now) ? IN_TABLE : tryUntracked(b, key, hash, keyHash, now, cost);
  }

  /** {@link #tryAbsent} for {@code LocalStore.commit}: the evaluation, or {@code null} for in the table. */
  Evaluation commitAbsent(Binding b, String key, int hash, long now, long cost) {
    long keyHash = b.table.sketchHash(key);
    return enter(b.table, key, hash, keyHash, now) ? null : commitUntracked(b, key, hash, keyHash, now, cost);
  }

  /** {@link #tryAbsent} for {@link LocalStore#charge}: whether the change was made in the sketch. */
  boolean updateAbsent(Binding b, String key, int hash, long now,
      UnaryOperator<Object> refFunction, LongUnaryOperator wordFunction) {
    long keyHash = b.table.sketchHash(key);
    return !enter(b.table, key, hash, keyHash, now)
        && updateUntracked(b, key, hash, keyHash, now, refFunction, wordFunction);
  }

  /**
   * Takes the lock of {@code t} for a decision from the sketch on a key kept out of the table, its
   * sketch cells read first (outside the lock, see {@link UseSketch#warm}). Returns false, lock
   * released, when the key is in the table now: the caller decides there. Every caller releases
   * the lock through {@link #unlockUntracked}.
   */
  private boolean lockUntracked(PolicyPartitions t, String key, int hash, long keyHash) {
    long warmth = t.warm(keyHash);
    PartitionTable pt = t.partitions;
    pt.lock.lock();
    if (pt.slots().find(key, hash) < 0) {
      if (warmth == WARMTH_NEVER) {
        Thread.onSpinWait(); // never taken: keeps the warming reads from being optimised away
      }
      return true;
    }
    pt.lock.unlock();
    return false;
  }

  /** Records a decision from the sketch (doorkeeper, counters, sweep) and releases the lock. */
  private void unlockUntracked(PolicyPartitions t, long keyHash, long now) {
    try {
      t.recordUntracked(keyHash);
      untracked.increment();
      newKey(t, now);
    } finally {
      t.partitions.lock.unlock();
    }
  }

  /**
   * {@link LocalStore#tryAcquire} for a key kept out of a full store: decided from what the sketch remembers
   * of it, exactly as the table would decide from the state it would start from, and the use
   * after the decision folded back. Returns 1 (allowed), 0 (refused) or {@link #IN_TABLE}.
   * Allocates nothing for a token bucket.
   */
  private int tryUntracked(Binding b, String key, int hash, long keyHash, long now, long cost) {
    PolicyPartitions t = b.table;
    if (!lockUntracked(t, key, hash, keyHash)) {
      return IN_TABLE;
    }
    boolean allowed;
    try {
      if (b.words) {
        long tat = t.startingWord(keyHash, now, LocalStore.EMPTY_TAT);
        long next = b.tryTat(tat, now, cost);
        allowed = next != Long.MIN_VALUE;
        if (allowed) {
          t.fold(keyHash, next, null, now);
        }
      } else {
        WindowState next = FixedWindow.tryAcquire((WindowState) t.startingRef(keyHash, now), now, cost,
            b.windowNanos, b.quota);
        allowed = next != null;
        if (allowed) {
          t.fold(keyHash, 0, next, now);
        }
      }
    } finally {
      unlockUntracked(t, keyHash, now);
    }
    return allowed ? 1 : 0;
  }

  /**
   * {@code LocalStore.commit} for a key kept out of a full store ({@link #tryUntracked}): the evaluation, or
   * {@code null} when the key entered the table meanwhile. Never called for concurrency policies.
   */
  private Evaluation commitUntracked(Binding b, String key, int hash, long keyHash, long now, long cost) {
    PolicyPartitions t = b.table;
    if (!lockUntracked(t, key, hash, keyHash)) {
      return null;
    }
    try {
      if (b.words) {
        long tat = t.startingWord(keyHash, now, LocalStore.EMPTY_TAT);
        long next = b.tryTat(tat, now, cost);
        if (next != Long.MIN_VALUE) {
          t.fold(keyHash, next, null, now);
        }
        return b.evaluateTat(tat, now, cost);
      }
      Object state = t.startingRef(keyHash, now);
      Evaluation e = b.evaluateRef(state, now, cost, 0);
      if (e.allowed) {
        t.fold(keyHash, 0, e.state, now);
      }
      return e;
    } finally {
      unlockUntracked(t, keyHash, now);
    }
  }

  /**
   * An unconditional change ({@link LocalStore#charge}) of a key kept out of a full store: applied to the
   * state the sketch remembers and folded back. Returns false when the key entered the table
   * meanwhile.
   */
  private boolean updateUntracked(Binding b, String key, int hash, long keyHash, long now,
      UnaryOperator<Object> refFunction, LongUnaryOperator wordFunction) {
    PolicyPartitions t = b.table;
    if (!lockUntracked(t, key, hash, keyHash)) {
      return false;
    }
    try {
      if (b.words) {
        t.fold(keyHash, wordFunction.applyAsLong(t.startingWord(keyHash, now, LocalStore.EMPTY_TAT)), null, now);
      } else {
        t.fold(keyHash, 0, refFunction.apply(t.startingRef(keyHash, now)), now);
      }
      return true;
    } finally {
      unlockUntracked(t, keyHash, now);
    }
  }

  /**
   * Takes one place in {@link #size}, evicting first when the store is full: from {@code t}, whose
   * lock the caller holds, else from another table whose lock is free. A place freed by an eviction
   * is taken at once, without giving it back to {@link #size} first (two atomic updates of a
   * shared counter fewer per new key at a full store). Unless {@code evictLive}, only keys at rest
   * are removed, and it returns false, taking nothing, when the places it looked held none.
   */
  private boolean reserve(PolicyPartitions t, long now, int hash, Object guessed, long guessedHash, boolean evictLive) {
    for (;;) {
      long n = size.get();
      if (n < maxKeys) {
        if (size.compareAndSet(n, n + 1)) {
          return true;
        }
        continue;
      }
      int removed = 0;
      if (t.partitions.liveLocked() > 0) {
        boolean alone = tables.size() < 2;
        removed = count(t.evictSample(now, alone && evictLive, hash, guessed, guessedHash));
        if (removed == 0 && !alone) {
          removed = evictElsewhere(t, now, false); // a key at rest elsewhere costs less than a live one here
          if (removed == 0 && evictLive) {
            removed = count(t.evictSample(now, true, hash, guessed, guessedHash));
          }
        }
      } else {
        removed = evictElsewhere(t, now, evictLive);
      }
      if (removed > 0) {
        if (removed > 1) {
          size.addAndGet(1 - removed);
        }
        return true; // one of the places freed is this key's
      }
      if (!evictLive) {
        return false; // no key at rest where it looked: the caller keeps the key out
      }
      Thread.onSpinWait(); // the keys are in tables busy with inserts of their own: they end soon
    }
  }

  /** Counts an eviction's result (see {@link PolicyPartitions#evictSample}); returns the keys removed. */
  private int count(long evicted) {
    int resting = PolicyPartitions.resting(evicted);
    int live = PolicyPartitions.live(evicted);
    if (resting > 0) {
      evictedResting.add(resting);
    }
    if (live > 0) {
      evictedLive.add(live);
    }
    return resting + live;
  }

  /**
   * Samples one other table whose lock is free (keys at rest only, unless {@code force} and the
   * table has no other choice). Counts what it removed; returns how many.
   */
  private int evictElsewhere(PolicyPartitions t, long now, boolean force) {
    int n = tables.size();
    if (n < 2) {
      return 0;
    }
    int start = ThreadLocalRandom.current().nextInt(n);
    for (int j = 0; j < n; j++) {
      PolicyPartitions other = tables.get((start + j) % n);
      if (other == t || !other.partitions.lock.tryLock()) {
        continue;
      }
      try {
        if (other.partitions.liveLocked() == 0) {
          continue;
        }
        int removed = count(other.evictSample(now, force));
        if (removed > 0 || !force) {
          return removed;
        }
      } finally {
        other.partitions.lock.unlock();
      }
    }
    return 0;
  }
}
