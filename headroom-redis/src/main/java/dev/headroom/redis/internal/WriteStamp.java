package dev.headroom.redis.internal;

/**
 * When a decision's command was first written to the connection: the instant from which the
 * decision deadline counts.
 *
 * <p>Why it exists: under load a command can wait in the store's own queue before Lettuce's I/O
 * thread (one per connection, shared with every caller) writes it to the socket: the I/O thread's
 * task queue, behind the writes of every earlier caller and the replies it has yet to read, on a
 * machine whose cores the gateway's own event loops keep busy. That wait is the client's backlog,
 * not Redis's latency; a deadline counted from the request would let a healthy Redis be blamed for
 * it (see DESIGN.md, "Redis store": where the time went). {@link StampedCommand#encode} marks the
 * stamp on the I/O thread as it encodes the command into the channel, right before the flush.
 *
 * <p>Written once by the I/O thread (the first write: a command Lettuce writes again after a
 * reconnect keeps its first time), read by any thread.
 */
public final class WriteStamp {
  private final long requestedAt;
  private long writtenAt;
  private java.util.concurrent.Executor writer;
  /** Publishes {@link #writtenAt} and {@link #writer}: set after them. */
  private volatile boolean written;
  /** The call this decision queued behind (coalescing), and when it queued; see {@link #queuedBehind}. */
  private volatile WriteStamp behind;
  private long queuedAt;

  /** @param requestedAt {@link System#nanoTime()} when the decision was asked for */
  public WriteStamp(long requestedAt) {
    this.requestedAt = requestedAt;
  }

  /** The command is being written now (first call only counts). */
  void mark() {
    if (!written) {
      writtenAt = System.nanoTime();
      // the connection's event loop (Netty's executor of the thread encoding the command)
      writer = io.netty.util.internal.ThreadExecutorMap.currentExecutor();
      written = true;
    }
  }

  /**
   * The decision queued behind a call in flight on its keys ({@link Coalescer}): it waits on
   * Redis's reply to that call, not on this process, so it counts as written from when that call
   * was written, or from now if it already was; never earlier than now. Before this, a decision
   * that queued behind a call not yet encoded by the I/O thread counted as unwritten until its own
   * batch went out after that reply, and a Redis slower than the write timeout was taken for this
   * process's overload.
   */
  public void queuedBehind(WriteStamp inFlight) {
    queuedAt = System.nanoTime();
    behind = inFlight; // publishes queuedAt
  }

  /** Marks the command written now, for a command sent by a path that cannot stamp it itself. */
  public void markNow() {
    mark();
  }

  /** When the decision was asked for ({@link System#nanoTime()}). */
  public long requestedAt() {
    return requestedAt;
  }

  /** Whether the command has been written to the connection (or the call it queued behind). */
  public boolean written() {
    if (written) {
      return true;
    }
    WriteStamp b = behind;
    return b != null && b.written();
  }

  /**
   * The event loop that wrote the command, which also reads its reply; null before the write or
   * when the command was not written by a Netty event loop.
   */
  public java.util.concurrent.Executor writer() {
    if (written) {
      return writer;
    }
    WriteStamp b = behind;
    return b == null ? null : b.writer();
  }

  /** When the command was written ({@link System#nanoTime()}); meaningful once {@link #written()}. */
  public long writtenAt() {
    WriteStamp b = behind;
    if (b != null && b.written()) {
      long t = Math.max(queuedAt, b.writtenAt());
      return written ? Math.min(t, writtenAt) : t;
    }
    return writtenAt;
  }
}
