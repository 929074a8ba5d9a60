package dev.headroom.internal;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The keys of one policy name and algorithm in the in-memory store, the latest version of that
 * policy, and what the table remembers of the keys it evicted ({@link ForgottenUse}).
 *
 * <p>This class says, per algorithm, what a state at rest is (it equals an absent key's), how much
 * of its quota a state has consumed (the eviction order), how a live state is folded into the
 * sketch when its key is evicted, how a returning key's state is rebuilt from it, and the use at
 * which the policy refuses (answered by the sketch even for a key no cell names, see
 * {@link ForgottenUse}):
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
 * <p>Guarded by the table's {@link PartitionTable#lock} (eviction, sketch, counters); the policy
 * field is volatile.
 */
final class PolicyPartitions implements PartitionTable.StateTest {

  /** The lease id of leases restored from the sketch: no release names it (ids start at 1). */
  static final long FORGOTTEN_LEASE = Long.MIN_VALUE;

  /** How many live keys one eviction samples to find a key at rest or the least consumed one. */
  static final int EVICTION_SAMPLE = 16;

  /** A sample or sweep looks at no more than this many slots (empty ones included) per key. */
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
  private ForgottenUse forgotten; // guarded by partitions.lock; created on the first live eviction
  private int sweepCursor; // guarded by partitions.lock
  /** Whether the last slice swept from the cursor found keys at rest (guarded by the lock). */
  private boolean cursorFindsRest = true;
  long insertions; // guarded by partitions.lock

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
        return ((double) word - (double) now) / (double) Gcra.tolerance(p); // no long overflow
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

  private ForgottenUse sketch() {
    if (forgotten == null) {
      forgotten = new ForgottenUse(sketchWidth, partitions.words);
    }
    return forgotten;
  }

  /** Remembers the live state of an evicted key. Caller holds the lock. */
  void fold(String key, long word, Object ref, long now) {
    if (partitions.words) {
      if (word > now) {
        sketch().fold(key, word, word, now);
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
      sketch().fold(key, value, expiry, now);
    }
  }

  /**
   * The TAT a key starts from when it enters the table: what the sketch remembers of it, or a
   * full bucket. Caller holds the lock.
   */
  long startingWord(String key, long now, long fullBucket) {
    if (forgotten == null) {
      return fullBucket;
    }
    QuotaPolicy p = policy;
    long refusing = Saturating.add(now, Gcra.tolerance(p) - Gcra.emissionInterval(p) + 1); // refuses one unit now
    long tat = forgotten.read(key, now, fullBucket, refusing);
    return tat > now ? tat : fullBucket;
  }

  /**
   * The state a key starts from when it enters the table: what the sketch remembers of it, or a
   * state at rest. Always a new object (see {@link PartitionTable}, "Tombstone reuse"). Caller
   * holds the lock.
   */
  Object startingRef(String key, long now) {
    QuotaPolicy p = policy;
    long used = forgotten == null ? 0 : forgotten.read(key, now, 0, p.quota());
    if (algorithm == Algorithm.CONCURRENCY) {
      if (used <= 0) {
        return new Concurrency.Leases(new long[0], new long[0], new long[0], 0);
      }
      long until = forgotten.expiry(key);
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

  // ---------------------------------------------------------------- eviction

  /**
   * Samples up to {@link #EVICTION_SAMPLE} keys from a random slot on and removes those at rest.
   * When none was at rest and {@code force}, removes the least consumed one, folding its state
   * into the sketch. Returns {@code {at rest removed, live removed}}. Caller holds the lock.
   */
  int[] evictSample(long now, boolean force) {
    return evictSample(now, force, ThreadLocalRandom.current().nextInt());
  }

  /**
   * {@link #evictSample(long, boolean)} from the home slot of {@code hash}: a key about to be
   * inserted samples its own neighbourhood, so that the slot it frees is usually on its own probe
   * path (taken at once, no tombstone left for the next rebuild) and the lines it reads are the
   * ones the insert reads next. Hashes are spread, so the sample is as random as a random slot.
   */
  int[] evictSample(long now, boolean force, int hash) {
    PartitionTable pt = partitions;
    PartitionTable.Slots s = pt.slots();
    int capacity = s.capacity();
    int start = s.home(hash);
    int limit = EVICTION_SAMPLE * SCAN_FACTOR;
    int seen = 0;
    int resting = 0;
    int victim = -1;
    double least = Double.MAX_VALUE;
    for (int scanned = 0; scanned < capacity && (seen < EVICTION_SAMPLE && scanned < limit || seen == 0);
        scanned++) {
      int i = (start + scanned) & s.mask;
      Object k = s.key(i);
      if (k == null || k == PartitionTable.TOMBSTONE) {
        continue;
      }
      seen++;
      double c;
      if (pt.words) {
        long w = s.word(i);
        if (w <= now) {
          resting += pt.retireWord(s, i, w) ? 1 : 0;
          continue;
        }
        c = consumed(w, null, now);
      } else {
        Object r = s.ref(i);
        if (expiresAt(r) <= now) {
          resting += pt.retireRef(s, i, r) ? 1 : 0;
          continue;
        }
        c = consumed(0, r, now);
      }
      if (c < least) {
        least = c;
        victim = i;
      }
    }
    if (resting == 0 && cursorFindsRest) {
      resting = sweep(CURSOR_SLICE, now); // random samples miss the last few keys at rest; a cursor does not
    }
    if (resting > 0 || !force || victim < 0) {
      return new int[] {resting, 0};
    }
    return new int[] {0, evictLive(s, victim, now) ? 1 : 0};
  }

  /** Removes the key at slot {@code i} whatever its state, folding a live state into the sketch. */
  private boolean evictLive(PartitionTable.Slots s, int i, long now) {
    PartitionTable pt = partitions;
    Object k = s.key(i);
    if (k == null || k == PartitionTable.TOMBSTONE) {
      return false;
    }
    for (;;) { // a decision may change the state in between: retire what is there
      if (pt.words) {
        long w = s.word(i);
        if (pt.retireWord(s, i, w)) {
          fold((String) k, w, null, now);
          return true;
        }
      } else {
        Object r = s.ref(i);
        if (pt.retireRef(s, i, r)) {
          fold((String) k, 0, r, now);
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
