package dev.headroom.internal;

import java.util.Arrays;

/**
 * Which keys a full table has lately decided from its sketch instead of admitting them: the
 * doorkeeper of the store's admission filter (TinyLFU's, see {@link LocalStore}, "Bounded memory").
 * A key a full store meets for the first time is decided from {@link UseSketch} and recorded
 * here; when it comes back while recorded, it enters the table.
 *
 * <h2>How is this designed, and why?</h2>
 * Two Bloom filters, the current one and the previous one, of {@link #BITS_PER_KEY} bits per key
 * of {@code capacity}. A key is recorded in the current filter; a key is <em>seen</em> when either
 * filter holds it. When the current filter has recorded {@code capacity} keys, it becomes the
 * previous one and the older filter is emptied to become the current one: a key recorded is
 * remembered for at least {@code capacity} and at most {@code 2 x capacity} later records, and the
 * filter's memory is fixed. (TinyLFU's doorkeeper is emptied whole at each reset; keeping the
 * previous half means a key recorded just before a reset is not forgotten at once.)
 *
 * <p>Each key sets {@link #PROBES} bits of one 64-bit word (a blocked Bloom filter: one cache line
 * per filter, read before the table's lock). At {@code capacity} keys, a word holds four keys'
 * bits on average (unevenly: a Poisson number), so a key never recorded is seen by one filter with
 * a chance of about half a percent, less while it fills: measured 1.1% for both filters at the
 * worst moment, when both are about full ({@code DoorkeeperTest}), about half that on average.
 *
 * <p><b>Nothing depends on it for correctness.</b> A key wrongly seen enters the table at once
 * (as every new key did before the filter); a key forgotten is decided from the sketch again.
 * Either way its decision starts from what the sketch remembers of it, under the table's lock.
 *
 * <p>{@link #add} is guarded by the lock of the table it belongs to; {@link #seen} takes no lock
 * and may read a word being written or emptied: a heuristic answer, never a wrong decision.
 */
final class Doorkeeper {

  /** Bits per key of capacity, in each of the two filters. */
  static final int BITS_PER_KEY = 16;

  /** Bits set per key, all in one word. */
  static final int PROBES = 4;

  private final long[][] filters;
  private final int capacity;
  private final int mask;
  private int current; // guarded by the table's lock
  private int recorded; // guarded by the table's lock

  /** A doorkeeper remembering between {@code capacity} and twice as many keys (a power of two, at least 4). */
  Doorkeeper(int capacity) {
    int words = capacity / (Long.SIZE / BITS_PER_KEY);
    this.filters = new long[][] {new long[words], new long[words]};
    this.capacity = capacity;
    this.mask = words - 1;
  }

  /** The word of {@code hash} (a sketch hash, see {@link UseSketch#hash}) and its bits. */
  private static long mix(long hash) {
    long g = hash * 0xD6E8FEB86659FD93L;
    return g ^ (g >>> 29);
  }

  private static long bits(long g) {
    return 1L << g | 1L << (g >>> 6) | 1L << (g >>> 12) | 1L << (g >>> 18); // shifts use the low 6 bits
  }

  private int word(long g) {
    return (int) (g >>> 32) & mask;
  }

  /** Whether the key of {@code hash} was recorded lately (or a false positive). Takes no lock. */
  boolean seen(long hash) {
    long g = mix(hash);
    long b = bits(g);
    int w = word(g);
    return (filters[0][w] & b) == b || (filters[1][w] & b) == b;
  }

  /** Records the key of {@code hash}. Caller holds the table's lock. */
  void add(long hash) {
    long g = mix(hash);
    filters[current][word(g)] |= bits(g);
    if (++recorded >= capacity) {
      current ^= 1;
      Arrays.fill(filters[current], 0L);
      recorded = 0;
    }
  }
}
