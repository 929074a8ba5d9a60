package dev.headroom.internal;

/**
 * The immutable state of a fixed or sliding window key: the index of the current window
 * ({@code floor(now / w)}, windows aligned to the epoch), the units counted in it, and (sliding
 * window only) the units counted in the window before.
 */
public final class WindowState {
  /** The state of a key never seen: window 0, nothing counted. */
  public static final WindowState EMPTY = new WindowState(Long.MIN_VALUE, 0, 0);

  public final long index;
  public final long count;
  public final long previous;

  public WindowState(long index, long count, long previous) {
    this.index = index;
    this.count = count;
    this.previous = previous;
  }

  @Override
  public String toString() {
    return "WindowState{index=" + index + ", count=" + count + ", previous=" + previous + "}";
  }
}
