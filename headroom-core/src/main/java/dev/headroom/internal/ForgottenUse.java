package dev.headroom.internal;

/**
 * What a bounded store remembers of the keys it evicted while their state was live: a fixed-size
 * sketch that answers, for a key it remembers, an upper bound of the use the key had when it was
 * forgotten.
 *
 * <h2>How is this designed, and why?</h2>
 * A store that forgets a key's counter to make room gives that key a fresh quota when it comes
 * back: a flood of distinct keys would buy an extra quota for every caller it pushed out, refused
 * ones included. Remembering each forgotten key exactly would cost the memory the bound exists to
 * save. This sketch is a count-min sketch that keeps the <em>maximum</em> instead of the sum:
 * {@link #ROWS} rows of {@code width} cells; a key maps to one cell per row (from a seeded 64-bit
 * hash of its string); folding a key's use {@code v} in raises each of its cells to at least
 * {@code v}; reading a key answers the smallest of its cells. Every cell of a key is at least the
 * key's own use, so the answer is too: a returning key never starts below its forgotten use.
 *
 * <h2>Why each cell also names its key</h2>
 * A plain max-sketch answers every key, also one never seen, with the largest use among the keys
 * sharing its cells. Under a flood that is every key: a newcomer would start with some flood key's
 * use, add its own, and fold the sum back when it is evicted in turn; cell values would ratchet up
 * by one unit per round until the sketch refused everybody (measured: 200,000 one-request keys into
 * a store of 1,000 took every cell to a quota of 10). So each cell also keeps a 32-bit fingerprint
 * of the key whose value it holds (the key that raised it last; on a tie the key already there
 * keeps it), and a key is answered only when at least one of its cells carries its fingerprint.
 * Then a newcomer starts at rest (a false match needs a 32-bit fingerprint to collide: about one
 * newcomer in a billion), and a returning key that owns one of its cells gets exactly its own use
 * back: that cell holds it, and every other cell of the key holds at least as much. A key is
 * answered as new only if every one of its cells was taken by another key with at least its use
 * while its own use still mattered. For a key refused at its quota, that takes other keys at or
 * above the quota (or in debt) in all {@link #ROWS} of its cells: a flood of lighter keys cannot
 * do it, whatever its size. With {@code h} forgotten keys at least as heavy, the chance is about
 * {@code (1 - e^(-h/W))^4} for width {@code W}: 5 in 100 million for {@code h = 1,000} and
 * {@code W = 65,536}; 4 in 10,000 for {@code h = 10,000} (500,000 admitted requests of a 50-per-hour
 * policy). The hash is seeded per sketch, so nobody can aim keys at another key's cells.
 *
 * <h2>Cells expire</h2>
 * Each cell holds a value, its owner's expiry (when the owner's state would equal an absent key's:
 * end of the window, TAT, last lease timeout), and the latest expiry of every key folded into it.
 * Folding into an expired cell replaces it; folding into a live cell keeps the larger value (and
 * its owner) and the later expiry, so a cell stays at least every folded key's use for as long as
 * that use matters. A key with an expired cell has nothing remembered: its own use expired no later
 * than that cell; neither has a key whose owned cells' own expiries have passed. The
 * sketch thus never fills up for good: a window's worth of flood is gone when the window is. For a
 * token bucket the value (the TAT) is its own expiry: a TAT at or before now is a full bucket.
 *
 * <h2>What it costs and how wrong it can be upwards</h2>
 * Memory: {@code ROWS x width} cells of 28 bytes (12 for a token bucket), allocated on a table's
 * first live eviction. The store sizes {@code width} as {@code maxKeys / 16} rounded up to a power
 * of two within {@link #MIN_WIDTH}..{@link #MAX_WIDTH}: {@code maxKeys = 1,000,000} gives 65,536
 * cells per row, 7 MiB for a window policy and 3 MiB for a token bucket, against about 100 MB for
 * the million keys themselves. A returning key that owns one of its cells comes back with its own
 * use exactly when it owns the smallest of its cells, and with a neighbour's larger use otherwise
 * (another key raised one of its other cells higher and holds it longer): refused early, never
 * admitted extra. One that owns none comes back at rest, as above.
 *
 * <p>Not thread-safe: guarded by the lock of the {@link PartitionTable} it belongs to.
 */
final class ForgottenUse {

  /** Rows, i.e. cells per key: each row lowers the chance of a collision in all of them. */
  static final int ROWS = 4;

  /** The fewest cells per row. */
  static final int MIN_WIDTH = 1 << 10;

  /** The most cells per row. */
  static final int MAX_WIDTH = 1 << 16;

  /** The store's keys per cell of one row when sizing the sketch. */
  static final int KEYS_PER_CELL = 16;

  private final int mask;
  private final long seed;
  /** Per cell: the largest value folded in since the cell last expired. */
  private final long[] values;
  /**
   * Per cell: until when it must stay at least every key folded into it (the latest of their
   * expiries); {@code null} when values are their own expiry.
   */
  private final long[] expiries;
  /** Per cell: when the owner's own use stops mattering; {@code null} as {@link #expiries}. */
  private final long[] ownerExpiries;
  /** Per cell: the fingerprint of the key whose value the cell holds; 0 for none. */
  private final int[] owners;

  /**
   * A sketch of {@code width} cells per row (a power of two).
   *
   * @param selfExpiring whether a value is its own expiry (a TAT): no expiry array is kept
   */
  ForgottenUse(int width, boolean selfExpiring) {
    this.mask = width - 1;
    this.seed = java.util.concurrent.ThreadLocalRandom.current().nextLong();
    this.values = new long[ROWS * width];
    this.expiries = selfExpiring ? null : new long[ROWS * width];
    this.ownerExpiries = selfExpiring ? null : new long[ROWS * width];
    this.owners = new int[ROWS * width];
    if (selfExpiring) {
      java.util.Arrays.fill(values, Long.MIN_VALUE);
    } else {
      java.util.Arrays.fill(expiries, Long.MIN_VALUE);
    }
  }

  /** The width for a store of {@code maxKeys} keys. */
  static int widthFor(long maxKeys) {
    long wanted = Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, maxKeys / KEYS_PER_CELL));
    return (int) Long.highestOneBit(wanted - 1) << 1; // wanted >= MIN_WIDTH: rounds up to a power of two
  }

  /**
   * A seeded 64-bit hash of the key's characters (FNV-1a from the seed, then a finaliser),
   * independent of the 32-bit {@code String.hashCode} the tables use.
   */
  private long hash(String key) {
    long h = 0xcbf29ce484222325L ^ seed;
    for (int i = 0; i < key.length(); i++) {
      h = (h ^ key.charAt(i)) * 0x100000001b3L;
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    return h ^ (h >>> 33);
  }

  /** The key's fingerprint: never 0 (0 marks a cell nobody owns). */
  private static int fingerprint(long hash) {
    return (int) ((hash * 0x9E3779B97F4A7C15L) >>> 32) | 1;
  }

  /** The cell of {@code row} for {@code hash}: two halves of the hash, combined per row. */
  private int cell(long hash, int row) {
    int h1 = (int) hash;
    int h2 = (int) (hash >>> 32) | 1;
    return row * (mask + 1) + ((h1 + row * h2) & mask);
  }

  private boolean expired(int c, long now) {
    return expiries == null ? values[c] <= now : expiries[c] <= now;
  }

  /**
   * Remembers that {@code key} had used {@code value} until {@code expiry}. For a self-expiring
   * sketch {@code expiry} is ignored (the value is its expiry).
   */
  void fold(String key, long value, long expiry, long now) {
    long hash = hash(key);
    int fp = fingerprint(hash);
    for (int r = 0; r < ROWS; r++) {
      int c = cell(hash, r);
      boolean dead = expired(c, now);
      if (dead || value > values[c]) {
        values[c] = value;
        owners[c] = fp;
        if (expiries != null) {
          ownerExpiries[c] = expiry;
        }
      } else if (owners[c] == fp && expiries != null) {
        ownerExpiries[c] = Math.max(ownerExpiries[c], expiry); // its own earlier value is the larger
      }
      if (expiries != null) {
        expiries[c] = dead ? expiry : Math.max(expiries[c], expiry);
      }
    }
  }

  /**
   * An upper bound of the use remembered for {@code key} at {@code now}, or {@code rest} when
   * nothing live is remembered of it: no cell of the key carries its fingerprint with a use that
   * still matters. For a self-expiring sketch, a TAT after now, or {@code rest}.
   */
  long read(String key, long now, long rest) {
    long hash = hash(key);
    int fp = fingerprint(hash);
    long min = Long.MAX_VALUE;
    boolean owned = false;
    for (int r = 0; r < ROWS; r++) {
      int c = cell(hash, r);
      if (expired(c, now)) {
        return rest; // the key's own use expired no later than this cell
      }
      owned |= owners[c] == fp && (ownerExpiries == null || ownerExpiries[c] > now);
      min = Math.min(min, values[c]);
    }
    return owned ? min : rest;
  }

  /**
   * When the remembered use of {@code key} stops mattering: the latest own expiry among the cells
   * it owns. Meaningful only when {@link #read} found something.
   */
  long expiry(String key) {
    long hash = hash(key);
    int fp = fingerprint(hash);
    long latest = Long.MIN_VALUE;
    for (int r = 0; r < ROWS; r++) {
      int c = cell(hash, r);
      if (owners[c] == fp) {
        latest = Math.max(latest, ownerExpiries == null ? values[c] : ownerExpiries[c]);
      }
    }
    return latest;
  }
}
