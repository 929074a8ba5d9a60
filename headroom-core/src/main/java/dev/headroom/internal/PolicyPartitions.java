package dev.headroom.internal;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The keys of one policy name and algorithm in the in-memory store, the latest version of that
 * policy, and what the table remembers of the keys it evicted ({@link UseSketch}).
 *
 * <p>This class says, per algorithm, what a state at rest is (it equals an absent key's), how much
 * of its quota a state has consumed (the eviction order), how a live state is folded into the
 * sketch when its key is evicted, how a returning key's state is rebuilt from it, and the use at
 * which the policy refuses (answered by the sketch even for a key no cell names, see
 * {@link UseSketch}):
 * <ul>
 *   <li>Token bucket: the TAT; at rest when {@code TAT <= now}; consumed {@code (TAT - now) / tau};
 *       folded as the TAT, restored as the sketch's TAT when it is after now.
 *   <li>Fixed window: the count as of the current window (debt paid back by elapsed windows);
 *       consumed {@code count / q}; folded as that count until {@link FixedWindow#expiresAt};
 *       restored as that count in the current window.
 *   <li>Sliding window: consumed {@code estimate / q}; folded as {@code count + previous} (at least
 *       any estimate the state can give) until {@link SlidingWindow#expiresAt}; restored as that
 *       many units counted in the current window.
 *   <li>Concurrency: leases are never forgotten: folded as the units held until the last lease
 *       times out, restored as one lease of those units that no release names, so they come back
 *       only by timeout. Keys holding leases are evicted after every key that holds none
 *       (consumed {@code 1 + held / q}).
 * </ul>
 * Cost-weighted requests need nothing more: every value is in units.
 *
 * <h2>Where a new key's time goes</h2>
 * A decision on a held key reads three cache lines (slot key, tag, state), usually cached for the
 * keys in use. A new key kept out of a full store ({@link KeyAdmission}) reads the lines of its
 * lookup, one line of the {@link Doorkeeper} per filter and its four sketch cells (read before
 * the lock), and stores nothing. A new key entering a full store reads cold memory wherever it
 * goes: the lines of its own probe (keys, tags, states of the sample), the evicted key's string
 * (to hash it for the sketch), and the four sketch cells of the evicted key and the four of the
 * new one. These are independent
 * reads, so {@link LocalStore} takes them all <em>before</em> the table's lock: it hashes the new key
 * (with the table's seed, see {@link UseSketch#hash}), reads its cells, guesses the victim from
 * the same sample without the lock ({@link #guessVictim}), hashes the victim's
 * string and reads its cells. The locked part then redoes the sample and the eviction on lines
 * already in cache, and uses the victim's hash when it picks the same key object (a guess that
 * went stale costs a hash, never a wrong fold). Two threads flooding one policy thus overlap their
 * cache misses instead of queueing behind one another's. No object is allocated on this path but
 * the new key's initial state (window and concurrency policies) and what growth allocates.
 *
 * <p>Guarded by the table's {@link PartitionTable#lock} (eviction, sketch, counters), except
 * {@link #sketchHash}, {@link #warm} and {@link #guessVictim}, which only read and take no lock;
 * the policy field is volatile.
 */
final class PolicyPartitions implements PartitionTable.StateTest {

  /** The lease id of leases restored from the sketch: no release names it (ids start at 1). */
  static final long FORGOTTEN_LEASE = Long.MIN_VALUE;

  /**
   * How many keys one eviction samples to find a key at rest or the least consumed one: the keys of
   * the first {@link #SAMPLE_SLOTS} slots from the new key's home, the lines its lookup has just read.
   */
  static final int EVICTION_SAMPLE = 8;

  /**
   * How many slots from the new key's home an eviction sample looks at (unless all are empty): one
   * cache line of keys, two of states. A wider sample (it was 16 keys in up to 128 slots) reads
   * more cold lines per new key, and for window policies one cold state object per key sampled.
   */
  static final int SAMPLE_SLOTS = 16;

  /** A sweep looks at no more than this many slots (empty ones included) per key. */
  static final int SCAN_FACTOR = 8;

  /**
   * When a random sample holds no key at rest, this many keys from the sweep cursor are looked at
   * before a live key is evicted, as long as the cursor's last slice found some.
   */
  static final int CURSOR_SLICE = 64;

  final Algorithm algorithm;
  volatile QuotaPolicy policy;
  final PartitionTable partitions;
  private final int sketchWidth;
  /** The seed of {@link #sketchHash}: random per table, so that nobody can aim keys at a cell. */
  private final long sketchSeed = ThreadLocalRandom.current().nextLong();
  /** Guarded by partitions.lock; created on the first live eviction or key kept out. */
  private UseSketch forgotten;
  /** Created on the first key a full store decides from the sketch; read without the lock. */
  private Doorkeeper doorkeeper;
  private int sweepCursor; // guarded by partitions.lock
  /** Whether the last slice swept from the cursor found keys at rest (guarded by the lock). */
  private boolean cursorFindsRest = true;
  long insertions; // guarded by partitions.lock
  /** The insertion count at which the next periodic sweep runs (guarded by the lock). */
  long nextSweep = KeyAdmission.SWEEP_INTERVAL;
  /** New keys between periodic sweeps now: longer while sweeps find nothing (guarded by the lock). */
  int sweepInterval = KeyAdmission.SWEEP_INTERVAL;

  PolicyPartitions(QuotaPolicy policy, int sketchWidth) {
    this.algorithm = policy.algorithm();
    this.policy = policy;
    this.partitions = new PartitionTable(algorithm == Algorithm.TOKEN_BUCKET);
    this.sketchWidth = sketchWidth;
  }

  /** The state of a key never seen, for evaluation only: never stored (it is shared). */
  Object restingRef() {
    return algorithm == Algorithm.CONCURRENCY ? Concurrency.Leases.EMPTY : WindowState.EMPTY;
  }

  /** When a reference state will equal an absent key's. */
  long expiresAt(Object ref) {
    QuotaPolicy p = policy;
    switch (algorithm) {
      case FIXED_WINDOW:
        return FixedWindow.expiresAt(p, (WindowState) ref);
      case SLIDING_WINDOW:
        return SlidingWindow.expiresAt(p, (WindowState) ref);
      default:
        return Concurrency.expiresAt((Concurrency.Leases) ref);
    }
  }

  @Override
  public boolean expiredWord(long word, long now) {
    return Gcra.expiresAt(word) <= now;
  }

  @Override
  public boolean expiredRef(Object ref, long now) {
    return expiresAt(ref) <= now;
  }

  /** The share of its quota a live state has consumed at {@code now}; leases count above 1. */
  double consumed(long word, Object ref, long now) {
    QuotaPolicy p = policy;
    double q = p.quota();
    switch (algorithm) {
      case TOKEN_BUCKET:
        return ((double) word - (double) now) / (double) p.burstToleranceNanos(); // no long overflow
      case FIXED_WINDOW:
        return FixedWindow.roll((WindowState) ref, Math.floorDiv(now, p.window().toNanos()), p.quota()).count / q;
      case SLIDING_WINDOW: {
        long w = p.window().toNanos();
        long index = Math.floorDiv(now, w);
        WindowState s = SlidingWindow.roll((WindowState) ref, index);
        long elapsed = now - FixedWindow.windowStart(index, w);
        return Saturating.add(SlidingWindow.weightedPrevious(s.previous, w, elapsed), s.count) / q;
      }
      default:
        return 1 + ((Concurrency.Leases) ref).prune(now).held / q;
    }
  }

  // ---------------------------------------------------------------- the sketch

  private UseSketch sketch() {
    if (forgotten == null) {
      forgotten = new UseSketch(sketchWidth, partitions.words);
    }
    return forgotten;
  }

  /** The hash under which the sketch knows {@code key} ({@link UseSketch#hash}). Takes no lock. */
  long sketchHash(String key) {
    return UseSketch.hash(sketchSeed, key);
  }

  /**
   * Brings the sketch cells of {@code sketchHash} into cache without the lock (see
   * {@link UseSketch#warm}); nothing when the table has no sketch yet.
   */
  long warm(long sketchHash) {
    UseSketch f = forgotten; // racy: a sketch is safely published by its final fields
    return f == null ? 0 : f.warm(sketchHash);
  }

  /**
   * Remembers the live state of an evicted key whose sketch hash is {@code keyHash}. Caller holds
   * the lock.
   */
  void fold(long keyHash, long word, Object ref, long now) {
    if (partitions.words) {
      if (word > now) {
        sketch().fold(keyHash, word, word, now);
      }
      return;
    }
    QuotaPolicy p = policy;
    long value;
    long expiry;
    switch (algorithm) {
      case FIXED_WINDOW: {
        WindowState s = FixedWindow.roll((WindowState) ref, Math.floorDiv(now, p.window().toNanos()), p.quota());
        value = s.count;
        expiry = FixedWindow.expiresAt(p, s);
        break;
      }
      case SLIDING_WINDOW: {
        WindowState s = SlidingWindow.roll((WindowState) ref, Math.floorDiv(now, p.window().toNanos()));
        value = Saturating.add(s.count, s.previous);
        expiry = SlidingWindow.expiresAt(p, s);
        break;
      }
      default: {
        Concurrency.Leases live = ((Concurrency.Leases) ref).prune(now);
        value = live.held;
        expiry = live.latestExpiry();
        break;
      }
    }
    if (value > 0 && expiry > now) {
      sketch().fold(keyHash, value, expiry, now);
    }
  }

  /**
   * The TAT a key (sketch hash {@code keyHash}) starts from when it enters the table: what the
   * sketch remembers of it, or a full bucket. Caller holds the lock.
   */
  long startingWord(long keyHash, long now, long fullBucket) {
    if (forgotten == null) {
      return fullBucket;
    }
    QuotaPolicy p = policy;
    long refusing = Saturating.add(now, p.burstToleranceNanos() - p.emissionIntervalNanos() + 1); // refuses one unit now
    long tat = forgotten.read(keyHash, now, fullBucket, refusing);
    return tat > now ? tat : fullBucket;
  }

  /**
   * The state a key (sketch hash {@code keyHash}) starts from when it enters the table: what the
   * sketch remembers of it, or a state at rest. Always a new object (see {@link PartitionTable},
   * "Tombstone reuse"). Caller holds the lock.
   */
  Object startingRef(long keyHash, long now) {
    QuotaPolicy p = policy;
    long used = forgotten == null ? 0 : forgotten.read(keyHash, now, 0, p.quota());
    if (algorithm == Algorithm.CONCURRENCY) {
      if (used <= 0) {
        return new Concurrency.Leases(new long[0], new long[0], new long[0], 0);
      }
      long until = forgotten.expiry(keyHash);
      return new Concurrency.Leases(new long[] {FORGOTTEN_LEASE}, new long[] {used}, new long[] {until}, used);
    }
    if (used <= 0) {
      return new WindowState(Long.MIN_VALUE, 0, 0);
    }
    return new WindowState(Math.floorDiv(now, p.window().toNanos()), used, 0);
  }

  /** Whether a starting state came from the sketch (a state at rest did not). */
  boolean remembered(long word, Object ref) {
    if (partitions.words) {
      return word != LocalStore.EMPTY_TAT;
    }
    return ref instanceof WindowState ? ((WindowState) ref).count > 0 : ((Concurrency.Leases) ref).held > 0;
  }

  // ---------------------------------------------------------------- admission

  /**
   * Whether a new key of this table may be kept out of a full store (decided from the sketch, see
   * {@link LocalStore}, "Bounded memory"): every algorithm but concurrency, whose leases must stay
   * where a release finds them.
   */
  boolean filters() {
    return algorithm != Algorithm.CONCURRENCY;
  }

  /**
   * Whether the doorkeeper has lately recorded the key of {@code keyHash}: a key that comes back.
   * Takes no lock (a racy, heuristic answer; see {@link Doorkeeper}).
   */
  boolean returning(long keyHash) {
    Doorkeeper d = doorkeeper; // racy: a doorkeeper is safely published by its final fields
    return d != null && d.seen(keyHash);
  }

  /**
   * Whether the table's last sweep found keys at rest, so that room for a new key likely costs
   * nothing (a key at rest equals an absent one). Read without the lock: a heuristic.
   */
  boolean restLikely() {
    return cursorFindsRest;
  }

  /** Records a key decided from the sketch in the doorkeeper. Caller holds the lock. */
  void recordUntracked(long keyHash) {
    if (doorkeeper == null) {
      doorkeeper = new Doorkeeper(sketchWidth * UseSketch.KEYS_PER_CELL);
    }
    doorkeeper.add(keyHash);
  }

  // ---------------------------------------------------------------- eviction

  /** The keys at rest an eviction removed, from its packed result. */
  static int resting(long evicted) {
    return (int) (evicted >>> 32);
  }

  /** The live keys an eviction removed (0 or 1), from its packed result. */
  static int live(long evicted) {
    return (int) evicted;
  }

  private static long evicted(int resting, int live) {
    return (long) resting << 32 | live;
  }

  /**
   * Samples up to {@link #EVICTION_SAMPLE} keys from a random slot on and removes those at rest.
   * When none was at rest and {@code force}, removes the least consumed one, folding its state
   * into the sketch. Returns the keys removed at rest and live, packed (read them with
   * {@link #resting} and {@link #live}: no array per eviction). Caller holds the lock.
   */
  long evictSample(long now, boolean force) {
    return evictSample(now, force, ThreadLocalRandom.current().nextInt(), null, 0);
  }

  /**
   * {@link #evictSample(long, boolean)} from the home slot of {@code hash}: a key about to be
   * inserted samples its own neighbourhood, so that the slot it frees is usually on its own probe
   * path (taken at once, no tombstone left for the next rebuild) and the lines it reads are the
   * ones the insert reads next. Hashes are spread, so the sample is as random as a random slot.
   * When the victim is {@code guessed} (the same key object a {@link #guessVictim} outside the
   * lock chose), its sketch hash {@code guessedHash} is used instead of reading its string again.
   */
  long evictSample(long now, boolean force, int hash, Object guessed, long guessedHash) {
    PartitionTable.Slots s = partitions.slots();
    long scan = scan(s, s.home(hash), now, true);
    int resting = (int) (scan >>> 32);
    int victim = (int) scan;
    if (resting == 0 && cursorFindsRest) {
      resting = sweep(CURSOR_SLICE, now); // random samples miss the last few keys at rest; a cursor does not
    }
    if (resting > 0 || !force || victim < 0) {
      return evicted(resting, 0);
    }
    return evicted(0, evictLive(s, victim, now, guessed, guessedHash) ? 1 : 0);
  }

  /**
   * The slot of the key a full table would evict for a new key of {@code hash}, guessed without
   * the lock from the same sample {@link #evictSample} takes, or -1 when the sample holds a key at
   * rest (nothing live to evict) or no key. A guess: the caller reads that key's string and the
   * sketch cells before it takes the lock, so that the locked eviction finds them in cache.
   */
  int guessVictim(long now, int hash) {
    PartitionTable.Slots s = partitions.slots();
    long scan = scan(s, s.home(hash), now, false);
    return scan >>> 32 != 0 ? -1 : (int) scan;
  }

  /**
   * Looks at up to {@link #EVICTION_SAMPLE} keys from slot {@code start} on, in no more than
   * {@link #SAMPLE_SLOTS} slots (or until it has seen one key). When {@code retire} (caller holds the lock), removes the
   * keys at rest among them; else only counts them (no lock: states are read racily, and a retired
   * or moved one is skipped). Returns the number at rest in the high half and the slot of the least
   * consumed live key (-1 for none) in the low half.
   */
  private long scan(PartitionTable.Slots s, int start, long now, boolean retire) {
    PartitionTable pt = partitions;
    int capacity = s.capacity();
    int limit = SAMPLE_SLOTS;
    int seen = 0;
    int resting = 0;
    int victim = -1;
    long leastTat = Long.MAX_VALUE;
    double least = Double.MAX_VALUE;
    for (int scanned = 0; scanned < capacity && (seen < EVICTION_SAMPLE && scanned < limit || seen == 0);
        scanned++) {
      int i = (start + scanned) & s.mask;
      Object k = s.key(i);
      if (k == null || k == PartitionTable.TOMBSTONE) {
        continue;
      }
      seen++;
      if (pt.words) {
        long w = s.word(i);
        if (w <= now) { // retired and moved words too: they are far in the past
          resting += !retire || pt.retireWord(s, i, w) ? 1 : 0;
        } else if (w < leastTat) { // consumed (TAT - now) / tau: the earliest TAT is the least consumed
          leastTat = w;
          victim = i;
        }
        continue;
      }
      Object r = s.ref(i);
      if (r == PartitionTable.RETIRED || r == PartitionTable.MOVED) {
        continue; // only without the lock
      }
      if (expiresAt(r) <= now) {
        resting += !retire || pt.retireRef(s, i, r) ? 1 : 0;
        continue;
      }
      double c = consumed(0, r, now);
      if (c < least) {
        least = c;
        victim = i;
      }
    }
    return (long) resting << 32 | (victim & 0xFFFF_FFFFL);
  }

  /**
   * Removes the key at slot {@code i} whatever its state, folding a live state into the sketch
   * (under {@code guessedHash} when the key is {@code guessed}).
   */
  private boolean evictLive(PartitionTable.Slots s, int i, long now, Object guessed, long guessedHash) {
    PartitionTable pt = partitions;
    Object k = s.key(i);
    if (k == null || k == PartitionTable.TOMBSTONE) {
      return false;
    }
    long keyHash = k == guessed ? guessedHash : sketchHash((String) k);
    for (;;) { // a decision may change the state in between: retire what is there
      if (pt.words) {
        long w = s.word(i);
        if (pt.retireWord(s, i, w)) {
          fold(keyHash, w, null, now);
          return true;
        }
      } else {
        Object r = s.ref(i);
        if (pt.retireRef(s, i, r)) {
          fold(keyHash, 0, r, now);
          return true;
        }
      }
    }
  }

  /** Removes keys at rest among the next {@code budget} keys from the table's sweep cursor. */
  int sweep(int budget, long now) {
    PartitionTable pt = partitions;
    PartitionTable.Slots s = pt.slots();
    int capacity = s.capacity();
    int removed = 0;
    int seen = 0;
    for (int scanned = 0; scanned < capacity && seen < budget && scanned < budget * SCAN_FACTOR; scanned++) {
      int i = sweepCursor++ & s.mask;
      Object k = s.key(i);
      if (k == null || k == PartitionTable.TOMBSTONE) {
        continue;
      }
      seen++;
      removed += pt.evict(s, i, now, this, false) ? 1 : 0;
    }
    cursorFindsRest = removed > 0;
    return removed;
  }
}
