package dev.headroom.redis.internal;

import io.netty.util.internal.ThreadExecutorMap;
import java.util.concurrent.Executor;

/**
 * When a decision's command was first written to the connection: the instant from which the
 * decision deadline counts.
 *
 * <p>Why it exists: under load a command can wait in the store's own queue before Lettuce's I/O
 * thread (one per connection, shared with every caller) writes it to the socket: the I/O thread's
 * task queue, behind the writes of every earlier caller and the replies it has yet to read, on a
 * machine whose cores the gateway's own event loops keep busy. That wait is the client's backlog,
 * not Redis's latency; a deadline counted from the request would let a healthy Redis be blamed for
 * it (headroom-redis README, "Measurements behind the design": where the time went).
 * {@link StampedCommand#encode} marks the stamp on the I/O thread as it encodes the command into
 * the channel, right before the flush.
 *
 * <p>Written once by the I/O thread (the first write: a command Lettuce writes again after a
 * reconnect keeps its first time), read by any thread.
 *
 * <p>Links between stamps never form a chain: a stamp queued behind a call in flight
 * ({@link #queuedBehind}) takes that call's write time over once it is known and drops the link,
 * at the latest when its own command is written. On a hot key every batch's first member queues
 * behind the batch before it; kept, those links grew one per batch for as long as the key stayed
 * busy, and every deadline check walked the whole history (and kept it reachable).
 */
public final class WriteStamp {
  private final long requestedAt;
  private long writtenAt;
  private Executor writer;
  /** Publishes {@link #writtenAt} and {@link #writer}: set after them. */
  private volatile boolean written;
  /** The call this decision queued behind (coalescing), and when it queued; see {@link #queuedBehind}. */
  private volatile WriteStamp behind;
  private long queuedAt;
  /** Once the call behind was written: when this decision counts as written through it, and its writer. */
  private long behindAt;
  private Executor behindWriter;
  /** Publishes {@link #behindAt} and {@link #behindWriter}: set after them, before the link is dropped. */
  private volatile boolean behindResolved;

  /** @param requestedAt {@link System#nanoTime()} when the decision was asked for */
  public WriteStamp(long requestedAt) {
    this.requestedAt = requestedAt;
  }

  /** The command is being written now (first call only counts). */
  void mark() {
    if (!written) {
      writtenAt = System.nanoTime();
      // the connection's event loop (Netty's executor of the thread encoding the command)
      writer = ThreadExecutorMap.currentExecutor();
      written = true;
      resolveBehind(); // the call behind was answered before this one went out: drop the link
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
    return written || resolveBehind();
  }

  /**
   * The event loop that wrote the command, which also reads its reply; null before the write or
   * when the command was not written by a Netty event loop.
   */
  public Executor writer() {
    if (written) {
      return writer;
    }
    return resolveBehind() ? behindWriter : null;
  }

  /** When the command was written ({@link System#nanoTime()}); meaningful once {@link #written()}. */
  public long writtenAt() {
    if (resolveBehind()) {
      return written ? Math.min(behindAt, writtenAt) : behindAt;
    }
    return writtenAt;
  }

  /**
   * Whether the call this decision queued behind has been written; the first time it is seen so,
   * takes its time and writer over and drops the link. Threads that race here compute the same
   * values: a written stamp's time no longer changes (its own later write cannot be earlier than
   * the write of the call it waited behind).
   */
  private boolean resolveBehind() {
    if (behindResolved) {
      return true;
    }
    WriteStamp b = behind;
    if (b == null) {
      return behindResolved; // none, or dropped by a thread that resolved it meanwhile
    }
    if (!b.written()) {
      return false;
    }
    behindAt = Math.max(queuedAt, b.writtenAt());
    behindWriter = b.writer();
    behindResolved = true;
    behind = null;
    return true;
  }
}
