package dev.headroom.internal;

/**
 * What a bounded store remembers of the keys it evicted while their state was live: a fixed-size
 * sketch that answers, for a key it remembers, an upper bound of the use the key had when it was
 * forgotten.
 *
 * <h2>How is this designed, and why?</h2>
 * A store that forgets a key's counter to make room (or keeps a new key out of a full store, see
 * {@link KeyAdmission}) gives that key a fresh quota when it comes back: a flood of distinct keys
 * would buy an extra quota for every caller it pushed out, refused ones included. Remembering
 * each forgotten key exactly would cost the memory the bound exists to save. This sketch is a
 * count-min sketch that keeps the <em>maximum</em> instead of the sum:
 * {@link #ROWS} rows of {@code width} cells; a key maps to one cell per row (from a seeded 64-bit
 * hash of its string); folding a key's use {@code v} in raises each of its cells to at least
 * {@code v}; reading a key answers the smallest of its cells. Every cell of a key is at least the
 * key's own use, so the answer is too: a returning key never starts below its forgotten use.
 *
 * <h2>Why each cell also names its keys</h2>
 * A plain max-sketch answers every key, also one never seen, with the largest use among the keys
 * sharing its cells. Under a flood that is every key: a newcomer would start with some flood key's
 * use, add its own, and fold the sum back when it is evicted in turn; cell values would ratchet up
 * by one unit per round until the sketch refused everybody (measured: 200,000 one-request keys into
 * a store of 1,000 took every cell to a quota of 10). So each cell also keeps the 32-bit
 * fingerprints of the last two keys whose value it holds (a larger value replaces both; an equal
 * one pushes the older out), and a key is answered:
 * <ul>
 *   <li>with the smallest of its cells when one of them names it: that cell holds exactly its own
 *       use and the others at least as much, so it gets its own use back (or a neighbour's larger
 *       use that outlives its own: refused early, never admitted extra);
 *   <li>else with the smallest of its cells when that is at least {@code refusing}, the use at
 *       which its policy refuses (the quota; for a token bucket, the TAT that refuses one unit now);
 *   <li>else as a new key, at rest.
 * </ul>
 * <b>Guarantee for refused keys</b>: a key forgotten with a use that refuses comes back refusing
 * until that use expires. Either a cell still names it, or every cell was taken by keys with at
 * least its use, so every cell holds at least the refusing use. This holds whatever the flood.
 *
 * <p>A key below its quota gets its own use back unless each of its four cells was taken by
 * strictly heavier keys, or by two later keys of equal use, while its use still mattered; it then
 * starts at rest. With {@code h} such keys forgotten in a window and width {@code W}, the chance
 * is about {@code (h/W)^4} for heavier keys and {@code ((h/W)^2 / 2)^4} for equal ones:
 * 5 in 100 million for 1,000 heavier keys at {@code W = 65,536}, and far less for equal ones. A
 * newcomer starts at rest unless a 32-bit fingerprint collides (about one in a billion) or all four
 * of its cells hold refusing uses (chance {@code (r/W)^4} for {@code r} refused keys forgotten in the
 * window): the only collateral of a flood, and only of an expensive one (each refused key costs the
 * flood a full quota). No ratchet: a newcomer starts at rest, and a returning key adds its own use
 * to its own use. The hash is seeded per table, so nobody can aim keys at another key's cells.
 *
 * <h2>Cells expire</h2>
 * Each cell holds a value, its owners' expiry (when their state would equal an absent key's: end
 * of the window, TAT, last lease timeout), and the latest expiry of every key folded into it.
 * Folding into an expired cell replaces it; folding into a live cell keeps the larger value (and
 * its owners) and the later expiry, so a cell stays at least every folded key's use for as long as
 * that use matters. A key with an expired cell has nothing remembered: its own use expired no later
 * than that cell; neither is a key named by a cell whose owners' expiry has passed. The
 * sketch thus never fills up for good: a window's worth of flood is gone when the window is. For a
 * token bucket the value (the TAT) is its own expiry: a TAT at or before now is a full bucket.
 *
 * <h2>What it costs</h2>
 * Memory: {@code ROWS x width} cells of 32 bytes (16 for a token bucket), one cell's fields side
 * by side so that a cell is one cache line visit, allocated on a table's first live eviction (or
 * first key kept out). The four cells of a key are four independent cache misses; the store takes them before it takes the
 * table's lock ({@link #warm}), so the locked fold and read find them cached. A blocked layout (a
 * key's four cells in one line) would make them one miss, but four cells in a line are four cells
 * every key of that line shares: a below-quota key would then lose its use when one heavier key
 * shared its line (about {@code h/B} for {@code h} such keys and {@code B} lines), not all four of
 * its rows ({@code (h/W)^4} above), for a miss that costs no latency once taken in parallel. The
 * store sizes {@code width} as {@code maxKeys / 16} rounded up to a power of two within
 * {@link #MIN_WIDTH}..{@link #MAX_WIDTH}: {@code maxKeys = 1,000,000} gives 65,536 cells per row,
 * 8 MiB for a window or concurrency policy and 4 MiB for a token bucket, against about 100 MB for
 * the million keys themselves; {@code maxKeys = 1,000} gives 4,096 cells per row, 512 KiB.
 *
 * <p>Not thread-safe: guarded by the lock of the {@link PartitionTable} it belongs to.
 */
final class UseSketch {

  /** Rows, i.e. cells per key: each row lowers the chance of a collision in all of them. */
  static final int ROWS = 4;

  /** The fewest cells per row. */
  static final int MIN_WIDTH = 1 << 12;

  /** The most cells per row. */
  static final int MAX_WIDTH = 1 << 16;

  /** The store's keys per cell of one row when sizing the sketch. */
  static final int KEYS_PER_CELL = 16;

  private final int mask;
  /** Longs per cell: value, owners, then (unless self-expiring) cell expiry and owners' expiry. */
  private final int stride;
  /**
   * The cells, {@link #stride} longs each: the largest value folded in since the cell last
   * expired; the fingerprints of its last two owners (newest in the low half, 0 for none); until
   * when it must stay at least every key folded into it; until when its owners' use matters.
   */
  private final long[] cells;

  /**
   * A sketch of {@code width} cells per row (a power of two).
   *
   * @param selfExpiring whether a value is its own expiry (a TAT): no expiries are kept
   */
  UseSketch(int width, boolean selfExpiring) {
    this.mask = width - 1;
    this.stride = selfExpiring ? 2 : 4;
    this.cells = new long[ROWS * width * stride];
    for (int c = 0; c < cells.length; c += stride) {
      cells[c] = Long.MIN_VALUE; // a TAT long past; for windows, the expiries below decide
      if (!selfExpiring) {
        cells[c + 2] = Long.MIN_VALUE;
        cells[c + 3] = Long.MIN_VALUE;
      }
    }
  }

  /** The width for a store of {@code maxKeys} keys. */
  static int widthFor(long maxKeys) {
    long wanted = Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, maxKeys / KEYS_PER_CELL));
    return (int) Long.highestOneBit(wanted - 1) << 1; // wanted >= MIN_WIDTH: rounds up to a power of two
  }

  /**
   * A seeded 64-bit hash of the key's characters (FNV-1a from the seed, then a finaliser),
   * independent of the 32-bit {@code String.hashCode} the tables use. Every other method takes
   * this hash, so that a caller can compute it before it takes the table's lock (see
   * {@link PolicyPartitions}, "Where a new key's time goes"); the seed is the table's, chosen at random
   * when the table is created, so that the hash is known before the sketch exists.
   */
  static long hash(long seed, String key) {
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

  /**
   * The first long of the cell of {@code row} for {@code hash}. Each row's index is its own mix of
   * the hash (a SplitMix64 finaliser of the hash plus a per-row odd constant), so that two keys
   * sharing a cell in one row share one in another only by chance ({@code 1/W} a row). Deriving
   * the rows from two halves of the hash ({@code h1 + row * h2}, double hashing) made the rows
   * dependent: two keys that met in two rows met in all four, about 2 in {@code W^2} pairs of keys
   * (one newcomer in 8 million refused behind one refused key at the smallest width) where the
   * class comment's {@code (r/W)^4} needs independent rows.
   */
  int cell(long hash, int row) {
    long h = hash + (row + 1) * 0x9E3779B97F4A7C15L;
    h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
    h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
    h ^= h >>> 31;
    return (row * (mask + 1) + ((int) h & mask)) * stride;
  }

  private boolean expired(int c, long now) {
    return stride == 2 ? cells[c] <= now : cells[c + 2] <= now;
  }

  private static boolean names(long owners, int fp) {
    return (int) owners == fp || (int) (owners >>> 32) == fp;
  }

  /**
   * Reads the cells of {@code hash} without the lock, so that the locked {@link #fold} or
   * {@link #read} that follows finds them in cache: the four cells are four independent cache
   * misses, taken here in parallel and outside the critical section. The values are not to be
   * trusted (a racy read); the answer only keeps the reads from being optimised away.
   */
  long warm(long hash) {
    long[] cs = cells;
    return cs[cell(hash, 0)] ^ cs[cell(hash, 1)] ^ cs[cell(hash, 2)] ^ cs[cell(hash, 3)];
  }

  /**
   * Remembers that the key of {@code hash} had used {@code value} until {@code expiry}. For a
   * self-expiring sketch {@code expiry} is ignored (the value is its expiry).
   */
  void fold(long hash, long value, long expiry, long now) {
    int fp = fingerprint(hash);
    long self = fp & 0xFFFF_FFFFL;
    for (int r = 0; r < ROWS; r++) {
      int c = cell(hash, r);
      boolean dead = expired(c, now);
      long owners = cells[c + 1];
      if (dead || value > cells[c]) {
        cells[c] = value;
        cells[c + 1] = self;
        if (stride == 4) {
          cells[c + 3] = expiry;
        }
      } else if (value == cells[c]) {
        if (!names(owners, fp)) {
          cells[c + 1] = owners << 32 | self; // the older owner moves up, the oldest goes
        }
        if (stride == 4) {
          cells[c + 3] = Math.max(cells[c + 3], expiry);
        }
      } else if (names(owners, fp) && stride == 4) {
        cells[c + 3] = Math.max(cells[c + 3], expiry); // its own earlier use is the larger
      }
      if (stride == 4) {
        cells[c + 2] = dead ? expiry : Math.max(cells[c + 2], expiry);
      }
    }
  }

  /**
   * An upper bound of the use remembered for the key of {@code hash} at {@code now}, or {@code rest} when
   * nothing live is remembered of it (see the class comment: named by a cell, or every cell at
   * least {@code refusing}). For a self-expiring sketch, a TAT after now, or {@code rest}.
   */
  long read(long hash, long now, long rest, long refusing) {
    int fp = fingerprint(hash);
    long min = Long.MAX_VALUE;
    boolean named = false;
    for (int r = 0; r < ROWS; r++) {
      int c = cell(hash, r);
      if (expired(c, now)) {
        return rest; // the key's own use expired no later than this cell
      }
      named |= names(cells[c + 1], fp) && (stride == 2 || cells[c + 3] > now);
      min = Math.min(min, cells[c]);
    }
    return named || min >= refusing ? min : rest;
  }

  /**
   * When the remembered use of the key of {@code hash} stops mattering: the latest expiry among the cells
   * naming it, else the smallest cell expiry. Meaningful only when {@link #read} found something.
   */
  long expiry(long hash) {
    int fp = fingerprint(hash);
    long named = Long.MIN_VALUE;
    long any = Long.MAX_VALUE;
    for (int r = 0; r < ROWS; r++) {
      int c = cell(hash, r);
      long own = stride == 2 ? cells[c] : cells[c + 3];
      if (names(cells[c + 1], fp)) {
        named = Math.max(named, own);
      }
      any = Math.min(any, stride == 2 ? cells[c] : cells[c + 2]);
    }
    return named != Long.MIN_VALUE ? named : any;
  }
}
