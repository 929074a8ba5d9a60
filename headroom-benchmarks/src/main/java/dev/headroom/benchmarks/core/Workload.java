package dev.headroom.benchmarks.core;

import java.util.Random;

/**
 * The keys a benchmark thread asks for: one hot key, or keys drawn from a Zipf distribution
 * (exponent {@link #ZIPF_EXPONENT}) over {@link #KEY_COUNT} keys, precomputed so that drawing costs
 * one array read. Ranks are scrambled over key names so that popular keys are not neighbours.
 */
public final class Workload {

  /** Distinct keys of the many-keys case. */
  public static final int KEY_COUNT = 100_000;

  /** The Zipf exponent: 1.0, the classic web-request popularity skew. */
  public static final double ZIPF_EXPONENT = 1.0;

  /** Precomputed draws per sequence (a power of two). */
  public static final int DRAWS = 1 << 20;

  private Workload() {}

  /** The key names, {@code "client-0"} and so on. */
  public static String[] keyNames(int count) {
    String[] names = new String[count];
    for (int i = 0; i < count; i++) {
      names[i] = "client-" + i;
    }
    return names;
  }

  /** {@link #DRAWS} key indices drawn from Zipf over {@code count} keys; same seed, same draws. */
  public static int[] zipfIndices(int count, long seed) {
    double[] cdf = new double[count];
    double sum = 0;
    for (int r = 0; r < count; r++) {
      sum += 1.0 / Math.pow(r + 1, ZIPF_EXPONENT);
      cdf[r] = sum;
    }
    int[] scramble = new int[count];
    for (int i = 0; i < count; i++) {
      scramble[i] = i;
    }
    Random random = new Random(seed);
    for (int i = count - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = scramble[i];
      scramble[i] = scramble[j];
      scramble[j] = t;
    }
    int[] draws = new int[DRAWS];
    for (int d = 0; d < DRAWS; d++) {
      double u = random.nextDouble() * sum;
      int lo = 0;
      int hi = count - 1;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (cdf[mid] < u) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      draws[d] = scramble[lo];
    }
    return draws;
  }
}
