package dev.headroom.gateway.internal.admin;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The most frequent keys of a stream in bounded memory: the Space-Saving algorithm (Metwally,
 * Agrawal and El Abbadi, "Efficient Computation of Frequent and Top-k Elements in Data Streams",
 * ICDT 2005).
 *
 * <p>State: at most {@code capacity} monitored keys, each with a count and an error. A monitored
 * key's arrival adds one to its count. An unmonitored key's arrival, when all places are taken,
 * takes the place of the key with the smallest count {@code m}: it starts at {@code m + 1} with
 * error {@code m}, because it may have arrived up to {@code m} times while unmonitored. Hence for
 * every monitored key, {@code count - error <= true count <= count}, and any key whose true count
 * exceeds {@code n / capacity} (n arrivals in all) is monitored: a key flooding the gateway cannot
 * hide among a million others, and a million others cannot grow the memory.
 *
 * <p>The counts sit in a min-heap (an array, with each key's heap position in a map), so the
 * smallest is at the root: an arrival costs one map lookup and at most {@code log2(capacity)}
 * swaps, whether it raises a count or replaces the root.
 *
 * <p>Not thread-safe: {@link UsageBoard} keeps one per event-loop thread and merges them when it
 * is read.
 *
 * @param <K> the key; its {@code equals} and {@code hashCode} identify it
 */
final class HeavyHitters<K> {
  /** A monitored key as seen when read: its count is an upper bound, {@code count - error} a lower one. */
  record Entry<K>(K key, long count, long error) {}

  private final int capacity;
  private final Object[] keys;
  private final long[] counts;
  private final long[] errors;
  private final Map<K, Integer> position;
  private int size;

  HeavyHitters(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity: " + capacity + " is not valid; expected at least 1");
    }
    this.capacity = capacity;
    this.keys = new Object[capacity];
    this.counts = new long[capacity];
    this.errors = new long[capacity];
    this.position = new HashMap<>(capacity * 2);
  }

  /** Counts {@code weight} (at least 1) arrivals of {@code key}. */
  void add(K key, long weight) {
    Integer at = position.get(key);
    if (at != null) {
      counts[at] = saturatedAdd(counts[at], weight);
      siftDown(at);
      return;
    }
    if (size < capacity) {
      int i = size++;
      keys[i] = key;
      counts[i] = weight;
      errors[i] = 0;
      position.put(key, i);
      siftUp(i);
      return;
    }
    // the root holds the smallest count: the newcomer takes its place and inherits it as error
    position.remove(keyAt(0));
    long min = counts[0];
    keys[0] = key;
    errors[0] = min;
    counts[0] = saturatedAdd(min, weight);
    position.put(key, 0);
    siftDown(0);
  }

  /** The monitored keys, in no particular order. */
  List<Entry<K>> entries() {
    List<Entry<K>> out = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      out.add(new Entry<>(keyAt(i), counts[i], errors[i]));
    }
    return out;
  }

  int size() {
    return size;
  }

  @SuppressWarnings("unchecked")
  private K keyAt(int i) {
    return (K) keys[i];
  }

  private void siftUp(int i) {
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      if (counts[parent] <= counts[i]) {
        return;
      }
      swap(i, parent);
      i = parent;
    }
  }

  private void siftDown(int i) {
    while (true) {
      int left = 2 * i + 1;
      if (left >= size) {
        return;
      }
      int right = left + 1;
      int smaller = right < size && counts[right] < counts[left] ? right : left;
      if (counts[i] <= counts[smaller]) {
        return;
      }
      swap(i, smaller);
      i = smaller;
    }
  }

  private void swap(int a, int b) {
    Object k = keys[a];
    keys[a] = keys[b];
    keys[b] = k;
    long c = counts[a];
    counts[a] = counts[b];
    counts[b] = c;
    long e = errors[a];
    errors[a] = errors[b];
    errors[b] = e;
    position.put(keyAt(a), a);
    position.put(keyAt(b), b);
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }
}
